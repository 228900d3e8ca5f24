"""Python's integer ``%`` and ``//`` (rounded toward minus infinity) translated for the device,
whose own round toward zero: the translated code run on Warp's CPU device gives Python's
answers for every sign of either operand, for the device's 32-bit ``int`` and for 64-bit ints
up to the ends of their range, and numba's where the width's least value meets -1 (no quotient
in the width; C's division traps there, so those run in a child process); the numerical
search's restart seed, generated from the CPU source, gives the CPU's seeds. Floats stay
outside the rule, as an error naming the line."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ikstack.backends.warp._translate import TranslateError, Translator

SNIPPET = """
import numpy as np

def floors(a, b):
    return a % b, a // b

def floors32(a, b):
    return a % b, a // b

def rem(a, b):
    return a % b

def mixed(a, k):
    h = np.int64(k) * 1000003 + a % k
    return h // -3, (k - 20) % 7
"""
SIGS = {"floors": "a:i64 b:i64", "floors32": "a:i b:i", "rem": "a:i64 b:i64", "mixed": "a:i64 k:i"}

KERNELS = """

@wp.kernel
def run64(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.int64),
          m: wp.array(dtype=wp.int64), d: wp.array(dtype=wp.int64)):
    i = wp.tid()
    mi, di = floors(a[i], b[i])
    m[i] = mi
    d[i] = di


@wp.kernel
def run32(a: wp.array(dtype=wp.int32), b: wp.array(dtype=wp.int32),
          m: wp.array(dtype=wp.int32), d: wp.array(dtype=wp.int32)):
    i = wp.tid()
    mi, di = floors32(a[i], b[i])
    m[i] = mi
    d[i] = di


@wp.kernel
def run_rem(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.int64),
            m: wp.array(dtype=wp.int64)):
    i = wp.tid()
    m[i] = rem(a[i], b[i])


@wp.kernel
def run_mixed(a: wp.array(dtype=wp.int64), k: wp.array(dtype=wp.int32),
              h: wp.array(dtype=wp.int64), r: wp.array(dtype=wp.int32)):
    i = wp.tid()
    hi, ri = mixed(a[i], k[i])
    h[i] = hi
    r[i] = ri
"""


def _translate(src: str, sigs: dict[str, str]) -> str:
    tr = Translator(signatures={"snippet": sigs}, modules={})
    return tr.translate("snippet", textwrap.dedent(src))


def test_int_floor_ops_become_the_primitives_and_float_ones_are_errors():
    code = _translate(SNIPPET, SIGS)
    assert "def floors(a: wp.int64, b: wp.int64):" in code
    assert "return floor_mod(a, b), floor_div(a, b)" in code
    # an int meeting an int64 is widened; the literal divisor too
    assert "h = wp.int64(k) * wp.int64(1000003) + floor_mod(a, wp.int64(k))" in code
    assert "return floor_div(h, wp.int64(-3)), floor_mod(k - 20, 7)" in code
    for op in ("%", "//"):
        with pytest.raises(TranslateError, match=rf"<snippet>:2: f: '{op}' of a 'f' and a 'i'"):
            _translate(f"def f(x):\n    return x {op} 2\n", {"f": "x:f"})
    with pytest.raises(TranslateError, match="outside -2"):
        _translate(
            "import numpy as np\ndef f():\n    return np.int64(9223372036854775808)\n", {"f": ""}
        )


def _operands(dtype, n, rng):
    """Operands of every sign: the range's ends, small values, and random ones."""
    info = np.iinfo(dtype)
    ends = [info.min, info.min + 1, info.max - 1, info.max, -1, 0, 1, -7, 7, 2**31 - 1]
    ends = [v for v in ends if info.min <= v <= info.max]
    rand = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    small = rng.integers(-50, 51, n).astype(dtype)
    return np.concatenate([np.array(ends, dtype), rand, small])


