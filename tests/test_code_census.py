"""The source census (``tools/code_census.py``): where a behaviour lives is told apart into the
places that implement it and those that only call one that does, and status members typed
again as constants and offsets written by hand are found, on a small package written here for
the purpose and on ikstack itself."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("code_census", ROOT / "tools" / "code_census.py")
assert _spec is not None and _spec.loader is not None
cc = importlib.util.module_from_spec(_spec)
sys.modules["code_census"] = cc
_spec.loader.exec_module(cc)

SELECTION = "selection (nearest valid slot)"

MODULES = {
    "__init__.py": "from pkg.pick import nearest as nearest\n",
    "status.py": """
        from enum import IntEnum

        class FooStatus(IntEnum):
            OK = 0
            FAR = 5
            BROKEN = 7
        """,
    # the implementation: the pick written out
    "pick.py": """
        def nearest(D, OK):
            best = -1
            for k in range(D.shape[0]):
                if OK[k] and (best < 0 or D[k] < D[best]):
                    best = k
            return best
        """,
    # callers: through a re-export, a module alias, and a kernel picked as a value
    "drivers.py": """
        import pkg.pick as pk
        from pkg import nearest

        def select_one(D, OK):
            return nearest(D, OK)

        def _select_rows(D, OK):
            return [pk.nearest(d, o) for d, o in zip(D, OK)]

        def select_batch(D, OK, parallel):
            kern = _select_rows if parallel else select_one
            return kern(D, OK)
        """,
    # a second copy under a name that says nothing, and a select_* that reaches no place
    "again.py": """
        CODE_OK = 0
        CODE_BROKEN = 7
        ALONE = 5

        def pick_slot(W, best, k):
            return W.D[0, k] < W.D[0, best]

        def select_mode(name):
            return name.upper()
        """,
    # one member's name and value by chance: not a retyped enum
    "other.py": "FAR = 5\n",
    # offsets into a packed tuple, one used from another module; a slice bound is a count;
    # offsets taken from a layout's definition are not written by hand
    "packed.py": """
        STATE, REP = 7, 8
        SHOWN = 3
        FIRST, LAST = LAYOUT.at["first"], LAYOUT.size - 1

        def rep(b, i):
            return b[REP + 1], b[i, REP], b[:SHOWN], b[FIRST + 1], b[LAST]
        """,
    "reader.py": """
        from pkg.packed import STATE

        def state(b):
            return b[STATE]
        """,
}


def test_implementations_are_told_from_callers_and_retyped_statuses_found(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in MODULES.items():
        (pkg / name).write_text(textwrap.dedent(text))
    c = cc.census(pkg)
    assert sorted(c["implementations"][SELECTION]) == [
        "pkg/again.py:pick_slot",
        "pkg/again.py:select_mode",
        "pkg/pick.py:nearest",
    ]
    assert sorted(c["entry_points"][SELECTION]) == [
        "pkg/drivers.py:_select_rows -> nearest",
        "pkg/drivers.py:select_batch -> _select_rows",
        "pkg/drivers.py:select_one -> nearest",
    ]
    assert c["hand_written_offsets_where"] == ["pkg/packed.py:2 REP", "pkg/packed.py:2 STATE"]
    assert c["status_enums"] == ["pkg/status.py:FooStatus"]
    assert c["status_constants_retyped_where"] == [
        "pkg/again.py:2 CODE_OK = 0 (FooStatus.OK)",
        "pkg/again.py:3 CODE_BROKEN = 7 (FooStatus.BROKEN)",
    ]


def test_ikstack_has_one_nearest_slot_pick_and_one_constraint_row_on_the_cpu():
    c = cc.census()
    impl = c["implementations"]
    cpu = [p for p in impl[SELECTION] if "backends/warp" not in p]
    assert len(cpu) == 1 and cpu[0].startswith("ikstack/ik/analytic/_selection.py:"), cpu
    assert impl["constraint rows"] == ["ikstack/ik/_gate.py:constraints_row"]
    callers = [p for p in c["entry_points"][SELECTION] if "backends/warp" not in p]
    assert len(callers) >= 5, callers  # the batch, single-target and general paths reach it
    # one compiled source of R_t R^T (every kernel's pose residual) and the public NumPy form
    assert impl["FK pose residual"] == [
        "ikstack/spatial/_tuple_math.py:rel_rotation",
        "ikstack/spatial/se3.py:position_rotation_error",
    ]
    residual_callers = c["entry_points"]["FK pose residual"]
    assert "ikstack/ik/_gate.py:pose_residual -> rel_rotation" in residual_callers
    # one compiled rotation vector (the numerical search, the polish and the velocity QP read
    # it) and the public NumPy quaternion
    assert impl["rotation vector (log map)"] == [
        "ikstack/spatial/_tuple_math.py:rotation_vector",
        "ikstack/spatial/so3.py:matrix_to_quat",
    ]
    # packed layouts take their offsets from a definition (Record, Packing, Flat)
    assert c["hand_written_offsets_where"] == []


def test_device_hooks_are_read_from_the_translator_declaration(tmp_path):
    warp = tmp_path / "backends" / "warp"
    warp.mkdir(parents=True)
    (warp / "_translate.py").write_text(
        textwrap.dedent(
            """
            HOOKS: dict = {
                "pkg.src": ("ikstack.backends.warp._steps", {"fk_gate": "x:f ->"}),
            }
            """
        )
    )
    assert cc._declared_hooks(tmp_path) == {"ikstack/backends/warp/_steps.py:fk_gate"}
    hooks = cc.census()["warp_hooks"]
    assert "ikstack/backends/warp/_slot_steps.py:fk_gate" in hooks
    assert not any(h.endswith(":solve") for h in hooks)  # API methods are not hooks
