"""Translate the CPU kernels' portable subset into Warp ``@wp.func`` source.

The scalar kernels are written once, as numba ``@njit`` functions, in a portable subset of
Python; the Warp backend's copies are generated from that source by this module and checked
in (``_gen_*.py``), and a test regenerates them and fails when they differ. Regenerate with::

    python -m ikstack.backends.warp._translate

The portable subset (anything else is a :class:`TranslateError` naming the file and line):

- values: ``float`` (float64), ``int``, ``bool``, ``complex``; small fixed vectors as tuples of
  floats (2, 3, 4 entries: ``wp.vec2d`` .. ``wp.vec4d``), a 9-tuple as a row-major 3x3 matrix
  (``wp.mat33d``, indexed by constant flat indices), a tuple of complex numbers as a matrix of
  rows (``(re, im)``), a tuple of 2 to 4 float vectors of one length as a matrix of rows
  (``t[k]`` a vector, ``t[k][j]`` a value); several values returned as a tuple;
- ``x is None`` / ``x is not None`` of a parameter declared optional (``name:type?``): on the
  CPU a None argument picks a branch at compile time (numba types None apart); the device
  always passes the value, so these are ``False`` / ``True`` there;
- module constants (numbers, and NumPy float tables indexed by an int; numbers imported from
  another translated module too), folded with the literals around them in float64 as LLVM
  folds them; a tuple of floats (``_EYE9``) is its literal;
- integers: ``%`` and ``//`` of ints as Python rounds them, signed 64-bit ``i64`` values
  (:mod:`._translate_ints`), unsigned 64-bit ``u64`` ones (:mod:`._translate_u64`);
- arithmetic, comparisons, ``and``/``or``/``not``, ``x if c else y``, ``abs``, ``min``,
  ``max``, ``int``, ``float``, ``complex``, ``.real``/``.imag``, ``math.*`` and the NumPy
  scalar functions numba compiles alike (``np.sqrt``, ``np.arctan2``...; ``np.inf``);
  ``math.isfinite``/``isnan``/``isinf`` (and NumPy's, of a scalar);
- arrays (float64, int, bool) as parameters, read and written in place element by element
  (``A[i, j] = ...``, ``A[i, j] += ...``; ``A.shape[k]``): a Warp array of the same
  dimensions (``wp.array2d(dtype=wp.float64)``...; bools as int32 0/1). A device kernel whose
  threads each own a row of a larger array passes that row, ``A[k]`` (a view: no copy, the
  CPU's indices unchanged);
- records of arrays (:class:`ikstack._records.Record`) as per-thread scratch, declared
  ``rows(NAME)`` (``NAME`` the record's module-level name): the Warp struct ``NAME_ROWS_T``
  of :mod:`ikstack.backends.warp._structs` (made from the same definition, every field one
  dimension larger, a row a thread) followed by the thread's row index ``<param>_row``;
  ``ws.J`` reads that row, ``ws.J[ws_row]`` (a view indexed as on the CPU), and the record
  passes on to another translated function with its row;
- a record passed whole (one for all threads, a kernel's constant data), declared
  ``rec(NAME)``: the Warp struct ``NAME_T`` of :mod:`ikstack.backends.warp._structs`, whose
  float fields ending in (3, 3) are ``wp.mat33d`` and ending in (3,) ``wp.vec3d``: ``ch.R_end``
  is a 3x3 matrix (read as a 9-tuple or by ``[i, j]``), ``_row9(ch.Rs, i)`` /
  ``_row3(ch.ps, i)`` (a row as a tuple) are an element of an array of matrices / vectors
  (the same as the declared types ``am9``, ``av3``), ``m9(x)`` / ``v3(x)`` of a value already
  a matrix / vector are the value, a bool field an int 0/1; a (4, 4) array passed where a
  pose value (``m44``) is read is its entries as a ``wp.mat44d``;
- parameters None at compile time (their branches pruned), tuples of values, device
  contexts, and calls of hooks (CPU steps whose Warp counterparts are written by hand for the
  device's data layout): :mod:`._translate_args`;
- ``if``/``elif``/``else``, ``for ... in range(...)``, ``while``, ``break``, ``continue``,
  ``return`` (a function without a value writes its arrays: a call as a statement);
  assignments (chained, tuple-unpacking into names and array elements, augmented); calls of
  functions of the same module or of another translated module.

The generated code reads like its source: a tuple's entries take the names the source unpacks
them into and a docstring says how the device's parameters differ (:mod:`._translate_names`);
temporaries are made only where needed and named for what they hold.

Parameter types are declared in :data:`SIGNATURES` (numba infers them; Warp needs them),
local types are inferred. Float literals become ``wp.float64`` values (Warp folds arithmetic
on bare literals in float32), ints mixed with floats are converted as Python does, and a
variable first bound inside a branch is declared before it (Warp has no scoping by branch).
This module does not import Warp: it reads and writes source text.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ikstack.backends.warp import _translate_args as args_
from ikstack.backends.warp._translate_body import _FuncWriter
from ikstack.backends.warp._translate_types import (
    _flit,
    _Func,
    _parse_type,
    device_field_type,
    field_type,
    record_struct,
    rows_struct,
)
from ikstack.errors import TranslateError

#: CPU module -> generated Warp module (same package layout under ``backends/warp``)
MODULES = {
    "ikstack.kinematics._kernels": "ikstack.backends.warp._gen_kinematics",
    "ikstack.spatial._tuple_math": "ikstack.backends.warp._gen_tuple_math",
    "ikstack.ik.analytic._sp_kernels": "ikstack.backends.warp._gen_sp",
    "ikstack.ik._gate": "ikstack.backends.warp._gen_gate",
    "ikstack.ik.analytic._families6": "ikstack.backends.warp._gen_families6",
    "ikstack.ik.analytic._locked6": "ikstack.backends.warp._gen_locked6",
    "ikstack.ik.analytic._srs": "ikstack.backends.warp._gen_srs",
    "ikstack.ik.analytic._select": "ikstack.backends.warp._gen_select",
    "ikstack.spatial._dense": "ikstack.backends.warp._gen_dense",
    "ikstack.ik.numerical._splitmix": "ikstack.backends.warp._gen_splitmix",
    "ikstack.ik.numerical._kernels": "ikstack.backends.warp._gen_lm",
    "ikstack.ik.analytic._polish": "ikstack.backends.warp._gen_polish",
    "ikstack.ik.analytic._selection": "ikstack.backends.warp._gen_selection",
    "ikstack.ik.analytic._path": "ikstack.backends.warp._gen_path",
    "ikstack.ik.analytic._constrained": "ikstack.backends.warp._gen_constrained",
}

#: ``module -> {function: "param:type ..."}``; types ``f`` float, ``i`` int, ``b`` bool,
#: ``v2``/``v3``/``v4`` float tuples, ``kvn`` a tuple of ``k`` of them (``4v3``: four
#: 3-vectors), a trailing ``?`` a parameter the CPU may pass as None (``var:i?``: numba
#: compiles the branch its type picks; the device always passes the value),
#: ``m9`` row-major 3x3 9-tuple (or a (3, 3) array read
#: by ``[i, j]``), ``c`` complex, ``m44`` a (4, 4) array as ``wp.mat44d`` (read only),
#: ``a<ndim><f|i|b>`` a float64 / int / bool array, ``av3`` an (n, 3) array as an array of
#: ``wp.vec3d`` (a row is a 3-vector), ``am9`` an (n, 3, 3) array as an array of ``wp.mat33d``,
#: ``rows(NAME)`` a scratch record with a row a thread, ``rec(NAME)`` a record passed whole
#: (see the module). A compiled function not listed here
#: is not translated.
SIGNATURES: dict[str, dict[str, str]] = {
    "ikstack.kinematics._kernels": {
        "joint_step": "R:m9 p:v3 A:m9 b:v3 kind:i qi:f",
        "tool_pose": "R:m9 p:v3 E:m9 f:v3",
        "joint_column": "kind:i z:v3 o:v3 t:v3",
        "_chain_pose": "q:a1f Rs:am9 ps:av3 kinds:a1i",
        "_store": "R:m9 p:v3 out:a2f",
        "_finish": "R:m9 p:v3 R_end:m9 p_end:v3 out:a2f",
        "fk_one": "q:a1f Rs:am9 ps:av3 kinds:a1i R_end:m9 p_end:v3 out:a2f",
        "_jac_into": "q:a1f Rs:am9 ps:av3 kinds:a1i R_end:m9 p_end:v3 J:a2f T:a2f",
        "jac_one": "q:a1f Rs:am9 ps:av3 kinds:a1i R_end:m9 p_end:v3 J:a2f T:a2f",
    },
    "ikstack.spatial._tuple_math": {
        "add": "a:v3 b:v3",
        "sub": "a:v3 b:v3",
        "neg": "a:v3",
        "scale": "a:v3 s:f",
        "dot": "a:v3 b:v3",
        "cross": "a:v3 b:v3",
        "norm": "a:v3",
        "rot_cs": "k:v3 c:f s:f p:v3",
        "rot": "k:v3 t:f p:v3",
        "rotm_cs": "k:v3 c:f s:f",
        "rotm": "k:v3 t:f",
        "mv": "R:m9 p:v3",
        "mtv": "R:m9 p:v3",
        "mm": "A:m9 B:m9",
        "mT": "A:m9",
        "rel_rotation": "Tt:m44 T:m44",
        "axial_sine": "vx:f vy:f vz:f",
        "rotation_angle": "c:f vx:f vy:f vz:f",
        "rotation_vector": "M:m9",
        "fatan2": "y:f x:f",
        "unit_cs": "y:f x:f",
        "wrap": "a:f",
        "any_perp": "k:v3",
        "set4": "t:v4 i:i v:f",
        "_cbrt": "z:c",
        "_cubic_roots": "a:f b:f c:f",
        "_polish": "c4:f c3:f c2:f c1:f c0:f z:c",
        "quartic_roots": "c4:f c3:f c2:f c1:f c0:f",
        "_trig4": "a0:f a1:f a2:f a3:f a4:f t:f",
        "trig_quartic": "a0:f a1:f a2:f a3:f a4:f",
    },
    "ikstack.ik.analytic._sp_kernels": {
        "sp1": "p1:v3 p2:v3 k:v3",
        "sp1_angle": "p1:v3 p2:v3 k:v3",
        "sp1_angle_cs": "p1:v3 p2:v3 k:v3",
        "_sp4_yx": "h:v3 p:v3 k:v3 d:f",
        "sp4": "h:v3 p:v3 k:v3 d:f",
        "sp4_cs": "h:v3 p:v3 k:v3 d:f",
        "sp3": "p1:v3 p2:v3 k:v3 d:f",
        "sp3_cs": "p1:v3 p2:v3 k:v3 d:f",
        "_sp2": "p1:v3 p2:v3 k1:v3 k2:v3 second:b",
        "sp2": "p1:v3 p2:v3 k1:v3 k2:v3",
        "sp2_first": "p1:v3 p2:v3 k1:v3 k2:v3",
        "_sp6_terms": "h:v3 k:v3 p:v3",
        "_sp6_polish": "ta:f tb:f a:v4 b:v4 e:v2",
        "_circle_line": "v0:f v1:f alpha:f",
        "_rank_one": "m:v4",
        "_sp6_rank_one": "a:v4 b:v4 e:v2",
        "sp6": "H:4v3 K:4v3 P:4v3 d1:f d2:f",
        "sp5": "p0:v3 p1:v3 p2:v3 p3:v3 k1:v3 k2:v3 k3:v3",
    },
    "ikstack.ik.analytic._families6": {
        "decompose3": "R:m9 a:v3 b:v3 c:v3 seed_x:f",
        "sp4_tangent": "h:v3 p:v3 k:v3 d:f t:f",
        "sp3_tangent": "p1:v3 p2:v3 k:v3 d:f t:f",
        "sp2_tangent": "p1:v3 p2:v3 k1:v3 k2:v3 t1:f t2:f",
        "_position3": "var:i pW:v3 H:av3 P:av3 seed0:f",
        "_free_joint1": "n:i t0:v4 t1:v4 t2:v4 pW:v3 R06:m9 H:av3 P:av3 seed4:f",
        "_last_meet": "h0:v3 h1:v3 h4:v3 h5:v3 P5:v3 d1:f p16:v3 R06:m9",
        "tp_singular": "hs:tup(v3,v3,v3,v3) Ps:tup(v3,v3,v3,v3,v3) Aw:tup(m9,v3) cs4:tup(f,f) "
        "theta0:f",
        "wrist_members": "R36:m9 h3:v3 h4:v3 h5:v3 seed3:f seed5:f",
        "tp_joint1": "h0:v3 c0:f s0:f R06:m9 p16:v3 P1:v3",
        "tp_pair": "h1:v3 h4:v3 h5:v3 P4:v3 P5:v3 A:m9 w0:v3 c4:f s4:f seed5:f",
        "tp_elbow": "h1:v3 P2:v3 P3:v3 theta:f d:v3",
        "tp_exact": "h1:v3 P2:v3 P3:v3 ls:b phi2:f d:v3",
        "tp_pair_rep": "hs:tup(v3,v3,v3,v3) Ps:tup(v3,v3,v3,v3,v3) Aw:tup(m9,v3) cs4:tup(f,f) "
        "seed5:f",
        "tp_start": "var:i? Rt:m9 pt:v3 H:av3 P:av3 R6T:m9",
        "seed6": "seed:a1f rev:b off:i j:i",
        "put6": "Q:a2f slot:i rev:b off:i j:i v:f",
        # geo: the family's (H, P, R6T); dst: the slots' (Q, V, base, off, rev)
        "start6": "Rt:m9 pt:v3 seed:a1f dst:tup(a2f,a1b,i,i,b)",
        "spherical_wrist": (
            "var:i Rt:m9 pt:v3 geo:tup(av3,av3,m9) seed:a1f dst:tup(a2f,a1b,i,i,b)"
        ),
        "three_parallel": (
            "var:i? Rt:m9 pt:v3 geo:tup(av3,av3,m9) sgn:a1f seed:a1f dst:tup(a2f,a1b,i,i,b)"
        ),
    },
    "ikstack.ik.analytic._locked6": {
        "lock_target": "first:b h:v3 r:v3 M_R:m9 M_p:v3 Rt:m9 pt:v3 v:f",
        "lock_slots": "Q:a2f base:i idx:i v:f",
    },
    "ikstack.ik.analytic._srs": {
        "_frame": "what:v3",
        "_wrist_dir": "Rt:m9 pt:v3 Sp:v3 p7T:v3 R7T:m9",
        "_elbow_frame": "q3:f h3:v3 pS3:v3 p3W:v3 what:v3 e1:v3 e2:v3",
        "_swivel_roots": "what:v3 R0:m9 psi0:f x:v3 y:v3 target:f out:a1f cnt:i",
        "_target_frame": "Rt:m9 pt:v3 arm:rec(SRS_DATA)",
        "seed_swivel": "Rt:m9 pt:v3 arm:rec(SRS_DATA) seed:a1f",
        "fill_slots": "seed:a1f Q:a2f V:a1b k0:i k1:i",
        "srs_slots": "Rt:m9 pt:v3 arm:rec(SRS_DATA) psis:a1f s0:i s1:i seed:a1f Q:a2f V:a1b",
        "arc_midpoints": "Rt:m9 pt:v3 arm:rec(SRS_DATA) bounds:a1f out:a1f at:i",
        "srs_swivels": "Rt:m9 pt:v3 arm:rec(SRS_DATA) seed:a1f bounds:a1f psis:a1f",
    },
    "ikstack.ik.analytic._select": {
        "representative": "q:f seed:f lo:f hi:f",
        "joint_rep": "x:f seed:f lo:f hi:f revolute:b",
        "_limits_row": "q:a1f seed:a1f lo:a1f hi:a1f revolute:a1b W:a1f",
        "_project": "Q:a2f LIM:a1b lo:a1f hi:a1f",
    },
    "ikstack.ik.analytic._selection": {
        "nearest_open": "OK:a1b D:a1f K:i",
        # the full enumeration (the branch-and-bound strategies are the CPU's: None)
        "select_nearest": "Q:a2f D:a1f OK:a1b T:m44 scratch:dev(Polish) "
        "gate:tup(rec(CHAIN),tup(f,f)) polish:tup(i,a1f,rec(SELECT),a1b,a1b)? sph:none tp:none",
        "_finalize_pl": "Q:a2f V:a1b seed:a1f T:m44 chain:rec(CHAIN) sel:rec(SELECT) lazy:b "
        "piters:i? work:tup(a1b,a1b,a1b,a1f,dev(Polish)) polished:a1b",
    },
    "ikstack.ik.analytic._path": {
        "advance": "prev:a1f Q:a2f best:i",
        "may_win": "v:f pl:f wl:f dstar:f",
        "path6": "prev:a1f Q:a2f V:a1b ctx:dev(PathData) n:i",
        "path_srs": "prev:a1f Q:a2f V:a1b ctx:dev(PathData) n:i",
        "path_locked": "grid:a1f li:i wl:f prune:b prev:a1f Q:a2f V:a1b D:a1f "
        "ctx:dev(PathData) n:i",
    },
    "ikstack.spatial._dense": {
        "cholesky_inplace": "A:a2f n:i",
        "cholesky_solve_inplace": "L:a2f n:i b:a1f",
        "cap_step_inplace": "dq:a1f n:i max_step:f",
    },
    "ikstack.ik.numerical._splitmix": {"uniform": "state:u64"},
    "ikstack.ik.numerical._kernels": {
        "_target_key": "key:i64 Tt:m44",
        "_pose_error": "Tt:m44 T:m44 e:a1f",
        "_is_singular": "J:a2f w:a1f Jw:a2f G:a2f L:a2f",
        "_step": "ws:rows(SCRATCH) lam:f lo:a1f hi:a1f active_set:b",
        "_masked_norms": "e:a1f w:a1f",
        "_cost": "e:a1f w:a1f",
        "_failure_code": "violated:b limits:b singular:b",
        # one target's searches; the clock is the device's own (a hook)
        "_solve_one": "Tt:m44 q0:a1f chain:rec(CHAIN) cons:rec(CONSTRAINTS) lm:rec(SETTINGS) "
        "key:i ws:rows(SCRATCH) q_out:a1f",
    },
    "ikstack.ik._gate": {
        "pose_residual": "T:m44 Tt:m44",
        "fk_error_one": "T:m44 Tt:m44",
        "constraints_row": "q:a1f qidx:a2i qcoef:a4f A:a2f b:a1f",
        "constraints_slots": "Q:a2f qidx:a2i qcoef:a4f A:a2f b:a1f CON:a1b",
    },
    "ikstack.ik.analytic._constrained": {
        "failure_code": "fk_any:b fk_lim:b fk_lim_con:b",
        "row_failure": "FK:a1b LIM:a1b CON:a1b K:i",
        "_to_check": "FK:a1b LIM:a1b CON:a1b",
        "_breaks": "OK:a1b CON:a1b K:i",
        "constraints_all": "cons:rec(CONSTRAINTS) Q:a2f CON:a1b",
        # row: (Q, V, seed, T); records: (chain, sel, cons); flags: (polished, CON, DROP)
        "constrain_row": "row:tup(a2f,a1b,a1f,m44) "
        "records:tup(rec(CHAIN),rec(SELECT),rec(CONSTRAINTS)) lazy:b piters:i? "
        "work:tup(a1b,a1b,a1b,a1f,dev(Polish)) flags:tup(a1b,a1b,a1b) at:i",
    },
    "ikstack.ik.analytic._polish": {
        "_err6": "Tq:m44 Tt:m44 e:a1f",
        "_converged": "e:a1f ptol:f rtol:f",
        "_gn_step": "J:a2f e:a1f A:a2f dq:a1f max_dq:f",
        "polish_into": (
            "q:a1f Tt:m44 chain:rec(CHAIN) iters:i max_dq:f ptol:f rtol:f ws:rows(POLISH_WORK)"
        ),
    },
}

#: ``module -> (Warp module, {function: "param:type ... -> type ..."})``: CPU functions a
#: translated function calls whose Warp counterparts are written by hand in that Warp module
#: (steps that need the device's own data layout), with its ``dev(NAME)`` context structs
#: (see :mod:`._translate_args`)
HOOKS: dict[str, tuple[str, dict[str, str]]] = {
    "ikstack.ik.analytic._selection": (
        "ikstack.backends.warp._slot_steps",
        {
            "fk_gate": "chain:rec(CHAIN) Q:a2f k:i T:m44 scratch:dev(Polish) -> f f",
            "polish_slot": "Q:a2f k:i T:m44 chain:rec(CHAIN) piters:i max_dq:f ptol:f rtol:f "
            "scratch:dev(Polish) ->",
        },
    ),
    "ikstack.ik.analytic._path": (
        "ikstack.backends.warp._path_steps",
        {
            "slots6": "ctx:dev(PathData) i:i prev:a1f Q:a2f V:a1b ->",
            "slots_srs": "ctx:dev(PathData) i:i prev:a1f Q:a2f V:a1b ->",
            "slots_lock": "ctx:dev(PathData) i:i vals:a1f s0:i s1:i slot:i prev:a1f Q:a2f V:a1b ->",
            "gate_window": "Q:a2f V:a1b prev:a1f ctx:dev(PathData) i:i k0:i k1:i -> i",
            "gate_frame": "Q:a2f V:a1b prev:a1f ctx:dev(PathData) i:i -> i i",
            "finish_frame": "Q:a2f prev:a1f ctx:dev(PathData) i:i best:i code:i -> i",
        },
    ),
    "ikstack.ik.numerical._kernels": (
        "ikstack.backends.warp._lm_steps",
        {"_now": "-> f"},
    ),
    "ikstack.ik.analytic._constrained": ("ikstack.backends.warp._slot_steps", {}),
}

PRIMS = "ikstack.backends.warp._prims"
STRUCTS = "ikstack.backends.warp._structs"


@dataclass
class _Module:
    name: str
    path: Path
    tree: ast.Module
    module: Any
    consts: dict[str, Any] = field(default_factory=dict)  # name -> value
    tuples: dict[str, tuple] = field(default_factory=dict)  # name -> tuple of numbers
    imports: dict[str, str] = field(default_factory=dict)  # name -> source module
    funcs: dict[str, _Func] = field(default_factory=dict)


# ----------------------------------------------------------------------------- translator
class Translator:
    """Translates the modules of :data:`MODULES`, each after those it imports from."""

    def __init__(
        self,
        signatures: dict[str, dict[str, str]] | None = None,
        modules: dict[str, str] | None = None,
        records: dict[str, Any] | None = None,
        hooks: dict[str, tuple[str, dict[str, str]]] | None = None,
    ) -> None:
        self.signatures = SIGNATURES if signatures is None else signatures
        self.modules = MODULES if modules is None else modules
        self.hooks = HOOKS if hooks is None else hooks
        #: record definitions by name where a module is given as source (tests)
        self.records = records or {}
        self.done: dict[str, _Module] = {}

    def record_fields(self, m: _Module, name: str, device: bool = False) -> dict[str, Any]:
        """``{field: subset type}`` of the record ``name`` (a module-level
        :class:`~ikstack._records.Record` of ``m``, or one it imports); ``device``: as the
        fields of the record's Warp struct (:func:`._translate_expr.device_field_type`)."""
        rec = getattr(m.module, name, None) if m.module is not None else self.records.get(name)
        fields = getattr(rec, "fields", None)
        if fields is None:
            raise TranslateError(f"{m.path}: {name} is not a record of this module")
        ftype = device_field_type if device else field_type
        return {f: ftype(dtype, shape) for f, dtype, shape in fields}

    def hooks_of(self, m: _Module) -> dict[str, str]:
        """``{function: declaration}`` of the hooks module ``m``'s functions may call."""
        return self.hooks.get(m.name, ("", {}))[1]

    # -- modules
    def load(self, name: str, source: str | None = None) -> _Module:
        mod = importlib.import_module(name) if source is None else None
        path = Path(inspect.getfile(mod)) if mod is not None else Path(f"<{name}>")
        text = path.read_text() if source is None else source
        m = _Module(name, path, ast.parse(text), mod)
        for node in m.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in self.modules:
                for a in node.names:
                    nm = a.asname or a.name
                    val = getattr(importlib.import_module(node.module), a.name, None)
                    if isinstance(val, (int, float)) and not isinstance(val, bool):
                        m.consts[nm] = val  # a number from another translated module
                    else:
                        m.imports[nm] = node.module
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                tgt = node.targets[0]
                names = (
                    [tgt]
                    if isinstance(tgt, ast.Name)
                    else (tgt.elts if isinstance(tgt, ast.Tuple) else [])
                )
                for i, t in enumerate(names):
                    if not isinstance(t, ast.Name):
                        continue
                    nm = t.id
                    if mod is not None:
                        val = getattr(mod, nm, None)
                    elif isinstance(tgt, ast.Name):
                        val = self._literal(node.value)
                    else:
                        val = (self._literal(node.value) or [None] * len(names))[i]
                    if isinstance(val, (bool, int, float)) or (
                        isinstance(val, np.ndarray) and val.ndim == 1 and val.dtype == np.float64
                    ):
                        m.consts[nm] = val
                    elif isinstance(val, tuple) and _number_tuple(val):
                        m.tuples[nm] = val
        return m

    @staticmethod
    def _literal(node: ast.expr) -> Any:
        try:
            return ast.literal_eval(node)
        except ValueError:
            return None

    def translate(self, name: str, source: str | None = None) -> str:
        """The generated Warp module for CPU module ``name`` (its source text)."""
        m = self.load(name, source)
        for dep in sorted(set(m.imports.values())):
            if dep not in self.done and dep != name:
                self.translate(dep)
        sigs = self.signatures.get(name, {})
        out: list[str] = []
        used_consts: set[str] = set()
        used_imports: set[str] = set()
        used_structs: set[str] = set()
        used_hooks: set[str] = set()
        for node in _callees_first(
            [n for n in m.tree.body if isinstance(n, ast.FunctionDef) and n.name in sigs]
        ):
            decl = [p.split(":") for p in sigs[node.name].split()]
            params = [(nm, _parse_type(t.rstrip("?"))) for nm, t in decl]
            for _, t in params:
                if isinstance(t, tuple) and t[0] == "rows":
                    self.record_fields(m, t[1])  # it must exist
                    used_structs.add(rows_struct(t[1]))
                for rec in args_.named(t, "rec"):
                    self.record_fields(m, rec)  # it must exist
                    used_structs.add(record_struct(rec))
                used_hooks |= args_.named(t, "dev")
            if [a.arg for a in node.args.args] != [p for p, _ in params]:
                raise TranslateError(
                    f"{m.path}:{node.lineno}: {node.name}'s parameters differ from its "
                    "declared signature"
                )
            fn = _Func(node.name, params, optional=frozenset(n for n, t in decl if t[-1] == "?"))
            w = _FuncWriter(self, m, fn)
            out.append(w.write(node))
            used_consts |= w.used_consts
            used_imports |= w.used_imports
            used_hooks |= w.used_hooks
            m.funcs[node.name] = fn
        self.done[name] = m
        head = self._header(m, used_consts, used_imports, used_structs, used_hooks)
        return head + "\n\n".join(out)

    def _header(
        self,
        m: _Module,
        consts: set[str],
        imports: set[str],
        structs: Collection[str] = (),
        hooks: Collection[str] = (),
    ) -> str:
        rel = m.name.replace(".", "/") + ".py"
        lines = [
            "# mypy: ignore-errors",
            "# ruff: noqa",
            f'"""GENERATED from ``src/{rel}`` by :mod:`ikstack.backends.warp._translate`:',
            "do not edit; edit the CPU source and run"
            " ``python -m ikstack.backends.warp._translate``",
            '(a test fails when this file and its source disagree)."""',
            "",
            "import warp as wp",
            "",
            f"from {PRIMS} import *  # noqa: F403",
        ]
        by_mod: dict[str, list[str]] = {}
        for nm in sorted(imports):
            by_mod.setdefault(self.modules[m.imports[nm]], []).append(nm)
        if structs:
            by_mod[STRUCTS] = sorted(structs)
        if hooks:
            by_mod[self.hooks[m.name][0]] = sorted(hooks)
        for gm, names in sorted(by_mod.items()):
            lines.append(f"from {gm} import {', '.join(names)}")
        lines.append("")
        for nm in sorted(consts):
            v = m.consts[nm]
            if isinstance(v, np.ndarray):
                vals = ", ".join(f"F({float(x)!r})" for x in v)
                lines.append(
                    f"{nm} = wp.constant(wp.types.vector(length={len(v)}, "
                    f"dtype=wp.float64)({vals}))"
                )
            elif isinstance(v, bool):
                lines.append(f"{nm} = wp.constant({v!r})")
            elif isinstance(v, int):
                lines.append(f"{nm} = wp.constant({v!r})")
            else:
                lines.append(f"{nm} = wp.constant({_flit(float(v))})")
        return "\n".join(lines) + "\n\n\n"

    def func_type(self, m: _Module, name: str) -> _Func | None:
        if name in m.funcs:
            return m.funcs[name]
        spec = self.hooks_of(m).get(name)  # a hook, even where the CPU imports it
        if spec is not None:
            return args_.hook_func(spec, name, _parse_type, _Func)
        if name in m.imports and m.imports[name] in self.done:
            return self.done[m.imports[name]].funcs.get(name)
        return None


