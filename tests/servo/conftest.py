"""Make the shared servo test helpers importable; skip the servo tests where the C++ module
(ikstack._native, which runs the servo) was not built."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _native_servo_built() -> bool:
    try:
        from ikstack import _native
    except ImportError:
        return False
    return bool(getattr(_native, "HAVE_SERVO", False))


def pytest_collection_modifyitems(config, items):
    if _native_servo_built():
        return
    skip = pytest.mark.skip(reason="the C++ module ikstack._native (with the servo) is not built")
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(item.fspath).resolve().parents:
            item.add_marker(skip)
