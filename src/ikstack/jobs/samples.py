"""The bundled sample dataset: short episodes of TCP poses for UR5, Panda and Marvin.

Each episode is the forward kinematics of a smooth joint path (a sum of slow sinusoids around a
bent, non-singular posture) that stays inside the joint limits and the coupled-joint
constraints, sampled at 50 Hz, so every frame is reachable. Regenerate the files with
``python benchmarks/make_sample_dataset.py``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_keyword
from ikstack.errors import InputError
from ikstack.jobs.options import SAMPLE_HOMES, SAMPLE_PREFIX
from ikstack.kinematics import fk
from ikstack.model import Chain
from ikstack.robots import data_path, load
from ikstack.spatial import to_pose

Array = NDArray[np.float64]

SAMPLE_EPISODES = 3
SAMPLE_FRAMES = 200
SAMPLE_RATE = 50.0  # [Hz]
#: prefix of an INPUT naming a bundled sample: ``sample:ur5``


def sample_path(robot: str = "ur5") -> Path:
    """Folder of the bundled sample episodes of ``robot`` (CSV files).

    Raises:
        InputError: no sample is bundled for ``robot`` (the message lists those that are).
    """
    if robot not in SAMPLE_HOMES:
        raise InputError(
            f"no bundled sample for {robot!r}; samples exist for {', '.join(SAMPLE_HOMES)}"
        )
    return data_path("samples") / robot


def resolve_input(text: str) -> str:
    """``sample:NAME`` -> the bundled sample folder of NAME; anything else unchanged."""
    if text.startswith(SAMPLE_PREFIX):
        return str(sample_path(text[len(SAMPLE_PREFIX) :]))
    return text


def joint_path(
    chain: Chain, home: Array, rng: np.random.Generator, frames: int, rate: float
) -> tuple[Array, Array]:
    """A smooth joint path (frames, dof) around ``home`` inside limits and constraints.

    Returns:
        ``(t, q)``: timestamps [s] and joint positions.
    """
    t = np.arange(frames) / rate
    dof = chain.dof
    amp = rng.uniform(0.1, 0.35, size=(2, dof))
    freq = rng.uniform(0.05, 0.3, size=(2, dof))  # [Hz]
    phase = rng.uniform(0.0, 2 * math.pi, size=(2, dof))
    wave = (
        amp[:, None, :]
        * np.sin(2 * math.pi * freq[:, None, :] * t[None, :, None] + phase[:, None, :])
    ).sum(axis=0)
    wave -= wave[0]  # start exactly at the (jittered) home posture
    start = home + rng.uniform(-0.15, 0.15, size=dof)
    q = start + wave
    margin = 0.05
    lo = chain.lower + margin
    hi = chain.upper - margin
    q = np.clip(q, lo, hi)
    for c in chain.constraints:  # shrink the motion towards the start until it fits
        scale = 1.0
        while not bool(np.all(c.satisfied(q, 0.02))) and scale > 0.05:
            scale *= 0.7
            q = np.clip(start + scale * wave, lo, hi)
    if not (bool(np.all(chain.within_limits(q))) and bool(np.all(chain.constraints_satisfied(q)))):
        raise InputError(f"sample path for {chain.name} leaves the limits; change its home")
    return t, q


def write_samples(
    folder: str | Path | None = None,
    robots: tuple[str, ...] | None = None,
    episodes: int = SAMPLE_EPISODES,
    frames: int = SAMPLE_FRAMES,
    rate: float = SAMPLE_RATE,
    rng: int | np.random.Generator = 0,
    *,
    seed: int | None = None,
) -> list[Path]:
    """Write the sample episodes as ``<folder>/<robot>/episode_NNN.csv`` (default: the
    bundled location). Poses are rounded to 1e-9 (metres, quaternion components).

    ``rng``: an int seed (robot ``k`` of the list draws from ``default_rng([rng, k])``: the
    bundled files are seed 0) or a ``numpy.random.Generator`` all robots draw from in turn
    (``seed``, its former name, warns)."""
    if seed is not None:
        rng = renamed_keyword({"seed": seed}, "seed", "rng", rng, "write_samples", default=0)
    base = Path(folder) if folder is not None else data_path("samples")
    written = []
    for k, robot in enumerate(robots or tuple(SAMPLE_HOMES)):
        chain = load(robot)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng([rng, k])
        home = np.asarray(SAMPLE_HOMES[robot], dtype=np.float64)
        out = base / robot
        out.mkdir(parents=True, exist_ok=True)
        for e in range(episodes):
            t, q = joint_path(chain, home, gen, frames, rate)
            p, quat = to_pose(fk(chain, q))
            rows = np.column_stack([t, p, quat])
            path = out / f"episode_{e:03d}.csv"
            lines = ["timestamp,x,y,z,qw,qx,qy,qz"]
            lines += [",".join(f"{v:.9g}" for v in row) for row in rows]
            path.write_text("\n".join(lines) + "\n")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    """Regenerate the bundled sample dataset."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--folder", default=None, help="where to write (default: bundled)")
    ap.add_argument("--episodes", type=int, default=SAMPLE_EPISODES)
    ap.add_argument("--frames", type=int, default=SAMPLE_FRAMES)
    args = ap.parse_args(argv)
    for p in write_samples(args.folder, episodes=args.episodes, frames=args.frames):
        print(p)


if __name__ == "__main__":
    main()
