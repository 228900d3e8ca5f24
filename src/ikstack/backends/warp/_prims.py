# mypy: ignore-errors
"""Warp primitives of the kernels' portable subset: the float64 constructor and constants,
and what Python and numba give the CPU kernels that Warp lacks (``math.hypot``,
``math.copysign``, complex arithmetic on ``wp.vec2d``, Python's integer ``%`` and ``//``). The
generated modules (``_gen_*.py``, see :mod:`ikstack.backends.warp._translate`) lower the subset
onto these.

The complex operations follow CPython's algorithms as numba compiles them (Smith's division,
the polar power), so candidates agree with the CPU path to rounding. Imported only after
:func:`ikstack.backends.warp.runtime.warp` succeeded.
"""

from __future__ import annotations

import math

import warp as wp

__all__ = [
    "F",
    "INF",
    "NAN",
    "PI",
    "TWO_PI",
    "cabs",
    "cdiv",
    "ceq",
    "cmat4",
    "cmul",
    "copysign",
    "cpow",
    "cre",
    "floor_div",
    "floor_mod",
    "hypot",
    "mat44_of",
]

F = wp.float64
INF = wp.constant(wp.float64(math.inf))
NAN = wp.constant(wp.float64(math.nan))
PI = wp.constant(wp.float64(math.pi))
TWO_PI = wp.constant(wp.float64(2.0 * math.pi))
#: four complex numbers as the rows of a matrix (a tuple of complex roots)
cmat4 = wp.types.matrix(shape=(4, 2), dtype=wp.float64)


@wp.func
def hypot(x: wp.float64, y: wp.float64) -> wp.float64:
    return wp.sqrt(x * x + y * y)


@wp.func
def copysign(x: wp.float64, y: wp.float64) -> wp.float64:
    """``|x|`` with the sign of ``y`` (a negative zero counts as negative)."""
    r = wp.abs(x)
    if y < F(0.0) or (y == F(0.0) and F(1.0) / y < F(0.0)):
        r = -r
    return r


@wp.func
def cre(x: wp.float64) -> wp.vec2d:
    return wp.vec2d(x, F(0.0))


@wp.func
def ceq(a: wp.vec2d, b: wp.vec2d) -> bool:
    return a[0] == b[0] and a[1] == b[1]


@wp.func
def cmul(a: wp.vec2d, b: wp.vec2d) -> wp.vec2d:
    return wp.vec2d(a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


@wp.func
def cdiv(a: wp.vec2d, b: wp.vec2d) -> wp.vec2d:
    """CPython's ``_Py_c_quot`` (Smith's algorithm), as the CPU path's complex division."""
    if wp.abs(b[0]) >= wp.abs(b[1]):
        ratio = b[1] / b[0]
        denom = b[0] + b[1] * ratio
        return wp.vec2d((a[0] + a[1] * ratio) / denom, (a[1] - a[0] * ratio) / denom)
    ratio = b[0] / b[1]
    denom = b[0] * ratio + b[1]
    return wp.vec2d((a[0] * ratio + a[1]) / denom, (a[1] * ratio - a[0]) / denom)


@wp.func
def cabs(a: wp.vec2d) -> wp.float64:
    return hypot(a[0], a[1])


@wp.func
def cpow(a: wp.vec2d, e: wp.float64) -> wp.vec2d:
    """CPython's ``_Py_c_pow`` for a real exponent ``e > 0``."""
    if a[0] == F(0.0) and a[1] == F(0.0):
        return wp.vec2d(F(0.0), F(0.0))
    ln = wp.pow(cabs(a), e)
    ph = wp.atan2(a[1], a[0]) * e
    return wp.vec2d(ln * wp.cos(ph), ln * wp.sin(ph))


@wp.func
def mat44_of(A: wp.array2d(dtype=wp.float64)) -> wp.mat44d:
    """A (4, 4) array's entries as a matrix value (a pose written into scratch, read as one)."""
    # fmt: off
    return wp.mat44d(
        A[0, 0], A[0, 1], A[0, 2], A[0, 3],
        A[1, 0], A[1, 1], A[1, 2], A[1, 3],
        A[2, 0], A[2, 1], A[2, 2], A[2, 3],
        A[3, 0], A[3, 1], A[3, 2], A[3, 3],
    )
    # fmt: on


# Python's integer ``%`` and ``//`` round toward minus infinity (the remainder takes the
# divisor's sign), C's and Warp's toward zero: ``-7 % 3`` is 2 in Python, -1 in C. One
# definition a width (Warp picks by the arguments' types); a zero divisor is the caller's.
# The width's least value over -1 has no quotient in the width, and C's division traps there
# (SIGFPE on the CPU device): a divisor of -1 never reaches C's ``/`` or ``%``. The answers
# are numba's for the same operands: it divides int64 operands at int64 and gives 0 and 0 for
# ``-2**63 // -1`` and ``-2**63 % -1``; it divides int32 operands at int64, so ``-2**31 // -1``
# is 2**31, which an int32 holds as -2**31 (the exact quotient wrapped to 32 bits), and the
# remainder is 0.
@wp.func
def floor_mod(a: wp.int32, b: wp.int32) -> wp.int32:
    """Python's ``a % b`` of two ints."""
    if b == -1:
        return 0  # (C's -2**31 % -1 traps)
    r = a % b
    if (r < 0 and b > 0) or (r > 0 and b < 0):
        r = r + b
    return r


@wp.func
def floor_mod(a: wp.int64, b: wp.int64) -> wp.int64:  # noqa: F811 (the int64 definition)
    """Python's ``a % b`` of two int64 values."""
    if b == wp.int64(-1):
        return wp.int64(0)  # (C's -2**63 % -1 traps)
    r = a % b
    if (r < wp.int64(0) and b > wp.int64(0)) or (r > wp.int64(0) and b < wp.int64(0)):
        r = r + b
    return r


@wp.func
def floor_div(a: wp.int32, b: wp.int32) -> wp.int32:
    """Python's ``a // b`` of two ints (``-2**31 // -1``: -2**31, numba's 2**31 in 32 bits)."""
    if b == -1:
        if a == -2147483647 - 1:
            return a
        return -a
    q = a / b
    if q * b != a and ((a < 0) != (b < 0)):
        q = q - 1
    return q


@wp.func
def floor_div(a: wp.int64, b: wp.int64) -> wp.int64:  # noqa: F811 (the int64 definition)
    """Python's ``a // b`` of two int64 values (``-2**63 // -1``: numba's 0)."""
    if b == wp.int64(-1):
        if a == wp.int64(-9223372036854775807) - wp.int64(1):
            return wp.int64(0)
        return -a
    q = a / b
    if q * b != a and ((a < wp.int64(0)) != (b < wp.int64(0))):
        q = q - wp.int64(1)
    return q
