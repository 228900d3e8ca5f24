"""Solving one episode as a continuous path.

Two ways in: the library's solvers (:func:`library_path_solver`: the analytic path solver where
the chain's family allows, the numerical solver otherwise), looked up when first used; or any
per-frame solver run by :func:`solve_episode`'s seeded loop, which carries the last certified
solution forward as the next seed and refuses steps above ``max_joint_step``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import old_seed
from ikstack.errors import InputError, UnsupportedGeometryError
from ikstack.errors import SolverUnavailableError as SolverUnavailableError  # its old home
from ikstack.ik import IKResult, IKStatus, fk_errors, solve_ik
from ikstack.ik.analytic import AnalyticIK
from ikstack.jobs.options import METHODS
from ikstack.model import Chain
from ikstack.vocabulary import ANALYTIC_PATH_METHODS

Array = NDArray[np.float64]

#: ``frame_solver(chain, T_base_tcp (1, 4, 4), seed (1, dof) or None) -> IKResult``
FrameSolver = Callable[[Chain, Array, "Array | None"], IKResult]
#: ``path_solver(T_base_tcp (T, 4, 4), seed (dof,) or None) -> IKResult``
PathSolver = Callable[[Array, "Array | None"], IKResult]
#: ``factory(config: SolveConfig) -> PathSolver``, called once per worker process with the
#: job's config (chain, method, max_joint_step, backend, device); must be picklable (a
#: module-level function) for the process pool and Ray
PathSolverFactory = Callable[[Any], PathSolver]


def check_method(method: str) -> str:
    """``method`` if it is one of :data:`METHODS` (raises :class:`InputError` otherwise)."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    return method


def solve_episode(
    chain: Chain,
    T_path: Array,
    q0: Array | None = None,
    method: str = "auto",
    max_joint_step: float | None = None,
    frame_solver: FrameSolver | None = None,
    chunk: int = 1,
    *,
    seed: Array | None = None,
) -> IKResult:
    """Solve the targets ``T_path`` (T, 4, 4) of one episode as a continuous path.

    With ``frame_solver`` given, each frame is solved seeded with the last certified solution
    (``q0``, the joint guess, for the first frame, or None to let the solver choose; ``seed``,
    its former name, warns); a solution more than ``max_joint_step`` [rad or m] from that seed
    in any joint fails with :attr:`IKStatus.STEP_LIMIT`. A failed frame holds the last
    certified joint vector (or the solver's limit-projected answer before the first success),
    so every row is finite. Without ``frame_solver``, :func:`library_path_solver` does the
    work.

    ``chunk > 1`` trades call overhead for batching: the next ``chunk`` frames are solved in
    one call, all seeded with the last certified solution, and accepted in order while each
    stays within ``max_joint_step`` (or :data:`CHUNK_STEP` when None) of its predecessor; the
    first frame that does not is solved alone, as with ``chunk=1``. ``frame_solver`` then
    receives ``(K, 4, 4)`` targets and ``(K, dof)`` seeds.

    Returns:
        An :class:`IKResult` with one row per frame; errors are the FK errors of ``q``.
    """
    if seed is not None:
        q0 = old_seed(q0, seed, "solve_episode")
    check_method(method)
    if chunk < 1:
        raise InputError(f"chunk must be at least 1; got {chunk}")
    if frame_solver is None:
        return library_path_solver(chain, method, max_joint_step)(T_path, q0)
    return _seeded_loop(chain, T_path, q0, frame_solver, max_joint_step, chunk)


#: [rad or m] largest step between consecutive frames a batched chunk may take unchecked
CHUNK_STEP = 0.2


def _seeded_loop(
    chain: Chain,
    T_path: Array,
    seed: Array | None,
    frame_solver: FrameSolver,
    max_joint_step: float | None,
    chunk: int = 1,
) -> IKResult:
    n = T_path.shape[0]
    q = np.empty((n, chain.dof))
    success = np.zeros(n, dtype=bool)
    status = np.full(n, int(IKStatus.NOT_SOLVED), dtype=np.int64)
    prev = None if seed is None else np.asarray(seed, dtype=np.float64).reshape(chain.dof)
    bound = CHUNK_STEP if max_joint_step is None else max_joint_step
    method = "none"
    i = 0
    while i < n:
        if chunk > 1 and prev is not None and i + 1 < n:
            j = min(n, i + chunk)
            r = frame_solver(chain, T_path[i:j], np.tile(prev, (j - i, 1)))
            method = r.method
            qs = np.asarray(r.q, dtype=np.float64).reshape(j - i, chain.dof)
            oks = np.asarray(r.success, dtype=bool) & np.all(np.isfinite(qs), axis=1)
            k = 0
            while k < j - i and oks[k] and float(np.max(np.abs(qs[k] - prev))) <= bound:
                prev = qs[k]
                q[i + k], success[i + k], status[i + k] = prev, True, int(IKStatus.SUCCESS)
                k += 1
            i += k
            if i >= n:
                break
        r = frame_solver(chain, T_path[i : i + 1], None if prev is None else prev[None, :])
        method = r.method
        qi = np.asarray(r.q, dtype=np.float64).reshape(chain.dof)
        ok = bool(r.success[0]) and bool(np.all(np.isfinite(qi)))
        st = int(r.status[0])
        if ok and prev is not None and max_joint_step is not None:
            if float(np.max(np.abs(qi - prev))) > max_joint_step:
                ok, st = False, int(IKStatus.STEP_LIMIT)
        if ok:
            prev = qi
            q[i] = qi
            st = int(IKStatus.SUCCESS)
        elif prev is not None:
            q[i] = prev
        else:
            q[i] = chain.clip(np.where(np.isfinite(qi), qi, chain.middle()))
        success[i] = ok
        status[i] = st
        i += 1
    perr, rerr = fk_errors(chain, q, T_path)
    zeros = np.zeros(n, dtype=np.int64)
    return IKResult(q, success, perr, rerr, status, f"path[{method}]", zeros, zeros.copy())


