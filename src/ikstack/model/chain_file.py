"""The chain description file: a plain, line-oriented, versioned text a C++ program reads with no
library (``ikstack-chain 1``; the format is documented in ``docs/chain-file.md``).

Every number is written with 17 significant digits, so reading a file back gives the very same
float64 values: ``read_chain_file(write_chain_file(chain))`` equals ``chain`` field for field.
Lines (after the header, any order; ``#`` starts a comment line; blank lines are ignored)::

    ikstack-chain 1
    name <text>                     (optional; the rest of the line)
    source <text>                   (optional)
    note <text>                     (repeatable)
    base <link>
    tip <link>
    role arm|gripper
    margin <kinematic margin>
    joint <name> <type> <link> <x y z> <r00 r01 r02 r10 r11 r12 r20 r21 r22> <ax ay az>
          <lower> <upper> <velocity> <acceleration> <jerk>      (one line per joint, in order)
    tip_transform <x y z> <r00 .. r22>
    tcp <name> <x y z> <r00 .. r22>  (optional)
    constraint linear <name> <a_1 .. a_dof> <b>                 (one line per row)
    constraint quadrant <name> <i> <j> 4 x (<i_nonneg> <j_nonneg> <a0> <a1> <a2> <upper>)
          [description]
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import numpy as np

from ikstack.errors import ChainFileError, IKStackError, InputError, StorageError
from ikstack.model.chain import Chain, ChainRole, JointType
from ikstack.model.constraints import (
    JointConstraint,
    LinearJointConstraint,
    QuadrantPolynomialConstraint,
    QuadrantRow,
)

#: the format version this module writes and reads
VERSION = 1
HEADER = "ikstack-chain"
#: file suffixes of other formats, refused as an output name to avoid a misleading file
OTHER_FORMATS = (".json", ".yaml", ".yml", ".urdf", ".xml", ".mjcf")
_TRANSFORM_FIELDS = ("x", "y", "z", "r00", "r01", "r02", "r10", "r11", "r12", "r20", "r21", "r22")
_TYPES = {
    "revolute": JointType.REVOLUTE,
    "continuous": JointType.CONTINUOUS,
    "prismatic": JointType.PRISMATIC,
}
_KEYWORDS = "name, source, note, base, tip, role, margin, joint, tip_transform, tcp or constraint"


def _g(v: float) -> str:
    return format(float(v), ".17g")


def _transform(T: np.ndarray) -> str:
    return " ".join(
        [_g(T[0, 3]), _g(T[1, 3]), _g(T[2, 3])] + [_g(T[r, c]) for r in range(3) for c in range(3)]
    )


def _token(s: str, what: str) -> str:
    if not s or any(ch.isspace() for ch in s) or s.startswith("#"):
        raise InputError(
            f"{what} {s!r} cannot be written to a chain file: names must be "
            "non-empty, without whitespace and not start with '#'"
        )
    return s


def _text(s: str, what: str) -> str:
    if "\n" in s or "\r" in s:
        raise InputError(f"{what} contains a line break; a chain file cannot hold it")
    return s.strip()


def chain_to_text(chain: Chain) -> str:
    """The chain as chain-file text (see the module docstring).

    Raises:
        InputError: a name holds whitespace, or a constraint is of a kind the file cannot hold.
    """
    out = [f"{HEADER} {VERSION}"]
    if chain.name:
        out.append(f"name {_text(chain.name, 'the chain name')}")
    if chain.source:
        out.append(f"source {_text(chain.source, 'the source')}")
    out += [f"note {_text(n, 'a note')}" for n in chain.notes]
    out.append(f"base {_token(chain.base, 'the base link')}")
    out.append(f"tip {_token(chain.tip, 'the tip link')}")
    out.append(f"role {chain.role.value}")
    out.append(f"margin {_g(chain.kinematic_margin)}")
    for i in range(chain.dof):
        name = _token(chain.joint_names[i], "joint name")
        link = _token(chain.link_names[i], f"the link of joint {name!r}")
        ax = chain.axes[i]
        out.append(
            " ".join(
                [
                    "joint",
                    name,
                    chain.joint_types[i].name.lower(),
                    link,
                    _transform(chain.origins[i]),
                    _g(ax[0]),
                    _g(ax[1]),
                    _g(ax[2]),
                    _g(chain.lower[i]),
                    _g(chain.upper[i]),
                    _g(chain.velocity_limits[i]),
                    _g(chain.acceleration_limits[i]),
                    _g(chain.jerk_limits[i]),
                ]
            )
        )
    out.append(f"tip_transform {_transform(chain.T_last_tip)}")
    if chain.tcp_name:
        out.append(f"tcp {_token(chain.tcp_name, 'the TCP name')} {_transform(chain.T_tip_tcp)}")
    for c in chain.constraints:
        cname = _token(c.name, "constraint name")
        if isinstance(c, LinearJointConstraint):
            for r in range(c.num_rows):
                out.append(
                    " ".join(["constraint linear", cname, *(_g(a) for a in c.A[r]), _g(c.b[r])])
                )
        elif isinstance(c, QuadrantPolynomialConstraint):
            parts = ["constraint quadrant", cname, str(c.joint_i), str(c.joint_j)]
            for row in c.rows:
                parts += [
                    str(int(row.i_nonneg)),
                    str(int(row.j_nonneg)),
                    _g(row.a0),
                    _g(row.a1),
                    _g(row.a2),
                    str(int(row.upper)),
                ]
            desc = _text(c.description, f"the description of constraint {cname!r}")
            if desc:
                parts.append(desc)
            out.append(" ".join(parts))
        else:
            raise InputError(
                f"constraint {c.name!r} of type {type(c).__name__} cannot be written "
                "to a chain file: only linear and quadrant-polynomial rows"
            )
    return "\n".join(out) + "\n"


def write_chain_file(chain: Chain, path: str | os.PathLike[str]) -> Path:
    """Write ``chain`` to ``path`` atomically (a temporary file renamed into place).

    Raises:
        InputError: the path names another format (.json, .yaml, .urdf, ...), or the chain
            holds something the file cannot (see :func:`chain_to_text`).
        StorageError: the file cannot be written (nothing half-written is left).
    """
    target = Path(path)
    if target.suffix.lower() in OTHER_FORMATS:
        raise InputError(
            f"{target}: a chain file is the '{HEADER} {VERSION}' text format, not "
            f"{target.suffix}; name it *.chain (or *.txt)"
        )
    text = chain_to_text(chain)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise StorageError(target, "write", exc.strerror or str(exc), exc.errno) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise StorageError(target, "write", exc.strerror or str(exc), exc.errno) from None
    return target


class _Line:
    def __init__(self, origin: str, number: int, raw: str):
        self.origin = origin
        self.number = number
        self.raw = raw
        self.tokens = raw.split()

    def fail(self, field: str, problem: str) -> ChainFileError:
        return ChainFileError(self.origin, self.number, field, problem)

    def number_at(self, k: int, field: str, who: str = "", finite: bool = False) -> float:
        if k >= len(self.tokens):
            raise self.fail(field, f"{who}missing value")
        t = self.tokens[k]
        try:
            v = float(t)
        except ValueError:
            raise self.fail(field, f"{who}expected a number, got {t!r}") from None
        if math.isnan(v):
            raise self.fail(field, f"{who}NaN is not allowed")
        if finite and not math.isfinite(v):
            raise self.fail(field, f"{who}must be finite, got {t!r}")
        return v

    def flag_at(self, k: int, field: str, who: str) -> bool:
        t = self.tokens[k]
        if t not in ("0", "1"):
            raise self.fail(field, f"{who}expected 0 or 1, got {t!r}")
        return t == "1"

    def index_at(self, k: int, field: str, who: str, dof: int) -> int:
        t = self.tokens[k]
        try:
            v = int(t)
        except ValueError:
            raise self.fail(field, f"{who}expected a joint index, got {t!r}") from None
        if not 0 <= v < dof:
            raise self.fail(
                field, f"{who}joint index {t} does not exist; the chain has {dof} joints"
            )
        return v

    def transform_at(self, k: int, prefix: str, who: str) -> np.ndarray:
        vals = [
            self.number_at(k + f, prefix + name, who, finite=True)
            for f, name in enumerate(_TRANSFORM_FIELDS)
        ]
        T = np.eye(4)
        T[:3, 3] = vals[:3]
        T[:3, :3] = np.reshape(vals[3:], (3, 3))
        R = T[:3, :3]
        if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-6 or np.linalg.det(R) < 0:
            raise self.fail(
                prefix + "r00",
                f"{who}the rotation r00..r22 is not orthonormal with determinant +1 (within 1e-6)",
            )
        return T

    def rest(self, k: int) -> str:
        """The raw text from token ``k`` on (stripped), or ''."""
        if k >= len(self.tokens):
            return ""
        parts = self.raw.split(None, k)
        return parts[k].strip() if len(parts) > k else ""

    def need(self, count: int, what: str) -> None:
        if len(self.tokens) < count:
            raise self.fail(
                "",
                f"{self.tokens[0]!r} needs {count - 1} values ({what}); got {len(self.tokens) - 1}",
            )


def chain_from_text(text: str, origin: str = "<string>") -> Chain:
    """Parse chain-file text; ``origin`` names it in errors.

    Raises:
        ChainFileError: naming the file, the line and the field of the first problem.
    """
    lines = []
    last = 0
    for no, raw in enumerate(text.splitlines(), start=1):
        last = no
        ln = _Line(origin, no, raw)
        if ln.tokens and not ln.tokens[0].startswith("#"):
            lines.append(ln)
    if not lines:
        raise ChainFileError(origin, 1, "", f"empty file; expected '{HEADER} {VERSION}'")
    head = lines[0]
    if head.tokens[0] != HEADER:
        raise head.fail(
            "header", f"expected '{HEADER} {VERSION}' as the first line, got {head.raw.strip()!r}"
        )
    if len(head.tokens) != 2:
        raise head.fail("version", f"expected '{HEADER} <version>'")
    if head.tokens[1] != str(VERSION):
        raise head.fail(
            "version",
            f"unsupported version {head.tokens[1]!r}; this reader knows version {VERSION}",
        )
    dof = sum(1 for ln in lines[1:] if ln.tokens[0] == "joint")
    fields: dict[str, object] = {
        "name": "",
        "source": "",
        "base": "base",
        "tip": "tip",
        "role": "arm",
        "margin": 0.0,
    }
    notes: list[str] = []
    joints: list[tuple[str, JointType, str, np.ndarray, np.ndarray, list[float]]] = []
    tip_T: np.ndarray | None = None
    tcp: tuple[str, np.ndarray] | None = None
    constraints: list[JointConstraint] = []
    # consecutive 'constraint linear' lines with one name form one constraint
    lin_rows: list[tuple[str, list[float], float]] = []
    seen: set[str] = set()
    last_linear = -10

    def flush_linear() -> None:
        if lin_rows:
            constraints.append(
                LinearJointConstraint(
                    np.array([r[1] for r in lin_rows]),
                    np.array([r[2] for r in lin_rows]),
                    name=lin_rows[0][0],
                )
            )
            lin_rows.clear()

    for idx, ln in enumerate(lines[1:], start=1):
        key = ln.tokens[0]
        if key in ("name", "source", "base", "tip", "role", "margin", "tip_transform", "tcp"):
            if key in seen:
                raise ln.fail(key, f"{key!r} given twice")
            seen.add(key)
        if key != "constraint":
            flush_linear()
        if key in ("name", "source"):
            fields[key] = ln.rest(1)
        elif key == "note":
            notes.append(ln.rest(1))
        elif key in ("base", "tip", "role"):
            if len(ln.tokens) != 2:
                raise ln.fail(key, f"{key!r} takes one name")
            if key == "role" and ln.tokens[1] not in ("arm", "gripper"):
                raise ln.fail("role", f"expected 'arm' or 'gripper', got {ln.tokens[1]!r}")
            fields[key] = ln.tokens[1]
        elif key == "margin":
            ln.need(2, "the kinematic margin")
            v = ln.number_at(1, "margin", finite=True)
            if v < 0:
                raise ln.fail("margin", f"must be >= 0, got {ln.tokens[1]!r}")
            fields["margin"] = v
        elif key == "joint":
            j = _joint(ln)
            if any(j[0] == other[0] for other in joints):
                raise ln.fail("name", f"joint {j[0]!r} is named twice")
            joints.append(j)
        elif key == "tip_transform":
            ln.need(13, "x y z r00..r22")
            if len(ln.tokens) > 13:
                raise ln.fail("", "'tip_transform' takes 12 values")
            tip_T = ln.transform_at(1, "", "tip_transform: ")
        elif key == "tcp":
            ln.need(14, "name x y z r00..r22")
            if len(ln.tokens) > 14:
                raise ln.fail("", "'tcp' takes a name and 12 values")
            tcp = (ln.tokens[1], ln.transform_at(2, "", "tcp: "))
        elif key == "constraint":
            if len(ln.tokens) < 3:
                raise ln.fail("kind", "expected 'constraint linear|quadrant <name> ...'")
            kind, cname = ln.tokens[1], ln.tokens[2]
            who = f"constraint {cname!r}: "
            if kind == "linear":
                if len(ln.tokens) != 3 + dof + 1:
                    raise ln.fail(
                        "",
                        f"{who}a linear row has {dof} coefficients (one per joint) "
                        f"and b; got {len(ln.tokens) - 3} values",
                    )
                if lin_rows and (lin_rows[0][0] != cname or last_linear + 1 != idx):
                    flush_linear()
                a = [ln.number_at(3 + k, f"a{k}", who, finite=True) for k in range(dof)]
                lin_rows.append((cname, a, ln.number_at(3 + dof, "b", who, finite=True)))
                last_linear = idx
            elif kind == "quadrant":
                flush_linear()
                constraints.append(_quadrant(ln, cname, who, dof))
            else:
                raise ln.fail(
                    "kind", f"unknown constraint kind {kind!r}; expected 'linear' or 'quadrant'"
                )
        else:
            raise ln.fail("keyword", f"unknown keyword {key!r}; expected {_KEYWORDS}")
    flush_linear()
    if not joints:
        raise ChainFileError(origin, last, "joint", "the file has no 'joint' lines")
    if tip_T is None:
        raise ChainFileError(origin, last, "tip_transform", "the file has no 'tip_transform' line")
    try:
        return Chain(
            joint_names=tuple(j[0] for j in joints),
            joint_types=tuple(j[1] for j in joints),
            axes=np.array([j[4] for j in joints]),
            origins=np.array([j[3] for j in joints]),
            T_last_tip=tip_T,
            lower=np.array([j[5][0] for j in joints]),
            upper=np.array([j[5][1] for j in joints]),
            velocity_limits=np.array([j[5][2] for j in joints]),
            acceleration_limits=np.array([j[5][3] for j in joints]),
            jerk_limits=np.array([j[5][4] for j in joints]),
            base=str(fields["base"]),
            tip=str(fields["tip"]),
            link_names=tuple(j[2] for j in joints),
            T_tip_tcp=np.eye(4) if tcp is None else tcp[1],
            tcp_name=None if tcp is None else tcp[0],
            constraints=tuple(constraints),
            kinematic_margin=float(fields["margin"]),  # type: ignore[arg-type]
            role=ChainRole(fields["role"]),
            name=str(fields["name"]),
            source=str(fields["source"]),
            notes=tuple(notes),
        )
    except IKStackError as exc:
        raise ChainFileError(origin, last, "", str(exc)) from None


def _joint(ln: _Line) -> tuple[str, JointType, str, np.ndarray, np.ndarray, list[float]]:
    if len(ln.tokens) != 24:
        who = f"joint {ln.tokens[1]!r}: " if len(ln.tokens) > 1 else ""
        raise ln.fail(
            "",
            f"{who}a joint line has 23 fields (name type link x y z r00..r22 ax ay "
            f"az lower upper velocity acceleration jerk); got {len(ln.tokens) - 1}",
        )
    name = ln.tokens[1]
    who = f"joint {name!r}: "
    t = ln.tokens[2]
    if t not in _TYPES:
        raise ln.fail("type", f"{who}expected revolute, continuous or prismatic, got {t!r}")
    origin = ln.transform_at(4, "origin.", who)
    axis = np.array(
        [ln.number_at(16 + k, f"axis.{c}", who, finite=True) for k, c in enumerate("xyz")]
    )
    if np.linalg.norm(axis) < 1e-9:
        raise ln.fail("axis.x", f"{who}the axis is zero")
    lo = ln.number_at(19, "lower", who)
    hi = ln.number_at(20, "upper", who)
    if lo > hi:
        raise ln.fail("upper", f"{who}upper < lower")
    rates = []
    for k, field in enumerate(("velocity", "acceleration", "jerk")):
        v = ln.number_at(21 + k, field, who)
        if not v > 0:
            raise ln.fail(
                field, f"{who}must be positive (inf for unknown), got {ln.tokens[21 + k]!r}"
            )
        rates.append(v)
    return name, _TYPES[t], ln.tokens[3], origin, axis, [lo, hi, *rates]


def _quadrant(ln: _Line, cname: str, who: str, dof: int) -> QuadrantPolynomialConstraint:
    ln.need(29, "i j and four rows of i_nonneg j_nonneg a0 a1 a2 upper")
    i = ln.index_at(3, "i", who, dof)
    j = ln.index_at(4, "j", who, dof)
    if i == j:
        raise ln.fail("j", f"{who}couples a joint with itself")
    rows = []
    quads: set[tuple[bool, bool]] = set()
    for r in range(4):
        b = 5 + 6 * r
        p = f"row{r + 1}."
        row = QuadrantRow(
            ln.flag_at(b, p + "i_nonneg", who),
            ln.flag_at(b + 1, p + "j_nonneg", who),
            ln.number_at(b + 2, p + "a0", who, finite=True),
            ln.number_at(b + 3, p + "a1", who, finite=True),
            ln.number_at(b + 4, p + "a2", who, finite=True),
            ln.flag_at(b + 5, p + "upper", who),
        )
        if (row.i_nonneg, row.j_nonneg) in quads:
            raise ln.fail(p + "i_nonneg", f"{who}two rows for the same sign quadrant")
        quads.add((row.i_nonneg, row.j_nonneg))
        rows.append(row)
    return QuadrantPolynomialConstraint(i, j, tuple(rows), name=cname, description=ln.rest(29))


def read_chain_file(path: str | os.PathLike[str]) -> Chain:
    """Read a chain file.

    Raises:
        ChainFileError: malformed content, naming the file, line and field.
        StorageError: the file cannot be read.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ChainFileError(str(p), 0, "", f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise StorageError.from_os_error(p, "read", exc) from None
    return chain_from_text(text, str(p))
