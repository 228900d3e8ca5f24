"""Decode a chunk stored in a file (what ``ikstack decode`` runs).

Chunk files are ``.npz`` archives with, per arm named in the profile, ``T_base_tcp_<arm>``
(H, 4, 4) TCP targets and ``q_observed_<arm>`` (dof,) measured joints [rad], and optionally a
scalar ``t0`` [s]. Results go to ``<prefix>.npz`` (``times``, ``ok``, ``q_<arm>``) and
``<prefix>.json`` (the summary), each written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ikstack.chunk.profile import load_profile
from ikstack.chunk.types import ChunkRequest, DecodedChunk
from ikstack.errors import InputError


def read_chunk(path: str | Path, arm_names: tuple[str, ...]) -> ChunkRequest:
    """A :class:`ChunkRequest` from a chunk ``.npz`` for these arms.

    Raises:
        InputError: unreadable file or a missing array (the message lists what is there).
    """
    try:
        z = np.load(Path(path), allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError("a single .npy array")
        with z:
            data = {k: np.array(z[k]) for k in z.files}
    except OSError as exc:
        raise InputError(f"cannot read chunk file {path}: {exc.strerror or exc}") from None
    except (ValueError, EOFError, zipfile.BadZipFile) as exc:
        why = "pickled data, never loaded" if "pickle" in str(exc) else str(exc)
        raise InputError(
            f"chunk file {path} is not a .npz archive of numeric arrays ({why})"
        ) from None
    for key, arr in data.items():
        if arr.dtype.kind not in "biuf":
            raise InputError(
                f"chunk file {path}: array {key!r} has dtype {arr.dtype}; real numbers are required"
            )
    T, q = {}, {}
    for arm in arm_names:
        for key in (f"T_base_tcp_{arm}", f"q_observed_{arm}"):
            if key not in data:
                raise InputError(
                    f"chunk file {path} has no array {key!r}; arrays present: "
                    f"{', '.join(sorted(data)) or 'none'}"
                )
        T[arm] = data[f"T_base_tcp_{arm}"].astype(np.float64)
        q[arm] = data[f"q_observed_{arm}"].astype(np.float64)
    t0 = float(data["t0"]) if "t0" in data else 0.0
    return ChunkRequest(T, q, t0)


def summarize(chunk: DecodedChunk) -> dict[str, Any]:
    """A JSON-ready summary of a decoded chunk (``ok`` repeats ``success`` and ``reason``
    repeats ``status`` under their former names, for one release)."""
    return {
        "success": chunk.success,
        "ok": chunk.success,
        "horizon": int(chunk.times.shape[0]),
        "t_first": float(chunk.times[0]) if chunk.times.size else None,
        "t_last": float(chunk.times[-1]) if chunk.times.size else None,
        "rejection": None
        if chunk.rejection is None
        else {
            "arm": chunk.rejection.arm,
            "knot": chunk.rejection.knot,
            "substep": chunk.rejection.substep,
            "status": str(chunk.rejection.status),
            "reason": str(chunk.rejection.status),
            "message": chunk.rejection.message,
        },
        "failures": [
            {
                "arm": f.arm,
                "knot": f.knot,
                "substep": f.substep,
                "status": str(f.status),
                "reason": str(f.status),
            }
            for f in chunk.failures
        ],
        "metadata": chunk.metadata,
    }


def _atomic_write(path: Path, write: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def decode_file(
    profile_path: str | Path, chunk_npz_path: str | Path, out_prefix: str | Path
) -> dict[str, Any]:
    """Decode a chunk file with a profile; write ``<out_prefix>.npz`` and ``.json``.

    Returns:
        The summary dict (also written as JSON), with ``outputs`` naming the files.

    Raises:
        ConfigError: an invalid profile. InputError: an invalid chunk file.
    """
    profile = load_profile(profile_path)
    decoder = profile.decoder()
    request = read_chunk(chunk_npz_path, decoder.arm_names)
    chunk = decoder.decode(request)
    prefix = Path(out_prefix)
    npz_path = prefix.with_name(prefix.name + ".npz")
    json_path = prefix.with_name(prefix.name + ".json")
    arrays: dict[str, Any] = {"times": chunk.times, "ok": np.array(chunk.success)}
    for arm, q in chunk.q.items():
        arrays[f"q_{arm}"] = q

    def write_npz(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    summary = summarize(chunk)
    summary.update(
        profile=str(profile.path),
        profile_name=profile.name,
        chunk=str(chunk_npz_path),
        outputs={"npz": str(npz_path), "json": str(json_path)},
    )

    def write_json(tmp: str) -> None:
        Path(tmp).write_text(json.dumps(summary, indent=2, default=str) + "\n")

    _atomic_write(npz_path, write_npz)
    _atomic_write(json_path, write_json)
    return summary
