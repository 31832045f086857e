"""A headless Chromium for the site's tests, driven over its DevTools protocol on a pipe.

Chromium started with ``--remote-debugging-pipe`` reads the protocol's commands on its file
descriptor 3 and writes its replies and events on 4, each message one JSON object ended by a
NUL byte: the standard library is enough to drive it, no browser driver nor websocket client.
:class:`Chromium` opens one tab, loads pages in it and reports what a person would see go wrong:
a page that did not load, errors in the JavaScript console, uncaught exceptions, resources that
failed to load, images that did not load, and what the page fetched from another site (which a
reader offline would miss); it evaluates JavaScript in the page and takes screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
# Headless, and quiet on a machine without a network: no sandbox (CI runs as root), no GPU, no
# first-run pages, and none of the background connections (updates, sync, QUIC) that would
# only fail and be logged.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
)
# Run as ``python -c BECOME READ WRITE EXECUTABLE ARGS...``: READ and WRITE become descriptors 3
# and 4 (moved above 4 first, so that neither overwrites the other), then EXECUTABLE runs.
BECOME = """import fcntl, os, sys
given = [int(fd) for fd in sys.argv[1:3]]
moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 5) for fd in given]
for fd in given:
    os.close(fd)
for target, fd in zip((3, 4), moved):
    os.dup2(fd, target)
    os.close(fd)
os.execv(sys.argv[3], sys.argv[3:])
"""
# Every image of the page asked for now (a lazy one too), then those that did not load.
BROKEN_IMAGES = """
Promise.all(Array.from(document.images, (img) => {
    img.loading = "eager";
    return img.decode().catch(() => null);
})).then(() => Array.from(document.images)
    .filter((img) => !(img.complete && img.naturalWidth > 0))
    .map((img) => img.currentSrc || img.src || img.outerHTML.slice(0, 200)))
"""


def find_chromium() -> str | None:
    """The path of a Chromium (or Chrome) executable on the PATH, or None."""
    for name in NAMES:
        if path := shutil.which(name):
            return path
    return None


@dataclass
class Visit:
    """What loading one page showed: its title, the problems seen, the images that failed and
    the addresses it fetched from another site."""

    url: str
    title: str = ""
    errors: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)
    offsite: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every error, broken image and fetch from another site, one line each."""
        return (
            self.errors
            + [f"image did not load: {src}" for src in self.broken_images]
            + [f"fetched from another site: {url}" for url in self.offsite]
        )


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, stopped, or did not answer in time."""


class Chromium:
    """One headless Chromium with one tab of ``width`` x ``height`` CSS pixels.

    Parameters
    ----------
    executable : str
        The Chromium executable.
    width, height : int
        The size of the window, in CSS pixels (a device scale factor of 1).
    timeout : float
        Seconds to wait for an answer or for a page to load.
    """

    def __init__(
        self, executable: str, width: int = 1280, height: int = 800, timeout: float = 60.0
    ) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(
            prefix="satdt-chromium-", ignore_cleanup_errors=True
        )
        to_browser, self._to_browser = os.pipe()
        self._from_browser, from_browser = os.pipe()
        args = [
            *FLAGS,
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        # the child gets the pipes as its descriptors 3 and 4 from a Python that then becomes
        # Chromium (a shell's redirections may not take descriptors above 9)
        self._process = subprocess.Popen(
            [sys.executable, "-c", BECOME, str(to_browser), str(from_browser), executable, *args],
            pass_fds=(to_browser, from_browser),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._closed = False
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._next_id = 0
        try:
            target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
            attached = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})
            self._session = attached["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.send(f"{domain}.enable")
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop Chromium and remove its profile (once: closing again does nothing)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(BrowserError, OSError):  # asked to close: it flushes its profile
            self._send("Browser.close")
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._profile.cleanup()  # what its helpers still write there is left, not an error

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one command to the tab and return its result."""
        return self._send(method, params, self._session)

    def _send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply is None:
                raise BrowserError(f"no answer to {method} in {self.timeout} s")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message from Chromium, or None when ``deadline`` passes first."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                return None
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium stopped (exit code {self._process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _wait_for(self, event: str, deadline: float) -> None:
        while not any(e["method"] == event for e in self._events):
            message = self._receive(deadline)
            if message is None:
                raise BrowserError(f"no {event} in {self.timeout} s")
            if "method" in message:
                self._events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise's, once settled)."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression.strip()[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def visit(self, url: str) -> Visit:
        """Load ``url``, wait for it and its images, and report what went wrong."""
        self._events.clear()
        deadline = time.monotonic() + self.timeout
        navigated = self.send("Page.navigate", {"url": url})
        if navigated.get("errorText"):
            return Visit(url, errors=[f"{url}: {navigated['errorText']}"])
        self._wait_for("Page.loadEventFired", deadline)
        visit = Visit(url, broken_images=self.evaluate(BROKEN_IMAGES))
        self.evaluate("new Promise((done) => setTimeout(done, 50))")  # late errors
        visit.title = self.evaluate("document.title")
        status = self.evaluate('performance.getEntriesByType("navigation")[0].responseStatus')
        if status != 200:
            visit.errors.append(f"{url}: HTTP status {status}")
        visit.errors += [_describe(e) for e in self._events if _is_error(e)]
        here = urllib.parse.urlsplit(url).netloc
        for event in self._events:
            if event["method"] == "Network.requestWillBeSent":
                fetched = urllib.parse.urlsplit(event["params"]["request"]["url"])
                if fetched.scheme in ("http", "https") and fetched.netloc != here:
                    visit.offsite.append(fetched.geturl())
        return visit

    def wait_until(self, expression: str, timeout: float | None = None) -> Any:
        """Evaluate ``expression`` every 0.1 s until it is truthy; return its value."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not (value := self.evaluate(expression)):
            if time.monotonic() > deadline:
                raise BrowserError(f"still false after {timeout} s: {expression.strip()[:80]}")
            time.sleep(0.1)
        return value

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        """A PNG of the window (``full_page``: of the whole page) written to ``path``."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["captureBeyondViewport"] = True
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
        data = self.send("Page.captureScreenshot", params)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))


def _is_error(event: dict[str, Any]) -> bool:
    method, params = event["method"], event.get("params", {})
    if method == "Runtime.exceptionThrown":
        return True
    if method == "Runtime.consoleAPICalled":
        return params.get("type") in ("error", "assert")
    if method == "Log.entryAdded":
        return params.get("entry", {}).get("level") == "error"  # a resource that failed too
    return False


def _describe(event: dict[str, Any]) -> str:
    method, params = event["method"], event.get("params", {})
    if method == "Runtime.exceptionThrown":
        details = params["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text", "")
        return f"uncaught exception: {text} ({details.get('url', '')}:{details.get('lineNumber')})"
    if method == "Runtime.consoleAPICalled":
        args = " ".join(
            str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
        )
        return f"console.{params['type']}: {args}"
    entry = params["entry"]
    return f"{entry.get('source')}: {entry.get('text')} ({entry.get('url', '')})"