def _number_tuple(val: Any) -> bool:
    """Whether a module constant is a tuple of floats (used as its literal: a small vector or
    a 9-tuple matrix)."""
    return (
        isinstance(val, tuple) and len(val) in (2, 3, 4, 9) and all(type(x) is float for x in val)
    )


def _callees_first(defs: list[ast.FunctionDef]) -> list[ast.FunctionDef]:
    """The functions in source order, except that each comes after the functions of the same
    module it calls (a Warp function is looked up when it is defined)."""
    by_name = {d.name: d for d in defs}
    out: list[ast.FunctionDef] = []
    seen: set[str] = set()

    def visit(d: ast.FunctionDef) -> None:
        if d.name in seen:
            return
        seen.add(d.name)
        for n in ast.walk(d):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in by_name:
                visit(by_name[n.func.id])
        out.append(d)

    for d in defs:
        visit(d)
    return out


# ----------------------------------------------------------------------------- files
def generated_path(gen_module: str) -> Path:
    """Where the generated module lives in the source tree."""
    root = Path(__file__).resolve().parents[3]
    return root / (gen_module.replace(".", "/") + ".py")


def generate_all() -> dict[Path, str]:
    """``{path: text}`` of every generated module, from the current CPU sources."""
    tr = Translator()
    return {generated_path(gm): tr.translate(cm) for cm, gm in MODULES.items()}


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = []
    for path, text in generate_all().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not check:
            path.write_text(text)
            print(f"wrote {path}")
    if check and stale:
        print("stale: " + ", ".join(str(p) for p in stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
