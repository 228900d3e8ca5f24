"""A headless Chromium driven over the DevTools protocol (a websocket), for the viewer tests.

Chromium comes from the system (Debian's ``chromium`` package, installed by CI); the protocol
client is the ``websockets`` package viser already depends on. Loopback addresses only.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "headless_shell")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        p = shutil.which(name)
        if p:
            return p
    return None


class Browser:
    """One headless page: ``open(url)``, ``text()``, ``screenshot()`` (an RGB array)."""

    def __init__(self, width: int = 1000, height: int = 640) -> None:
        from websockets.sync.client import connect

        exe = find_chromium()
        if exe is None:
            raise RuntimeError("no chromium on PATH")
        self._dir = tempfile.mkdtemp(prefix="ikstack-chromium-")
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--no-first-run",
                "--disable-extensions",
                "--disable-dev-shm-usage",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--ignore-gpu-blocklist",
                "--disable-features=BackForwardCache",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._dir}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self._dir) / "DevToolsActivePort"
        end = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > end or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        pages = []
        while not pages:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                pages = [p for p in json.load(r) if p.get("type") == "page"]
            if not pages:
                time.sleep(0.1)
        self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=20)
        self._id = 0
        self.call("Page.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def call(self, method: str, params: dict | None = None, timeout: float = 60.0) -> dict:
        self._id += 1
        mid = self._id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params or {}}))
        end = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, end - time.monotonic())))
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def open(self, url: str) -> None:
        if not url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
            raise ValueError(f"loopback URLs only; got {url}")
        self.call("Page.navigate", {"url": url})

    def open_blank(self) -> None:
        """Leave the current page (its websocket closes)."""
        self.call("Page.navigate", {"url": "about:blank"})

    def eval(self, expression: str):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return r.get("result", {}).get("value")

    def text(self) -> str:
        return str(self.eval("document.body ? document.body.innerText : ''") or "")

    def wait_text(self, needle: str, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        txt = ""
        while time.monotonic() < end:
            txt = self.text()
            if needle in txt:
                return txt
            time.sleep(0.2)
        raise TimeoutError(f"{needle!r} not on the page after {timeout} s; page text: {txt[:500]}")

    def screenshot(self, save: str | os.PathLike[str] | None = None) -> np.ndarray:
        from PIL import Image

        data = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
        if save is not None:
            Path(save).parent.mkdir(parents=True, exist_ok=True)
            Path(save).write_bytes(data)
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def settle(
        self, seconds: float = 1.0, path: str | os.PathLike[str] | None = None
    ) -> np.ndarray:
        """Screenshots until two in a row agree (the scene finished updating), the last one
        (also saved to ``path`` when given)."""
        prev = self.screenshot()
        end = time.monotonic() + 20
        while time.monotonic() < end:
            time.sleep(seconds)
            cur = self.screenshot()
            if np.array_equal(cur, prev):
                break
            prev = cur
        if path is not None:
            from PIL import Image

            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(prev).save(path)
        return prev

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self._dir, ignore_errors=True)


def hue_mask(
    img: np.ndarray, lo_deg: float, hi_deg: float, min_sat: float = 0.35, min_val: float = 0.25
) -> np.ndarray:
    """Pixels whose hue lies in [lo, hi] degrees and that are saturated and bright enough."""
    rgb = img.astype(np.float64) / 255.0
    mx, mn = rgb.max(axis=2), rgb.min(axis=2)
    d = mx - mn
    sat = np.where(mx > 0, d / np.maximum(mx, 1e-9), 0)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    h = np.zeros_like(mx)
    nz = d > 1e-9
    rm = nz & (mx == r)
    gm = nz & (mx == g) & ~rm
    bm = nz & ~rm & ~gm
    h[rm] = (60 * ((g - b)[rm] / d[rm])) % 360
    h[gm] = 60 * ((b - r)[gm] / d[gm]) + 120
    h[bm] = 60 * ((r - g)[bm] / d[bm]) + 240
    return (h >= lo_deg) & (h <= hi_deg) & (sat >= min_sat) & (mx >= min_val)
