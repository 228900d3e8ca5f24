"""The ikstack exception hierarchy.

Every exception ikstack raises on purpose derives from :class:`IKStackError`. Exceptions are
for programmer and model errors found at a boundary (a wrong shape, NaN input, a non-rigid
transform, a malformed URDF, unsupported geometry). Solver failures (unreachable targets,
singular steps, QP failures) are statuses on result objects, never exceptions.
"""

from __future__ import annotations

from collections.abc import Iterable


class IKStackError(Exception):
    """Root of every error ikstack raises on purpose."""


class InputError(IKStackError, ValueError):
    """An argument has the wrong shape, type or value."""


class ShapeError(InputError):
    """An array has the wrong shape.

    Attributes:
        name: the argument's name.
        shape: the shape received.
        expected: a human description of the accepted shapes.
    """

    def __init__(self, name: str, shape: tuple[int, ...], expected: str):
        self.name = name
        self.shape = tuple(shape)
        self.expected = expected
        super().__init__(f"{name} has shape {self.shape}; expected {expected}")


class NonFiniteError(InputError):
    """An array holds NaN or infinity where finite numbers are required."""

    def __init__(self, name: str, index: tuple[int, ...] | None = None):
        self.name = name
        self.index = index
        where = f" (first at index {index})" if index is not None else ""
        super().__init__(f"{name} contains NaN or infinity{where}; finite values are required")


class NotRigidTransformError(InputError):
    """A 4x4 matrix is not a rigid transform (rotation not orthonormal, det != 1, bad last row)."""


class JointLimitError(InputError):
    """A joint value lies outside its limits beyond the tolerance.

    Attributes:
        joint: the joint's name.
        value, lower, upper: the value and the limits [rad or m].
    """

    def __init__(self, joint: str, value: float, lower: float, upper: float):
        self.joint = joint
        self.value = value
        self.lower = lower
        self.upper = upper
        super().__init__(
            f"joint {joint!r} = {value:.6g} is outside its limits [{lower:.6g}, {upper:.6g}]"
        )


class DatasetError(InputError):
    """An episode file is malformed; the message names the file, and the row and field if known.

    Attributes:
        path: the file.
        row: 0-based data row (not counting a header), or None.
        field: the column or key, or None.
    """

    def __init__(
        self, path: object, message: str, row: int | None = None, field: str | None = None
    ):
        self.path = str(path)
        self.row = row
        self.field = field
        self.message = message
        where = self.path
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[object, ...]:
        # rebuilt from the constructor's arguments when a worker process sends it back
        return (type(self), (self.path, self.message, self.row, self.field))


class ModelError(IKStackError):
    """A kinematic model is malformed or cannot be built."""


class URDFError(ModelError):
    """A URDF file or string is malformed (the message carries the parser's line if known)."""


class ChainFileError(InputError):
    """A chain description file (``ikstack-chain``) is malformed.

    Attributes:
        path: the file (or ``"<string>"``).
        line: the 1-based line number (0 when the file cannot be read at all).
        field: the field on that line (``"upper"``, ``"origin.r01"``, ...), or ``""``.
        problem: what is wrong, without the location.
    """

    def __init__(self, path: str, line: int, field: str, problem: str):
        self.path = str(path)
        self.line = int(line)
        self.field = field
        self.problem = problem
        where = f"field {field!r}: " if field else ""
        super().__init__(f"{self.path}:{self.line}: {where}{problem}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.line, self.field, self.problem))


class MJCFError(ModelError):
    """An MJCF file cannot be compiled by MuJoCo, or names a frame it does not have."""


class UnknownLinkError(ModelError, KeyError):
    """A link name does not exist in the model.

    Attributes:
        link: the name asked for.
        available: the names that exist.
    """

    def __init__(self, link: str, available: Iterable[str]):
        self.link = link
        self.available = sorted(available)
        shown = ", ".join(self.available[:40])
        more = "" if len(self.available) <= 40 else f", ... ({len(self.available)} in all)"
        super().__init__(f"unknown link {link!r}; links that exist: {shown}{more}")

    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return str(self.args[0])


class UnsupportedJointError(ModelError):
    """A joint type on the chosen path cannot be represented in a serial chain."""

    def __init__(self, joint: str, joint_type: str, reason: str = ""):
        self.joint = joint
        self.joint_type = joint_type
        extra = f": {reason}" if reason else ""
        super().__init__(
            f"joint {joint!r} has type {joint_type!r}, which a serial chain does not support"
            f"{extra}; supported types are revolute, continuous, prismatic and fixed"
        )


class UnsupportedGeometryError(ModelError, ValueError):
    """A solver cannot handle this chain's geometry; the message names the failed condition.

    Also a ``ValueError``: the chain is a bad value for the solver asked for."""


class UnknownRobotError(IKStackError, KeyError):
    """A bundled robot name does not exist."""

    def __init__(self, name: str, available: Iterable[str]):
        self.name = name
        self.available = sorted(available)
        super().__init__(f"unknown robot {name!r}; bundled robots: {', '.join(self.available)}")

    def __str__(self) -> str:
        return str(self.args[0])


class ConfigError(IKStackError):
    """A configuration or profile file is invalid (the message names the field and the file)."""


class MissingExtraError(IKStackError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str):
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package!r} is not installed; install the extra with: pip install 'ikstack[{extra}]'"
        )


class SolverUnavailableError(IKStackError):
    """The IK solver a job asked for is not part of this installation."""


class DeviceUnavailableError(IKStackError):
    """The requested device does not exist on this machine."""


class StorageError(IKStackError):
    """A file or folder cannot be read or written: a full disk, a read-only folder, a missing
    permission. The message names the path and the system's reason.

    Attributes:
        path: the file or folder.
        errno: the system error number (``errno.ENOSPC``, ``errno.EROFS``, ...), or None.
    """

    def __init__(self, path: object, action: str, reason: str, errno: int | None = None):
        self.path = str(path)
        self.action = action
        self.reason = reason
        self.errno = errno
        super().__init__(f"cannot {action} {self.path}: {reason}")

    @classmethod
    def from_os_error(cls, path: object, action: str, exc: OSError) -> StorageError:
        """The error for ``exc`` raised while doing ``action`` on ``path``."""
        return cls(exc.filename or path, action, exc.strerror or str(exc), exc.errno)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.action, self.reason, self.errno))


class WorkerError(IKStackError):
    """A worker process died or failed unexpectedly; the message names the worker (the arm,
    the episode batch) and, where known, the worker's own error."""


class IKStackDeprecationWarning(DeprecationWarning):
    """A name or argument renamed or retired in this release: it still works, warns with this
    category (naming its replacement) and goes in the next release. Filter on this class to
    show, silence or raise only ikstack's deprecations."""


class TranslateError(IKStackError, ValueError):
    """Kernel source outside the portable subset that the Warp translator reads (the message
    names the file and line)."""