#: frames per batched call when the numerical solver tracks a path
NUMERICAL_CHUNK = 32


def library_path_solver(
    chain: Chain, method: str = "auto", max_joint_step: float | None = None
) -> PathSolver:
    """The library's continuous-path solver for ``chain``.

    ``auto`` uses the analytic path solver when a closed-form family accepts the chain (strict
    mode: one compiled loop over the episode's frames, then one certification of the selected
    path, see :meth:`AnalyticIK.solve_path`), the numerical solver (through
    :func:`solve_episode`'s seeded loop) otherwise; ``analytic`` and ``numerical`` force one.
    Arms only the algebraic mode solves (``AnalyticIK(chain, mode="general")``, e.g. Rizon 4)
    get the numerical solver here, as with ``solve_ik(method="auto")``.

    Raises:
        UnsupportedGeometryError: ``analytic`` was forced on a chain without a closed form.
    """
    check_method(method)
    if method in ANALYTIC_PATH_METHODS:
        try:
            solver = AnalyticIK(chain, mode="strict", max_joint_step=max_joint_step)
        except UnsupportedGeometryError:
            if method == "analytic":
                raise
        else:
            return solver.solve_path

    def frame(chain_: Chain, T: Array, seed: Array | None) -> IKResult:
        return solve_ik(chain_, T, q0=seed, method="numerical")

    def path(T_path: Array, seed: Array | None) -> IKResult:
        return _seeded_loop(chain, T_path, seed, frame, max_joint_step, NUMERICAL_CHUNK)

    return path


def warp_path_solver(
    chain: Chain, method: str = "auto", max_joint_step: float | None = None, device: str = "cpu"
) -> PathSolver:
    """The Warp backend's continuous-path solver on ``device`` (extra ``warp``).

    ``auto``/``analytic``: :class:`~ikstack.backends.warp.WarpAnalyticIK` where a closed-form
    family accepts the chain; ``numerical`` (or ``auto`` otherwise): Warp's batched LM, one
    frame at a time seeded by the last certified solution. Asking for CUDA without a GPU is an
    error; nothing falls back to another device or backend.
    """
    check_method(method)
    from ikstack.backends.warp import WarpAnalyticIK, numerical

    if method in ANALYTIC_PATH_METHODS:
        try:
            solver = WarpAnalyticIK(
                chain, device=device, mode="strict", max_joint_step=max_joint_step
            )
        except UnsupportedGeometryError:
            if method == "analytic":
                raise
        else:
            return solver.solve_path  # type: ignore[no-any-return]

    def frame(chain_: Chain, T: Array, seed: Array | None) -> IKResult:
        return numerical.solve(chain_, T, q0=seed, device=device)

    def path(T_path: Array, seed: Array | None) -> IKResult:
        return _seeded_loop(chain, T_path, seed, frame, max_joint_step, NUMERICAL_CHUNK)

    return path


def default_path_solver_factory(config: Any) -> PathSolver:
    """The factory jobs use unless given another: :func:`library_path_solver` on the numpy
    backend, :func:`warp_path_solver` on the Warp backend."""
    if config.backend == "warp":
        return warp_path_solver(config.chain, config.method, config.max_joint_step, config.device)
    if config.backend != "numpy":
        raise SolverUnavailableError(no_backend_solver(config.backend))
    return library_path_solver(config.chain, config.method, config.max_joint_step)


def no_backend_solver(backend: str) -> str:
    """The message for a backend the jobs have no built-in path solver for."""
    return (
        f"`ikstack solve` has no built-in path solver on the {backend!r} backend in this "
        "installation; use --backend numpy (or pass a path_solver_factory that uses it)"
    )
