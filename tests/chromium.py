"""Headless Chromium driven over the DevTools protocol, for the run viewer's browser tests.

Debian's ``chromium`` (installed by ``.ci/setup.d/40-chromium.sh``) runs with a new, empty
profile and everything that would reach the network turned off; the page is a local file. The
protocol is spoken directly over a WebSocket (``websocket-client``): nothing is downloaded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_binary() -> str:
    found = shutil.which("chromium")
    if found is None:
        raise RuntimeError(
            "chromium is not installed; run .ci/setup (its 40-chromium.sh installs Debian's "
            "chromium package)"
        )
    return found


class Browser:
    """One headless Chromium with one page, closed by :meth:`close` (or ``with``)."""

    def __init__(self, width: int = 1200, height: int = 900) -> None:
        import websocket

        self.profile = Path(tempfile.mkdtemp(prefix="agentkit-chromium-"))
        self.process = subprocess.Popen(
            [
                chromium_binary(),
                *FLAGS,
                f"--user-data-dir={self.profile}",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = self._port()
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError("chromium opened no page within 30 s")
            time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30)
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.call("Page.enable")
        self.call("Runtime.enable")

    def _port(self) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.process.returncode}")
            if marker.exists():
                first = marker.read_text().split("\n", 1)[0].strip()
                if first.isdigit():
                    return int(first)
            time.sleep(0.05)
        self.close()
        raise RuntimeError("chromium wrote no DevToolsActivePort within 30 s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result (events meanwhile are kept)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        """The first event named ``method`` (one already received counts)."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    self.events.remove(event)
                    return event
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} event within {timeout} s")
            self.events.append(json.loads(self.ws.recv()))

    def open(self, path: Path) -> None:
        """Load a local file and wait until it has loaded."""
        self.events.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (awaited when it is a promise)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        import base64

        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
