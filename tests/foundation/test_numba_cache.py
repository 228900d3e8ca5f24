"""A cache file of an ikstack kernel that names a type gone since it was written (a record
renamed or moved by an upgrade) or that is damaged makes the kernel compile again; it does not
raise out of the user's call."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

# a small cached kernel of ikstack (one scalar function, compiles in about a second)
CALL = (
    "from ikstack.spatial._tuple_math import wrap\n"
    "import math\n"
    "v = wrap(7.0)\n"
    "assert abs(v - (7.0 - 2 * math.pi)) < 1e-12, v\n"
    "print('ok')\n"
)


def _run(cache_dir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), IKSTACK_COMPILE_NOTICE="0")
    return subprocess.run(
        [sys.executable, "-c", CALL], env=env, capture_output=True, text=True, timeout=300
    )


def _index(cache_dir: Path) -> Path:
    found = sorted(cache_dir.rglob("_tuple_math.wrap-*.nbi"))
    assert len(found) == 1, found
    return found[0]


def _damage_type(path: Path) -> None:
    """Keep the index's numba version, replace its payload by a pickle naming a class that does
    not exist (what an index written before a record was renamed reads as)."""
    with open(path, "rb") as f:
        version = pickle.load(f)
    with open(path, "wb") as f:
        pickle.dump(version, f)
        f.write(b"cikstack.errors\nRecordRenamedSinceThisIndexWasWritten\n.")


def _damage_bytes(path: Path) -> None:
    with open(path, "rb") as f:
        version = pickle.load(f)
        rest = f.read()
    with open(path, "wb") as f:
        pickle.dump(version, f)
        f.write(rest[: len(rest) // 2])  # a write cut short


@pytest.mark.parametrize("damage", [_damage_type, _damage_bytes], ids=["gone_type", "cut_short"])
def test_a_stale_or_damaged_index_compiles_again(tmp_path, damage):
    first = _run(tmp_path)
    assert first.returncode == 0 and "ok" in first.stdout, first.stderr
    index = _index(tmp_path)
    damage(index)
    with pytest.raises((AttributeError, pickle.UnpicklingError, EOFError)):  # numba's read
        with open(index, "rb") as f:
            pickle.load(f)
            pickle.loads(f.read())
    second = _run(tmp_path)
    assert second.returncode == 0 and "ok" in second.stdout, second.stderr
    # the kernel was cached again: the index reads
    with open(_index(tmp_path), "rb") as f:
        pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    assert overloads
    third = _run(tmp_path)
    assert third.returncode == 0 and "ok" in third.stdout, third.stderr
