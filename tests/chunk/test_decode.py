"""Chunk decoding: subdivision, timestamps, atomic rejection, timeline, backends, workers."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from chunk_helpers import q0, reachable_chunk

import ikstack.ik.analytic as analytic_pkg
from ikstack.chunk import (
    ArmSpec,
    ChunkDecoder,
    ChunkRequest,
    ParallelChunkDecoder,
    bundled_profile_path,
    commit_to_timeline,
    decode_file,
    load_profile,
)
from ikstack.diffik import DiffQPConfig
from ikstack.errors import ConfigError, InputError
from ikstack.ik import IKResult
from ikstack.kinematics import fk

INTERVAL = 1.0 / 30.0


def diff_specs(arms, **cfg):
    config = DiffQPConfig(**cfg)
    return [ArmSpec(name, chain, "diff", config) for name, chain in arms.items()]


@pytest.mark.parametrize("H", [16, 64])
def test_h16_and_h64_chunks_decode_within_limits_and_track_the_knots(taccap_arms, H):
    dec = ChunkDecoder(diff_specs(taccap_arms), INTERVAL)
    req = reachable_chunk(taccap_arms, H, t0=2.0)
    out = dec.decode(req)
    assert out.success and out.rejection is None and not out.failures
    np.testing.assert_allclose(out.times, 2.0 + INTERVAL * np.arange(1, H + 1))
    for name, chain in taccap_arms.items():
        q = out.q[name]
        assert q.shape == (H, 7)
        assert chain.within_limits(q, margin=chain.kinematic_margin, tol=1e-9).all()
        assert chain.constraints_satisfied(q).all()
        err = np.linalg.norm(fk(chain, q)[:, :3, 3] - req.T_base_tcp[name][:, :3, 3], axis=1)
        assert err.max() < 1e-3  # [m]: reachable, slow chunk: the knots are tracked
        steps = np.abs(np.diff(np.vstack([req.q_observed[name], q]), axis=0))
        assert steps.max() <= chain.velocity_limits[0] * INTERVAL * (1 + 1e-9)
        lag = out.metadata["diff_ik_lag"][name]
        assert lag["steps"] == 9 * H and lag["exceedances"] == 0


def test_each_segment_is_split_into_substeps_of_the_actual_duration(taccap_arms, monkeypatch):
    arms = {"left": taccap_arms["left"]}
    dec = ChunkDecoder(diff_specs(arms), 0.01)  # 10 ms knots, 4 ms bound: 3 substeps of 3.33 ms
    qp = dec.decoders["left"].qp
    calls = []
    real = qp.step_trusted

    def spy(q, T, dt):
        r = real(q, T, dt)
        calls.append((T.copy(), dt, r.q.copy()))
        return r

    monkeypatch.setattr(qp, "step_trusted", spy)
    req = reachable_chunk(arms, 4)
    out = dec.decode(req)
    assert out.success and len(calls) == 12
    assert all(dt == pytest.approx(0.01 / 3, rel=1e-15) for _, dt, _ in calls)
    # only the final joint state of each source knot is kept
    for k in range(4):
        np.testing.assert_array_equal(out.q["left"][k], calls[3 * k + 2][2])
    # substep targets are flange poses on the SE(3) segment, the last one the knot itself
    tool = arms["left"].T_tip_tcp
    np.testing.assert_allclose(calls[2][0] @ tool, req.T_base_tcp["left"][0], atol=1e-12)
    first = fk(arms["left"], req.q_observed["left"])
    mid = calls[0][0] @ tool
    assert np.linalg.norm(mid[:3, 3] - first[:3, 3]) == pytest.approx(
        np.linalg.norm(req.T_base_tcp["left"][0][:3, 3] - first[:3, 3]) / 3, rel=1e-9
    )


def test_whole_chunk_is_rejected_when_only_the_last_knot_of_the_second_arm_fails(taccap_arms):
    H = 16
    dec = ChunkDecoder(diff_specs(taccap_arms), INTERVAL)  # library default: lag_policy abort
    req = reachable_chunk(taccap_arms, H)
    T = {k: v.copy() for k, v in req.T_base_tcp.items()}
    T["right"][-1, 2, 3] += 0.3  # the last right knot jumps 30 cm: the QP can only lag behind
    bad = ChunkRequest(T, req.q_observed, req.t0)
    out = dec.decode(bad)
    assert not out.success and out.q == {}
    assert (out.rejection.arm, out.rejection.knot, out.rejection.status) == (
        "right",
        H - 1,
        "tracking_lag",
    )
    assert [f.arm for f in out.failures] == ["right"]
    assert "right" in str(out.rejection) and f"knot {H - 1}" in str(out.rejection)
    with pytest.raises(InputError, match="rejected"):
        commit_to_timeline(out, 0.0)
    # the same chunk under the report policy is kept, and its lag is recorded per arm
    rep = ChunkDecoder(diff_specs(taccap_arms, lag_policy="report"), INTERVAL).decode(bad)
    assert rep.success
    lag = rep.metadata["diff_ik_lag"]
    assert lag["right"]["exceedances"] > 0 and lag["right"]["worst_position_mm"] > 5.0
    assert lag["left"]["exceedances"] == 0


def test_each_chunk_starts_from_the_observed_state_with_a_fresh_solver(taccap_arms):
    dec = ChunkDecoder(diff_specs(taccap_arms), INTERVAL)
    req = reachable_chunk(taccap_arms, 8)
    first = dec.decode(req)
    far = {k: v.copy() for k, v in req.T_base_tcp.items()}
    far["left"][:, 0, 3] -= 0.05
    dec.decode(ChunkRequest(far, req.q_observed))  # a different chunk in between
    again = dec.decode(req)
    for name in taccap_arms:
        np.testing.assert_array_equal(first.q[name], again.q[name])


def test_timeline_commit_drops_expired_rows_and_starts_at_the_first_row_at_or_after_start(
    taccap_arms,
):
    out = ChunkDecoder(diff_specs(taccap_arms), INTERVAL).decode(
        reachable_chunk(taccap_arms, 6, t0=10.0)
    )
    seg = commit_to_timeline(out, 10.0 + 2 * INTERVAL)  # exactly the second row's time
    assert seg.first_row == 1 and seg.times.shape == (5,)
    np.testing.assert_array_equal(seg.q["left"], out.q["left"][1:])
    seg = commit_to_timeline(out, 10.0 + 2.5 * INTERVAL)
    assert seg.first_row == 2
    assert commit_to_timeline(out, 99.0).times.size == 0
    assert commit_to_timeline(out, 0.0).first_row == 0


def test_malformed_requests_raise_named_errors(taccap_arms):
    dec = ChunkDecoder(diff_specs(taccap_arms), INTERVAL)
    req = reachable_chunk(taccap_arms, 4)
    short = dict(req.T_base_tcp)
    short["right"] = short["right"][:3]
    with pytest.raises(InputError, match="same H"):
        dec.decode(ChunkRequest(short, req.q_observed))
    with pytest.raises(InputError):
        dec.decode(ChunkRequest({"left": req.T_base_tcp["left"]}, {"left": q0()["left"]}))
    nan_q = dict(req.q_observed)
    nan_q["left"] = np.full(7, np.nan)
    with pytest.raises(InputError):
        dec.decode(ChunkRequest(req.T_base_tcp, nan_q))
    with pytest.raises(ConfigError):
        ChunkDecoder(diff_specs(taccap_arms), 0.0)


# ---------------------------------------------------------------- analytic backend
class FakeAnalyticIK:
    """Stands in for ikstack.ik.analytic.AnalyticIK: the first candidate jumps branch, the
    second is the true solution (a table of FK-sampled targets)."""

    table: list[tuple[np.ndarray, np.ndarray]] = []

    def __init__(self, chain, mode="near"):
        self.chain = chain
        assert mode == "near"

    def solve(self, T, q0=None, return_all=False):
        T = np.asarray(T)
        for Tk, qk in self.table:
            if np.allclose(Tk, T[0], atol=1e-12):
                jumpy = qk.copy()
                jumpy[0] += math.radians(30.0)  # a far branch (wrong pose too)
                qa = np.array([jumpy, qk])[None]
                return IKResult(
                    jumpy[None],
                    np.array([True]),
                    np.zeros(1),
                    np.zeros(1),
                    np.zeros(1, dtype=np.int64),
                    "fake",
                    q_all=qa,
                    valid_all=np.array([[True, True]]),
                )
        q = np.asarray(q0)[:1]
        return IKResult(
            q,
            np.array([False]),
            np.ones(1),
            np.ones(1),
            np.ones(1, dtype=np.int64),
            "fake",
            q_all=q[None],
            valid_all=np.array([[False]]),
        )


def test_analytic_backend_picks_the_closest_valid_branch_and_checks_jumps(taccap_arms, monkeypatch):
    chain = taccap_arms["left"]
    qs = q0()["left"] + np.outer(np.arange(1, 6), np.radians([0.3, -0.2, 0.1, 0.2, 0.1, 0.1, -0.1]))
    T = fk(chain, qs)
    FakeAnalyticIK.table = list(zip(T, qs, strict=True))
    monkeypatch.setattr(analytic_pkg, "AnalyticIK", FakeAnalyticIK, raising=False)
    dec = ChunkDecoder([ArmSpec("left", chain, "analytic")], INTERVAL)
    out = dec.decode(ChunkRequest({"left": T}, {"left": q0()["left"]}))
    assert out.success
    np.testing.assert_allclose(out.q["left"], qs, atol=1e-15)
    # a knot 3 deg away from the seed fails the 1.8 deg branch check
    qs2 = qs.copy()
    qs2[3:, 1] += math.radians(3.0)
    T2 = fk(chain, qs2)
    FakeAnalyticIK.table = list(zip(T2, qs2, strict=True))
    out2 = dec.decode(ChunkRequest({"left": T2}, {"left": q0()["left"]}))
    assert not out2.success and (out2.rejection.knot, out2.rejection.status) == (3, "branch_jump")
    # an unreachable knot is an IK failure
    T3 = T.copy()
    T3[2, 0, 3] += 5.0
    FakeAnalyticIK.table = list(zip(T, qs, strict=True))
    out3 = dec.decode(ChunkRequest({"left": T3}, {"left": q0()["left"]}))
    assert (out3.rejection.knot, out3.rejection.status) == (2, "ik_failed")


def test_analytic_backend_with_the_real_solver_decodes_a_reachable_chunk(taccap_arms):
    if not hasattr(analytic_pkg, "AnalyticIK"):
        pytest.skip("ikstack.ik.analytic.AnalyticIK is not in this build")
    prof = load_profile(bundled_profile_path("marvin_bimanual"))  # analytic, the default
    req = reachable_chunk(taccap_arms, 16)
    out = prof.decoder().decode(req)
    assert out.success, out.rejection
    for name, chain in taccap_arms.items():
        err = np.linalg.norm(
            fk(chain, out.q[name])[:, :3, 3] - req.T_base_tcp[name][:, :3, 3], axis=1
        )
        assert err.max() < 1e-4
        steps = np.abs(np.diff(np.vstack([req.q_observed[name], out.q[name]]), axis=0))
        assert steps.max() <= math.radians(1.8)


def test_analytic_backend_without_a_solver_is_a_clear_config_error(taccap_arms, monkeypatch):
    monkeypatch.delattr(analytic_pkg, "AnalyticIK", raising=False)
    with pytest.raises(ConfigError, match="ik_method: diff"):
        ChunkDecoder([ArmSpec("left", taccap_arms["left"], "analytic")], INTERVAL)


# ---------------------------------------------------------------- files
def test_decode_file_writes_joint_knots_and_metadata(tmp_path, taccap_arms):
    req = reachable_chunk(taccap_arms, 16, t0=1.5)
    arrays = {"t0": np.array(1.5)}
    for name in taccap_arms:
        arrays[f"T_base_tcp_{name}"] = req.T_base_tcp[name]
        arrays[f"q_observed_{name}"] = req.q_observed[name]
    chunk = tmp_path / "chunk.npz"
    np.savez(chunk, **arrays)
    summary = decode_file(bundled_profile_path("marvin_bimanual_diff"), chunk, tmp_path / "out")
    assert summary["ok"] and summary["horizon"] == 16
    with np.load(tmp_path / "out.npz") as z:
        assert z["q_left"].shape == (16, 7) and z["times"][0] == pytest.approx(1.5 + INTERVAL)
    meta = json.loads((tmp_path / "out.json").read_text())
    assert meta["metadata"]["diff_ik_lag"]["right"]["steps"] == 144
    # written out under the new key; the former key repeats it for one release
    assert meta["metadata"]["ik_method"] == {"left": "diff", "right": "diff"}
    assert meta["metadata"]["ik_backend"] == meta["metadata"]["ik_method"]
    assert meta["success"] is meta["ok"] is True
    del arrays["q_observed_right"]
    np.savez(chunk, **arrays)
    with pytest.raises(InputError, match="q_observed_right"):
        decode_file(bundled_profile_path("marvin_bimanual_diff"), chunk, tmp_path / "out2")


def test_both_decoders_reject_repeated_or_missing_arm_names(taccap_arms):
    specs = diff_specs(taccap_arms)
    twice = [specs[0], specs[0]]
    for cls in (ChunkDecoder, ParallelChunkDecoder):
        with pytest.raises(ConfigError, match="unique and at least one; got \\['left', 'left'\\]"):
            cls(twice, INTERVAL)
        with pytest.raises(ConfigError, match="at least one; got \\[\\]"):
            cls([], INTERVAL)


# ---------------------------------------------------------------- worker processes
@pytest.fixture(scope="module")
def parallel_decoder():
    prof = load_profile(bundled_profile_path("marvin_bimanual_diff"))
    dec = prof.parallel_decoder()
    yield prof, dec
    dec.close()


def test_parallel_workers_match_the_inline_decode_and_persist(parallel_decoder, taccap_arms):
    prof, dec = parallel_decoder
    pids = dict(dec.worker_pids)
    inline = prof.decoder()
    for H in (16, 64):
        req = reachable_chunk(taccap_arms, H)
        a, b = dec.decode(req), inline.decode(req)
        assert a.success and b.success
        for name in taccap_arms:
            np.testing.assert_array_equal(a.q[name], b.q[name])
    assert dec.worker_pids == pids  # the same processes served every chunk


def test_parallel_decode_rejects_atomically_when_one_worker_fails(parallel_decoder, taccap_arms):
    prof, dec = parallel_decoder
    req = reachable_chunk(taccap_arms, 16)
    T = {k: v.copy() for k, v in req.T_base_tcp.items()}
    T["right"][-1, :3, 3] = 10.0  # out of reach
    out = dec.decode(ChunkRequest(T, req.q_observed))
    assert out.success  # the bundled profile's report policy records the lag instead of failing
    assert out.metadata["diff_ik_lag"]["right"]["exceedances"] > 0
    bad_q = dict(req.q_observed)
    bad_q["right"] = bad_q["right"].copy()
    bad_q["right"][3] = np.radians(58.0)  # J4 inside its margin: an empty box at knot 0
    out = dec.decode(ChunkRequest(req.T_base_tcp, bad_q))
    assert not out.success and out.q == {}
    assert (out.rejection.arm, out.rejection.knot, out.rejection.status) == (
        "right",
        0,
        "qp_infeasible",
    )
    with pytest.raises(InputError):
        dec.decode(ChunkRequest(req.T_base_tcp, {"left": [0.0] * 6, "right": bad_q["right"]}))
    assert dec.decode(req).success  # the workers still serve after errors


class InlineDecoder:
    """The in-process decoder behind the worker API: submit() decodes before it returns, so a
    control loop that submits a chunk blocks for the whole decode (the negative control)."""

    class Done:
        def __init__(self, chunk):
            self.chunk = chunk

        def done(self):
            return True

        def result(self):
            return self.chunk

    def __init__(self, decoder):
        self.decoder = decoder

    def submit(self, request):
        return self.Done(self.decoder.decode(request))


def control_loop(decoder, request, period_s=0.001):
    """A control loop in the calling thread: every tick does its work (here nothing) and polls
    the pending chunk; the chunk is submitted on the first tick. Returns the longest gap
    between consecutive ticks [s], the number of ticks and the decoded chunk."""
    pending = None
    last = time.monotonic()
    longest, ticks = 0.0, 0
    while True:
        now = time.monotonic()
        longest = max(longest, now - last)
        last = now
        ticks += 1
        if pending is None:
            pending = decoder.submit(request)
        elif pending.done():
            return longest, ticks, pending.result()
        time.sleep(period_s)


def test_control_loop_keeps_ticking_while_a_chunk_decodes(parallel_decoder, taccap_arms):
    prof, dec = parallel_decoder
    req = reachable_chunk(taccap_arms, 128)
    inline = InlineDecoder(prof.decoder())
    inline.decoder.decode(req)  # warm
    t0 = time.monotonic()
    inline.decoder.decode(req)
    decode_s = time.monotonic() - t0  # one inline decode of this chunk [s]

    def ticks_through(decoder):
        gap, ticks, out = control_loop(decoder, req)
        assert out.success
        return gap, ticks

    # The criterion: no tick gap during a decode longer than half of one decode's duration.
    # A loop that decodes inline stalls for a whole decode and must fail it (checked here, so
    # the test is known to be able to fail); with the worker processes the loop keeps ticking.
    gap_inline, _ = ticks_through(inline)
    assert gap_inline > 0.5 * decode_s, (gap_inline, decode_s)
    gap, ticks = ticks_through(dec)
    assert gap < 0.5 * decode_s, (gap, decode_s)
    assert ticks > 2
    pending = dec.submit(req)
    pending.result()
    assert set(pending.timings) == {"left", "right"}  # each worker's span on the shared clock
    assert all(t0 <= t1 and cpu >= 0 for t0, t1, cpu in pending.timings.values())
