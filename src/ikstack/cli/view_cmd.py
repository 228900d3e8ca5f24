"""``ikstack view``: the robot in the browser, a target gizmo solved live, episode playback."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikstack.cli.common import add_chain_arguments
from ikstack.errors import InputError
from ikstack.vocabulary import VIEWER_METHODS

if TYPE_CHECKING:
    from ikstack.model import Chain


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "view",
        help="show a robot in the browser (viser): sliders, IK gizmo, episode playback",
        description="Start the browser viewer on a loopback port and print its URL. Drag the "
        "target gizmo to solve IK live (analytic where the family allows, every "
        "solution shown as a ghost), move joints with the sliders, or play a solved "
        "episode of `ikstack solve` with --episode. Needs the 'viz' extra.",
    )
    add_chain_arguments(p)
    add_view_arguments(p)
    p.add_argument(
        "--episode",
        help="a solved episode (OUTPUT/<name>.csv|.npz|.parquet) to play; "
        "the robot defaults to the one in OUTPUT/summary.json",
    )
    p.add_argument(
        "--method",
        choices=VIEWER_METHODS,
        default="auto",
        help="IK of the gizmo: auto (analytic where the family allows) or numerical",
    )
    p.add_argument("--no-meshes", action="store_true", help="draw capsules and frames only")
    return p


def add_view_arguments(p: argparse.ArgumentParser) -> None:
    """``--host``, ``--port`` and ``--duration`` (shared with ``servo-demo --view``)."""
    p.add_argument("--host", default="127.0.0.1", help="loopback address to listen on")
    p.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    p.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="S",
        help="serve this many seconds, then exit (default: until Ctrl-C)",
    )
    p.add_argument(
        "--once", action="store_true", help="exit when the last browser that connected has left"
    )


def _chain(args: argparse.Namespace) -> tuple[Chain, list[Any]]:
    from ikstack import robots
    from ikstack.model import load_mjcf, load_urdf

    given = [n for n in ("robot", "urdf", "mjcf") if getattr(args, n, None)]
    if len(given) > 1:
        raise InputError(f"give one of --robot, --urdf or --mjcf; got {', '.join(given)}")
    if not given and getattr(args, "episode", None):
        args.robot = _episode_robot(Path(args.episode))
        given = ["robot"]
    if not given:
        raise InputError(
            f"choose a model: --robot NAME ({', '.join(robots.names())}), "
            "--urdf PATH or --mjcf PATH"
        )
    meshes: list[Any] = []
    if args.robot:
        if args.base or args.tip:
            raise InputError("--base/--tip go with --urdf or --mjcf")
        return robots.load(args.robot), meshes
    from ikstack.viz.geometry import mjcf_meshes, urdf_meshes

    if args.urdf:
        chain = load_urdf(args.urdf, args.base, args.tip)
        if not args.no_meshes:
            meshes, failed = urdf_meshes(chain, args.urdf)
            if failed:
                print(
                    f"view: {len(failed)} mesh(es) not loaded (capsules drawn): "
                    f"{', '.join(failed[:5])}",
                    file=sys.stderr,
                )
        return chain, meshes
    chain = load_mjcf(args.mjcf, args.base, args.tip)
    if not args.no_meshes:
        meshes, _ = mjcf_meshes(chain, args.mjcf)
    return chain, meshes


def _episode_robot(episode: Path) -> str:
    from ikstack import robots

    summary = episode.parent / "summary.json"
    try:
        name = json.loads(summary.read_text(encoding="utf-8"))["robot"]
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(
            f"{episode}: no robot given and no readable {summary} naming one; "
            "add --robot, --urdf or --mjcf"
        ) from None
    if name not in robots.names():
        raise InputError(
            f"{summary} names robot {name!r}, which is not bundled; add --urdf or --mjcf"
        )
    return str(name)


def serve(viewer: Any, duration: float | None, once: bool = False) -> None:
    """Keep the viewer up for ``duration`` seconds (until Ctrl-C when None); with ``once``,
    only until the browsers that connected have all left."""
    print(f"viewer at {viewer.url} (Ctrl-C to stop)", flush=True)
    end = None if duration is None else time.monotonic() + max(0.0, duration)
    seen = False
    try:
        while end is None or time.monotonic() < end:
            time.sleep(0.1)
            clients = bool(viewer.server.get_clients())
            seen = seen or clients
            if once and seen and not clients:
                break
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()


def run(args: argparse.Namespace) -> int:
    chain, meshes = _chain(args)
    from ikstack.jobs.formats import read_solved
    from ikstack.viz import Viewer

    solved = None
    if args.episode:
        solved = read_solved(args.episode)
        if tuple(solved.joint_names) != chain.joint_names:
            raise InputError(
                f"{args.episode}: joints {', '.join(solved.joint_names)} do not "
                f"match the chain's {', '.join(chain.joint_names)}"
            )
    viewer = Viewer(chain, host=args.host, port=args.port, meshes=meshes, method=args.method)
    if solved is not None:
        viewer.play(
            solved.timestamps,
            solved.q,
            success=solved.success,
            position_error=solved.position_error,
            rotation_error=solved.rotation_error,
        )
    serve(viewer, args.duration, args.once)
    return 0
