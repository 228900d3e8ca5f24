"""Make the shared servo test helpers importable, and run every servo test on both kernels:
the compiled-Python one ("numba") and the C++ library's ("native", module ikstack._native)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: tests about the compiled-Python kernel itself, or that run both kernels on their own
_ONE_KERNEL = {"test_compile_budget.py", "test_native_parity.py"}


def _native_servo_built() -> bool:
    try:
        from ikstack import _native
    except ImportError:
        return False
    return bool(getattr(_native, "HAVE_SERVO", False))


@pytest.fixture(autouse=True, params=["numba", "native"])
def servo_backend(request, monkeypatch):
    """The kernel ``Servo(...)`` builds in this test (through ``IKSTACK_SERVO``)."""
    if request.param == "native":
        if request.path.name in _ONE_KERNEL:
            pytest.skip("a test of one kernel (or of both at once)")
        if not _native_servo_built():
            pytest.skip("the C++ module ikstack._native (with the servo) is not built")
    monkeypatch.setenv("IKSTACK_SERVO", request.param)
    return request.param
