"""The browser viewer (extra ``viz``, on viser): a chain drawn live, joint sliders, a target
gizmo solved by IK as it moves, every analytic solution as a ghost, and episode playback.

``Viewer(chain)`` starts a viser server on a loopback address; open ``viewer.url`` in a
browser. Everything the browser does has a method here too (:meth:`Viewer.set_q`,
:meth:`Viewer.set_target`, :meth:`Viewer.play`), which is how scripts and tests drive it.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError, MissingExtraError
from ikstack.ik import fk_errors, solve_ik
from ikstack.kinematics import fk_links
from ikstack.model import Chain, JointType
from ikstack.spatial import as_transforms, matrix_to_quat
from ikstack.viz.geometry import LinkMesh, capsule_mesh, segments
from ikstack.vocabulary import VIEWER_METHODS

Array = NDArray[np.float64]

#: colours (RGB 0-255)
ROBOT_COLOR = (235, 140, 40)
#: ghosts: valid candidates cyan, invalid ones (limits, constraints, FK gate) magenta; hues
#: kept apart from the red/green/blue of the frame axes
VALID_COLOR = (30, 190, 210)
INVALID_COLOR = (210, 50, 200)
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: most ghosts drawn at once (a 7R arm's families sample the redundancy: hundreds of candidates)
MAX_GHOSTS = 16


def _viser() -> Any:
    try:
        import viser
    except ImportError:
        raise MissingExtraError("viser", "viz") from None
    return viser


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (on ``host``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _wxyz(T: Array) -> Array:
    return np.asarray(matrix_to_quat(T[:3, :3]), dtype=np.float64)


@dataclass(frozen=True)
class Solution:
    """One IK candidate shown by the viewer: joint vector, certified validity, selection."""

    q: Array
    valid: bool
    selected: bool


class _RobotDrawing:
    """Link frames of one drawn copy of the chain, with capsules (and meshes) under them."""

    def __init__(
        self,
        server: Any,
        chain: Chain,
        root: str,
        color: tuple[int, int, int],
        opacity: float | None,
        radius: float,
        meshes: Sequence[LinkMesh] = (),
        axes: bool = True,
    ) -> None:
        self.root = root
        self.frames = []
        self.bodies: list[Any] = []
        scale = radius * 6
        for i in range(chain.dof + 1):
            self.frames.append(
                server.scene.add_frame(
                    f"{root}/link{i}", show_axes=axes, axes_length=scale, axes_radius=radius / 5
                )
            )
        for k, seg in enumerate(segments(chain)):
            v, f = capsule_mesh(seg.start, seg.end, radius)
            self.bodies.append(
                server.scene.add_mesh_simple(
                    f"{root}/link{seg.link}/capsule{k}", v, f, color=color, opacity=opacity
                )
            )
        for m in meshes:
            self.bodies.append(
                server.scene.add_mesh_trimesh(
                    f"{root}/link{m.link}/mesh_{m.name}",
                    m.mesh,
                    wxyz=_wxyz(m.T_link_mesh),
                    position=m.T_link_mesh[:3, 3],
                )
            )

    def show(self, frames: Array, visible: bool = True) -> None:
        """Place link frames: ``frames`` (dof + 1, 4, 4) base first."""
        for h, T in zip(self.frames, frames, strict=True):
            h.wxyz = _wxyz(T)
            h.position = T[:3, 3]
            h.visible = visible

    def hide(self) -> None:
        for h in self.frames:
            h.visible = False


class Viewer:
    """A live 3D view of ``chain`` in the browser.

    Args:
        chain: the arm.
        host: a loopback address (the viewer never listens beyond this machine).
        port: TCP port; a free one when None.
        meshes: visual meshes per link (:func:`~ikstack.viz.geometry.urdf_meshes`,
            :func:`~ikstack.viz.geometry.mjcf_meshes`); capsules are always drawn.
        method: IK method of the gizmo: ``auto`` (analytic where the family allows, showing
            every analytic solution as a ghost), or ``numerical``.
        radius: capsule radius [m]; by default 3% of the arm's reach.
    """

    def __init__(
        self,
        chain: Chain,
        host: str = "127.0.0.1",
        port: int | None = None,
        meshes: Sequence[LinkMesh] = (),
        method: str = "auto",
        radius: float | None = None,
    ) -> None:
        if host not in LOOPBACK:
            raise InputError(
                f"the viewer listens on a loopback address only "
                f"({', '.join(LOOPBACK)}); got host {host!r}"
            )
        if method not in VIEWER_METHODS:
            raise InputError(f"method must be one of {', '.join(VIEWER_METHODS)}; got {method!r}")
        viser = _viser()
        self.chain = chain
        self.method = method
        self.port = (
            free_port(host if host != "localhost" else "127.0.0.1") if port is None else int(port)
        )
        self.host = host
        self.server = viser.ViserServer(host=host, port=self.port, verbose=False)
        self._lock = threading.RLock()
        self._updating = False
        reach = float(
            np.sum(np.linalg.norm(chain.origins[:, :3, 3], axis=1))
            + np.linalg.norm(chain.T_last_tip[:3, 3])
        )
        self.radius = radius if radius is not None else max(0.005, 0.03 * max(reach, 0.1))
        self._analytic = self._analytic_solver() if method == "auto" else None
        self.server.scene.set_up_direction("+z")
        r = max(reach, 0.3)
        # looking past the arm's right so it sits left of the panel on the right
        self.server.initial_camera.position = (1.1 * r, -0.9 * r, 0.75 * r)
        self.server.initial_camera.look_at = (0.3 * r, 0.25 * r, 0.1 * r)
        self.server.scene.add_grid(
            "/grid", width=2 * max(reach, 0.5), height=2 * max(reach, 0.5), cell_size=0.1
        )
        self.robot = _RobotDrawing(
            self.server, chain, "/robot", ROBOT_COLOR, None, self.radius, meshes
        )
        self._ghosts: list[_RobotDrawing] = []
        self._ghost_colors: list[tuple[int, int, int]] = []
        self.solutions: list[Solution] = []
        self.shown_ghosts: list[Solution] = []
        self.status = "ready"
        self.position_error = 0.0
        self.rotation_error = 0.0
        self._build_gui()
        self.q = chain.clip(chain.middle())
        T = chain.fk(self.q)
        self.gizmo = self.server.scene.add_transform_controls(
            "/target", scale=max(0.15, 0.25 * reach), wxyz=_wxyz(T), position=T[:3, 3]
        )
        self.gizmo.on_update(lambda _event: self._on_gizmo())
        self._timeline: tuple[Array, Array] | None = None
        self._frame_info: tuple[Any, ...] | None = None
        self._player: threading.Thread | None = None
        self.set_q(self.q)

    # ------------------------------------------------------------------ set-up
    def _analytic_solver(self) -> Any:
        from ikstack.ik.analytic import AnalyticIK, classify

        try:
            cls = classify(self.chain)
        except Exception:  # a chain the classifier cannot read is solved numerically
            return None
        if cls.family is None:
            return None
        return AnalyticIK(self.chain, mode="near" if cls.needs_near else "strict")

    def _build_gui(self) -> None:
        gui = self.server.gui
        c = self.chain
        gui.add_markdown(
            f"**{c.name or 'chain'}**: {c.dof} joints, {c.base} to {c.tcp_frame}; "
            f"IK: {'analytic' if self._analytic is not None else 'numerical'}"
        )
        self.status_md = gui.add_markdown("status: ready")
        self.readout_md = gui.add_markdown("")
        self.sliders = []
        with gui.add_folder("Joints"):
            for i, name in enumerate(c.joint_names):
                lo, hi = float(c.lower[i]), float(c.upper[i])
                if not math.isfinite(lo):
                    lo = -2 * math.pi if c.joint_types[i] != JointType.PRISMATIC else -1.0
                if not math.isfinite(hi):
                    hi = 2 * math.pi if c.joint_types[i] != JointType.PRISMATIC else 1.0
                s = gui.add_slider(
                    name,
                    min=lo,
                    max=hi,
                    step=(hi - lo) / 1000.0,
                    initial_value=float(np.clip(c.middle()[i], lo, hi)),
                )
                s.on_update(lambda _e, k=i: self._on_slider(k))
                self.sliders.append(s)
        self.frame_slider: Any = None
        self.play_box: Any = None

    # ------------------------------------------------------------------ state changes
    def set_q(self, q: ArrayLike, move_target: bool = True) -> None:
        """Show configuration ``q`` (dof,): robot, sliders, readout (and the target, if asked)."""
        qv = np.asarray(self.chain.check_q(q), dtype=np.float64).reshape(self.chain.dof).copy()
        with self._lock:
            self.q = qv
            frames = self._frames(qv)
            self.robot.show(frames)
            self._updating = True
            try:
                for s, v in zip(self.sliders, qv, strict=True):
                    s.value = float(np.clip(v, s.min, s.max))
                if move_target:
                    T = frames[-1] @ self._tcp_offset()
                    self.gizmo.wxyz = _wxyz(T)
                    self.gizmo.position = T[:3, 3]
            finally:
                self._updating = False
            self._write_readout()

    def _tcp_offset(self) -> Array:
        return np.eye(4)

    def _frames(self, q: Array) -> Array:
        links = fk_links(self.chain, q)  # (dof + 1): joint links, then the TCP
        return np.concatenate([np.eye(4)[None], links[:-1]], axis=0)

    def show_target(self, T_base_tcp: ArrayLike) -> None:
        """Move the target gizmo to ``T_base_tcp`` without solving (a servo's goal)."""
        T = as_transforms(T_base_tcp, "T_base_tcp")
        with self._lock:
            self._updating = True
            try:
                self.gizmo.wxyz = _wxyz(T)
                self.gizmo.position = T[:3, 3]
            finally:
                self._updating = False

    def set_target(self, T_base_tcp: ArrayLike) -> list[Solution]:
        """Move the target gizmo to ``T_base_tcp`` and solve, as a drag in the browser does."""
        T = as_transforms(T_base_tcp, "T_base_tcp")
        if T.shape != (4, 4):
            raise InputError(f"T_base_tcp must be one (4, 4) pose; got shape {T.shape}")
        with self._lock:
            self.show_target(T)
            return self._solve(T)

    def _on_gizmo(self) -> None:
        if self._updating:
            return
        T = np.eye(4)
        from ikstack.spatial import quat_to_matrix

        T[:3, :3] = quat_to_matrix(np.asarray(self.gizmo.wxyz, dtype=np.float64))
        T[:3, 3] = np.asarray(self.gizmo.position, dtype=np.float64)
        with self._lock:
            self._solve(T)

    def _on_slider(self, k: int) -> None:
        if self._updating:
            return
        with self._lock:
            q = self.q.copy()
            q[k] = float(self.sliders[k].value)
            self._clear_ghosts()
            self.status = "joint sliders"
            self.set_q(q)

    def _solve(self, T: Array) -> list[Solution]:
        seed = self.q
        sols: list[Solution] = []
        if self._analytic is not None:
            r = self._analytic.solve(T, q0=seed, return_all=True)
            qa = r.q_all[0] if r.q_all is not None else np.zeros((0, self.chain.dof))
            va = r.valid_all[0] if r.valid_all is not None else np.zeros(0, dtype=bool)
            for k in range(qa.shape[0]):
                if np.all(np.isfinite(qa[k])):
                    sel = bool(r.success[0]) and bool(np.array_equal(qa[k], r.q[0]))
                    sols.append(Solution(qa[k].copy(), bool(va[k]), sel))
            if bool(r.success[0]) and not any(s.selected for s in sols):
                sols.append(Solution(r.q[0].copy(), True, True))
        else:
            r = solve_ik(self.chain, T, q0=seed, method="numerical")
            if bool(r.success[0]):
                sols.append(Solution(r.q[0].copy(), True, True))
        ok = bool(r.success[0])
        self.solutions = sols
        self.position_error = float(r.position_error[0])
        self.rotation_error = float(r.rotation_error[0])
        n_valid = sum(s.valid for s in sols)
        if ok:
            self.status = (
                f"solved ({r.method}): {n_valid} valid of {len(sols)} solutions"
                if self._analytic is not None
                else f"solved ({r.method})"
            )
            if len(sols) - 1 > MAX_GHOSTS:
                self.status += f"; {MAX_GHOSTS} ghosts shown"
            self.set_q(r.q[0], move_target=False)
        else:
            from ikstack.ik import IKStatus

            self.status = (
                f"no certified solution ({IKStatus(int(r.status[0])).name.lower()},"
                f" {r.method}); showing the last valid pose"
            )
            self._write_readout()
        self._show_ghosts(sols)
        self._write_readout()
        return sols

    def _clear_ghosts(self) -> None:
        self.solutions = []
        self.shown_ghosts = []
        for g in self._ghosts:
            g.hide()

    def _ghost_choice(self, sols: list[Solution]) -> list[Solution]:
        """The ghosts to draw: every candidate but the selected one, at most
        :data:`MAX_GHOSTS`: valid ones first, spread evenly over the list, then invalid ones."""
        rest = [s for s in sols if not s.selected]
        if len(rest) <= MAX_GHOSTS:
            return rest
        valid = [s for s in rest if s.valid]
        invalid = [s for s in rest if not s.valid]

        def spread(items: list[Solution], n: int) -> list[Solution]:
            if len(items) <= n:
                return items
            idx = np.linspace(0, len(items) - 1, n).round().astype(int)
            return [items[i] for i in idx]

        chosen = spread(valid, MAX_GHOSTS)
        return chosen + spread(invalid, MAX_GHOSTS - len(chosen))

    def _show_ghosts(self, sols: list[Solution]) -> None:
        ghosts = self._ghost_choice(sols)
        self.shown_ghosts = ghosts
        for k, s in enumerate(ghosts):
            color = VALID_COLOR if s.valid else INVALID_COLOR
            while len(self._ghosts) <= k:
                self._ghosts.append(
                    _RobotDrawing(
                        self.server,
                        self.chain,
                        f"/ghosts/g{len(self._ghosts)}",
                        VALID_COLOR,
                        0.3,
                        self.radius * 0.8,
                        axes=False,
                    )
                )
                self._ghost_colors.append(VALID_COLOR)
            g = self._ghosts[k]
            if self._ghost_colors[k] != color:
                for b in g.bodies:
                    b.color = color
                self._ghost_colors[k] = color
            g.show(self._frames(s.q))
        for g in self._ghosts[len(ghosts) :]:
            g.hide()

    def _write_readout(self) -> None:
        c = self.chain
        rows = []
        for i, name in enumerate(c.joint_names):
            v = float(self.q[i])
            shown = (
                f"{v:+.4f} m"
                if c.joint_types[i] == JointType.PRISMATIC
                else f"{math.degrees(v):+.2f} deg"
            )
            rows.append(f"| {name} | {shown} |")
        T = c.fk(self.q)
        self.status_md.content = (
            f"status: {self.status}  \nFK error: {self.position_error:.2e} m, "
            f"{self.rotation_error:.2e} rad  \nTCP: ({T[0, 3]:+.4f}, {T[1, 3]:+.4f}, "
            f"{T[2, 3]:+.4f}) m"
        )
        self.readout_md.content = "| joint | value |\n|---|---|\n" + "\n".join(rows)

    # ------------------------------------------------------------------ playback
    def play(
        self,
        timestamps: ArrayLike,
        q: ArrayLike,
        start: bool = True,
        speed: float = 1.0,
        success: ArrayLike | None = None,
        position_error: ArrayLike | None = None,
        rotation_error: ArrayLike | None = None,
    ) -> None:
        """Load a trajectory (timestamps (T,) [s], q (T, dof)) with a timeline slider and a play
        checkbox; it starts playing when ``start``. A solved episode's per-frame ``success`` and
        FK errors [m, rad] (T,), when given, are shown with each frame."""
        t = np.asarray(timestamps, dtype=np.float64).reshape(-1)
        qq = self.chain.check_q(q).reshape(-1, self.chain.dof)
        if t.shape[0] != qq.shape[0] or t.shape[0] == 0:
            raise InputError(
                f"timestamps ({t.shape[0]}) and q ({qq.shape[0]}) rows must match and be non-empty"
            )
        self._timeline = (t, qq)
        self._frame_info = None
        if success is not None and position_error is not None and rotation_error is not None:
            self._frame_info = tuple(
                np.asarray(a).reshape(-1) for a in (success, position_error, rotation_error)
            )
            if any(a.shape[0] != t.shape[0] for a in self._frame_info):
                raise InputError("success and the FK errors need one value per frame")
        gui = self.server.gui
        if self.frame_slider is None:
            with gui.add_folder("Timeline"):
                self.frame_slider = gui.add_slider(
                    "frame", min=0, max=max(1, len(t) - 1), step=1, initial_value=0
                )
                self.play_box = gui.add_checkbox("play", initial_value=start)
                self.time_md = gui.add_markdown("")
            self.frame_slider.on_update(lambda _e: self._on_frame())
            self.play_box.on_update(lambda _e: self._on_play())
        else:
            self.frame_slider.max = max(1, len(t) - 1)
            self.play_box.value = start
        self.show_frame(0)
        self._speed = speed
        if start:
            self._start_player()

    def show_frame(self, k: int) -> None:
        """Show frame ``k`` of the loaded trajectory."""
        if self._timeline is None:
            raise InputError("no trajectory loaded; call play() first")
        t, qq = self._timeline
        k = int(np.clip(k, 0, len(t) - 1))
        with self._lock:
            self._updating = True
            try:
                self.frame_slider.value = k
            finally:
                self._updating = False
            self.status = f"frame {k + 1}/{len(t)}"
            self._clear_ghosts()
            if self._frame_info is not None:
                ok, pe, re = self._frame_info
                self.status += ", certified" if bool(ok[k]) else ", NOT certified"
                self.position_error, self.rotation_error = float(pe[k]), float(re[k])
            self.set_q(qq[k])
            self.time_md.content = f"t = {t[k] - t[0]:.3f} s of {t[-1] - t[0]:.3f} s"
        self._frame = k

    def _on_frame(self) -> None:
        if not self._updating:
            self.show_frame(int(self.frame_slider.value))

    def _on_play(self) -> None:
        if self.play_box.value:
            self._start_player()

    def _start_player(self) -> None:
        if self._player is not None and self._player.is_alive():
            return
        self._player = threading.Thread(target=self._run_player, daemon=True)
        self._player.start()

    def _run_player(self) -> None:
        while self._timeline is not None and self.play_box is not None and self.play_box.value:
            t, _ = self._timeline
            k = getattr(self, "_frame", 0) + 1
            if k >= len(t):
                k = 0
            dt = float(t[k] - t[k - 1]) if k > 0 else 0.5
            time.sleep(min(max(dt / max(self._speed, 1e-3), 0.01), 1.0))
            self.show_frame(k)

    # ------------------------------------------------------------------ inspection
    @property
    def url(self) -> str:
        """Where to open the viewer."""
        host = "[::1]" if self.host == "::1" else self.host
        return f"http://{host}:{self.port}"

    def drawn_frames(self) -> Array:
        """(dof + 1, 4, 4) link frames as sent to the browser (base first)."""
        from ikstack.spatial import quat_to_matrix

        out = np.tile(np.eye(4), (len(self.robot.frames), 1, 1))
        for i, h in enumerate(self.robot.frames):
            out[i, :3, :3] = quat_to_matrix(np.asarray(h.wxyz, dtype=np.float64))
            out[i, :3, 3] = np.asarray(h.position, dtype=np.float64)
        return out

    def visible_ghosts(self) -> list[bool]:
        """Validity of each ghost now shown (the selected solution is the solid robot)."""
        return [s.valid for s in self.shown_ghosts]

    def fk_error(self) -> tuple[float, float]:
        """FK error [m, rad] of the shown configuration against the gizmo's target."""
        from ikstack.spatial import quat_to_matrix

        T = np.eye(4)
        T[:3, :3] = quat_to_matrix(np.asarray(self.gizmo.wxyz, dtype=np.float64))
        T[:3, 3] = np.asarray(self.gizmo.position, dtype=np.float64)
        perr, rerr = fk_errors(self.chain, self.q, T)
        return float(perr), float(rerr)

    def wait_for_client(self, timeout: float = 30.0) -> bool:
        """Wait until a browser is connected (True) or ``timeout`` seconds pass (False)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.server.get_clients():
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        """Stop the server."""
        if self.play_box is not None:
            self.play_box.value = False
        self.server.stop()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
