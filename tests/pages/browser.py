"""A headless Chromium (Debian's ``chromium``) driven over the Chrome DevTools Protocol.

Only what the page tests need: open a tab, go to a URL and wait for its load event, evaluate script,
click an element and type with real input events, take full-page screenshots, and record every URL
the tab requested (``Network.requestWillBeSent``), so a test can fail on any request that leaves the
service. The protocol runs over one WebSocket (``websockets``' sync client) in flat session mode.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import shutil
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


class CDPError(RuntimeError):
    """The browser answered a command with an error, or did not answer in time."""


class Browser:
    """A Chromium process with a fresh profile and one CDP connection to it."""

    def __init__(self, binary: Path = CHROMIUM, start_timeout_s: float = 30.0) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="chipwatch-chromium-"))
        self.process = subprocess.Popen(
            [str(binary), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        url = self._await_endpoint(start_timeout_s)
        self._stack = ExitStack()
        self.ws = self._stack.enter_context(connect(url, max_size=None, open_timeout=start_timeout_s))
        self._ids = itertools.count(1)
        self._events: list[dict[str, Any]] = []

    def _await_endpoint(self, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        seen: list[str] = []
        assert self.process.stderr is not None
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            seen.append(line)
            match = _LISTENING.search(line)
            if match:
                return match[1]
        self.close()
        raise CDPError("chromium did not start: " + "".join(seen[-20:]))

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session: str | None = None,
        timeout_s: float = 30.0,
    ) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept)."""
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout_s
        while True:
            data = self._receive(deadline, method)
            if data.get("id") == message_id:
                if "error" in data:
                    raise CDPError(f"{method}: {data['error']}")
                return data.get("result", {})
            self._events.append(data)

    def _receive(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CDPError(f"timed out waiting for {waiting_for}")
        try:
            return json.loads(self.ws.recv(timeout=remaining))
        except TimeoutError as exc:
            raise CDPError(f"timed out waiting for {waiting_for}") from exc

    def wait_event(self, method: str, *, session: str, timeout_s: float = 30.0) -> dict[str, Any]:
        """The next event ``method`` of ``session`` (one received earlier counts), removed from the queue."""
        deadline = time.monotonic() + timeout_s
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self._events.pop(i)["params"]
            data = self._receive(deadline, method)
            if "id" not in data:
                self._events.append(data)

    def take_events(self, method: str, *, session: str) -> list[dict[str, Any]]:
        """Every queued event ``method`` of ``session``, removed from the queue."""
        taken = [e for e in self._events if e.get("method") == method and e.get("sessionId") == session]
        self._events = [e for e in self._events if e not in taken]
        return [e["params"] for e in taken]

    def new_tab(self, *, width: int, height: int = 900) -> Tab:
        """A new tab of ``width`` x ``height`` CSS pixels, with page, network and runtime events on."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        tab = Tab(self, session)
        for domain in ("Page", "Network", "Runtime"):
            self.send(f"{domain}.enable", session=session)
        tab.resize(width, height)
        return tab

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        try:
            if getattr(self, "_stack", None) is not None:
                self._stack.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.profile, ignore_errors=True)


class Tab:
    """One tab: navigation, script, input, screenshots, and the URLs it requested."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session
        self._urls: dict[str, str] = {}  # request id -> URL, in the order asked for
        self._blocked: set[str] = set()  # request ids the browser refused to send (CSP, mixed content)

    def _cmd(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session, **kw)

    def _note_requests(self) -> None:
        for event in self.browser.take_events("Network.requestWillBeSent", session=self.session):
            self._urls.setdefault(event["requestId"], event["request"]["url"])
        for event in self.browser.take_events("Network.loadingFailed", session=self.session):
            if event.get("blockedReason"):
                self._blocked.add(event["requestId"])

    def resize(self, width: int, height: int = 900) -> None:
        """Lay the page out at ``width`` CSS pixels (a phone below 600)."""
        self._cmd(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": width,
                "height": height,
                "deviceScaleFactor": 1,
                "mobile": width < 600,
            },
        )

    def goto(self, url: str, timeout_s: float = 30.0) -> None:
        """Navigate and wait for the load event."""
        self.browser.take_events("Page.loadEventFired", session=self.session)
        result = self._cmd("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise CDPError(f"navigation to {url} failed: {result['errorText']}")
        self.wait_load(timeout_s)

    def wait_load(self, timeout_s: float = 30.0) -> None:
        """Wait for the next load event (after a click that submits a form)."""
        self.browser.wait_event("Page.loadEventFired", session=self.session, timeout_s=timeout_s)
        self._note_requests()

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression (awaited when it is a promise)."""
        result = self._cmd(
            "Runtime.evaluate",
            {
                "expression": expression,
                "returnByValue": True,
                "awaitPromise": True,
            },
        )
        if "exceptionDetails" in result:
            raise CDPError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def text(self, selector: str) -> str:
        """The text of the first element matching ``selector``, white space collapsed ("" when none)."""
        return self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
            "return e ? e.textContent.replace(/\\s+/g, ' ').trim() : ''; })()"
        )

    def click(self, selector: str) -> None:
        """Scroll the element into view and click its centre with real mouse events."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null; "
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
            "return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        if box is None:
            raise CDPError(f"nothing matches {selector!r}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self._cmd(
                "Input.dispatchMouseEvent",
                {
                    "type": kind,
                    "x": box["x"],
                    "y": box["y"],
                    "button": "left",
                    "clickCount": 1,
                },
            )

    def click_and_wait(self, selector: str, timeout_s: float = 30.0) -> None:
        """Click (a submit button, a link) and wait for the page it leads to to load."""
        self.browser.take_events("Page.loadEventFired", session=self.session)
        self.click(selector)
        self.wait_load(timeout_s)

    def type_into(self, selector: str, text: str) -> None:
        """Click a field and type ``text`` into it."""
        self.click(selector)
        self._cmd("Input.insertText", {"text": text})

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page (beyond the viewport) at ``path``."""
        metrics = self._cmd("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        width = max(1, int(metrics["cssLayoutViewport"]["clientWidth"]))
        height = max(1, min(int(size["height"]), 16000))
        shot = self._cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
            timeout_s=60,
        )
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def requests(self) -> list[str]:
        """Every URL this tab has sent a request for so far (not those the browser blocked)."""
        self._note_requests()
        return [url for rid, url in self._urls.items() if rid not in self._blocked]

    def blocked(self) -> list[str]:
        """Every URL a page asked for that the browser refused to request (e.g. by the page's CSP)."""
        self._note_requests()
        return [url for rid, url in self._urls.items() if rid in self._blocked]