def _pairs(dtype, rng):
    a = _operands(dtype, 200, rng)
    b = _operands(dtype, 40, rng)
    A, B = np.meshgrid(a, b, indexing="ij")
    A, B = A.ravel(), B.ravel()
    info = np.iinfo(dtype)
    keep = (B != 0) & ~((A == info.min) & (B == -1))  # (a child process runs those)
    return A[keep], B[keep]


@pytest.fixture(scope="module")
def snippet_path(tmp_path_factory):
    """The snippet's generated module with kernels that run it, written to a file."""
    pytest.importorskip("warp")
    pytest.importorskip("ikstack.backends.warp._prims")
    path = tmp_path_factory.mktemp("floor") / "floor_snippet.py"
    path.write_text(_translate(SNIPPET, SIGS) + KERNELS)
    return path


@pytest.fixture(scope="module")
def device(snippet_path):
    """The snippet's generated module, imported on Warp's CPU."""
    import warp as wp

    path = snippet_path
    spec = importlib.util.spec_from_file_location("floor_snippet", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["floor_snippet"] = mod
    spec.loader.exec_module(mod)
    yield wp, mod
    sys.modules.pop("floor_snippet", None)


def _launch(wp, kernel, ins, outs):
    """Run ``kernel`` over ``ins`` (a (n, 4, 4) one as poses); outputs like ``outs``."""
    arrs = [
        wp.array(x, dtype=wp.mat44d, device="cpu") if x.ndim == 3 else wp.array(x, device="cpu")
        for x in ins
    ]
    arrs += [wp.zeros_like(wp.array(x, device="cpu")) for x in outs]
    wp.launch(kernel, dim=len(ins[0]), inputs=arrs, device="cpu")
    return [a.numpy() for a in arrs[len(ins) :]]


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_the_device_gives_pythons_remainder_and_quotient_for_every_sign(device, dtype):
    wp, mod = device
    A, B = _pairs(dtype, np.random.default_rng(5))
    assert (A < 0).any() and (B < 0).any() and (A > 0).any() and (B > 0).any()
    kern = mod.run64 if dtype == np.int64 else mod.run32
    m, d = _launch(wp, kern, [A, B], [A, A])
    want_m = np.array([int(a) % int(b) for a, b in zip(A, B, strict=True)], dtype=object)
    want_d = np.array([int(a) // int(b) for a, b in zip(A, B, strict=True)], dtype=object)
    assert np.array_equal(m.astype(object), want_m)
    assert np.array_equal(d.astype(object), want_d)


#: run in a child process (argument: the snippet module's path): C's division traps on these
#: operands and would end the test run; prints the device's answers as JSON
CHILD = """
import importlib.util, json, sys
import numpy as np
import warp as wp

spec = importlib.util.spec_from_file_location("floor_snippet", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
sys.modules["floor_snippet"] = mod
spec.loader.exec_module(mod)
out = {}
for name, kern, dtype in (("i64", mod.run64, np.int64), ("i32", mod.run32, np.int32)):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, info.min + 1, info.max, -5, 5, 0, info.min], dtype)
    b = np.array([-1, -1, -1, -1, -1, -1, -1, 1], dtype)
    arrs = [wp.array(x, device="cpu") for x in (a, b, a, a)]
    wp.launch(kern, dim=a.size, inputs=arrs, device="cpu")
    out[name] = [a.tolist(), b.tolist(), arrs[2].numpy().tolist(), arrs[3].numpy().tolist()]
a = np.array([np.iinfo(np.int64).min, -5, 5], np.int64)
arrs = [wp.array(x, device="cpu") for x in (a, np.full(3, -1, np.int64), np.full(3, 9))]
wp.launch(mod.run_rem, dim=3, inputs=arrs, device="cpu")
out["rem"] = arrs[2].numpy().tolist()
print(json.dumps(out))
"""


def _numba_floors(dtype):
    """The CPU's answers: numba's ``a // b`` and ``a % b`` on ``dtype`` operands, stored in
    ``dtype`` (numba divides int32 operands at int64)."""
    from numba import njit

    @njit
    def floors(a, b, m, d):
        for i in range(a.size):
            m[i] = a[i] % b[i]
            d[i] = a[i] // b[i]

    def run(a, b):
        a, b = np.asarray(a, dtype), np.asarray(b, dtype)
        m, d = np.empty_like(a), np.empty_like(a)
        floors(a, b, m, d)
        return m.tolist(), d.tolist()

    return run


def test_the_least_value_over_minus_one_gives_numbas_answer_without_a_trap(snippet_path):
    """``-2**63 // -1`` and ``-2**31 // -1`` (no quotient in the width: C's division traps
    there) give numba's answers: 0 and 0 for int64; -2**31 and 0 for int32 (numba divides
    int32 operands at int64: 2**31, which an int32 holds as -2**31). Every other operand over
    -1 is Python's answer."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(snippet_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])  # -8: SIGFPE
    got = json.loads(run.stdout.strip().splitlines()[-1])
    for name, dtype in (("i64", np.int64), ("i32", np.int32)):
        a, b, m, d = got[name]
        info = np.iinfo(dtype)
        want_m, want_d = _numba_floors(dtype)(a, b)
        assert (m, d) == (want_m, want_d), name
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x == info.min and y == -1:
                assert (m[i], d[i]) == (0, 0 if dtype == np.int64 else info.min), (name, i)
            else:
                assert (m[i], d[i]) == (x % y, x // y), (name, i)
    assert got["rem"] == [0, 0, 0]  # ``-2**63 % -1`` is 0


def test_an_int_meeting_an_int64_is_widened_as_on_the_cpu(device):
    wp, mod = device
    rng = np.random.default_rng(8)
    a = np.concatenate([rng.integers(-(2**62), 2**62, 300), [-(2**62), 2**62 - 1, -1, 0]])
    k = rng.integers(-(2**31) + 1, 2**31 - 1, a.size).astype(np.int32)
    k[k == 0] = 3
    k[-4:] = [-(2**31) + 21, 2**31 - 1, 7, -7]  # (k - 20 within int32)
    h, r = _launch(wp, mod.run_mixed, [a, k], [a, k])
    for i in range(a.size):
        hh = int(k[i]) * 1000003 + int(a[i]) % int(k[i])
        assert (int(h[i]), int(r[i])) == (hh // -3, (int(k[i]) - 20) % 7), i


def test_the_generated_restart_seed_is_the_cpus():
    """``_gen_lm._target_key`` (generated from ``_kernels._target_key``) against the CPU's,
    on keys of either sign up to the ends of int64 and poses whose entries scaled by 1e6
    pass 2**31 (and 2**53) on either side of zero."""
    wp = pytest.importorskip("warp")
    from ikstack.backends.warp._gen_lm import _target_key as device_key
    from ikstack.ik.numerical._kernels import _target_key

    @wp.kernel
    def keys(
        k: wp.array(dtype=wp.int64), T: wp.array(dtype=wp.mat44d), out: wp.array(dtype=wp.int64)
    ):
        i = wp.tid()
        out[i] = device_key(k[i], T[i])

    rng = np.random.default_rng(2)
    n = 300
    info = np.iinfo(np.int64)
    K = np.concatenate(
        [
            [info.min, info.min + 1, info.max, -1, 0, 2**31 - 1, -(2**31) + 1],
            rng.integers(info.min, info.max, n // 2, dtype=np.int64),
            rng.integers(-(2**31), 2**31, n // 2),
        ]
    )
    T = rng.normal(size=(K.size, 4, 4)) * rng.choice([1e-4, 1.0, 1e4, 1e10], size=(K.size, 1, 1))
    (got,) = _launch(wp, keys, [K, T], [K])
    want = np.array([_target_key(np.int64(k), t) for k, t in zip(K, T, strict=True)])
    assert (got < 2**31 - 1).all() and (got >= 0).all()
    np.testing.assert_array_equal(got, want)
