"""Large request bodies against a real uvicorn server: refused early, without stalling the service.

The issue this guards against: an unauthenticated 48 MB body of nested empty arrays was parsed on the
event loop before the 401, stalled ``/healthz`` for 10 s and took the process from 200 MB to 1.4 GB.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from chipwatch.paths import PROJECT_ROOT
from tests.fixtures.database import ADMIN_TOKEN

BIG = 48 * 1024 * 1024
CAP = 1024 * 1024


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def server(db):
    """The API (no scheduler) served by uvicorn in a process of its own; yields (base URL, process)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the server's memory from /proc")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "chipwatch.app:create_app", "--host", "127.0.0.1",
         "--port", str(port), "--log-level", "warning"],
        env={**os.environ, "CHIPWATCH_SCHEDULER_ENABLED": "0"}, cwd=PROJECT_ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"server did not start: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.1)
    yield base, proc
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _head(port: int, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
             *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _response(sock: socket.socket, timeout_s: float) -> tuple[int, dict[str, str], bytes]:
    """Read one HTTP/1.1 response with a Content-Length (the API's problem answers have one)."""
    sock.settimeout(timeout_s)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed before a response: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines)}
    while len(body) < int(headers.get("content-length", "0")):
        body += sock.recv(65536)
    return int(status_line.split()[1]), headers, body


def _nested_arrays(total: int):
    """Chunks of a valid JSON array of empty arrays, ``total`` bytes in all (``[ [],[],...,[]]``)."""
    count = (total - 4) // 3
    yield b"[" + b" " * (total - 4 - 3 * count)
    while count:
        step = min(21845, count)  # about 64 KiB a chunk
        yield b"[]," * step
        count -= step
    yield b"[]]"


def _port(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def test_an_unauthenticated_48mb_body_gets_401_without_being_read(server):
    """The client announces 48 MB and sends only the first 64 KiB: the 401 comes anyway, at once."""
    base, proc = server
    port = _port(base)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        started = time.monotonic()
        sock.sendall(_head(port, "/v1/sources", {"Content-Length": str(BIG)}) + b"[" * 65536)
        status, headers, body = _response(sock, timeout_s=10)
        elapsed = time.monotonic() - started
    assert status == 401
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body)["detail"] == "admin token required"
    assert elapsed < 2.0, elapsed


def test_a_flood_of_nested_arrays_leaves_healthz_responsive(server):
    """One client streams 48 MB of nested empty arrays without a token while another polls /healthz:
    the flood gets its 401 within a second or two, /healthz answers quickly throughout, and the
    server's memory does not grow by the body's size."""
    base, proc = server
    port = _port(base)
    rss_before = _rss_mb(proc.pid)
    result: dict[str, object] = {}

    def flood() -> None:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            started = time.monotonic()
            sock.sendall(_head(port, "/v1/chips", {"Content-Length": str(BIG)}))
            sent = 0
            sock.settimeout(10)
            try:
                for piece in _nested_arrays(BIG):
                    sock.sendall(piece)
                    sent += len(piece)
            except OSError:
                pass  # the server answered and closed: the rest of the body is not wanted
            result["sent"] = sent
            try:
                status, _headers, _body = _response(sock, timeout_s=10)
                result["status"] = status
            except (OSError, AssertionError) as exc:
                result["status"] = f"no response: {exc}"
            result["elapsed_s"] = time.monotonic() - started

    thread = threading.Thread(target=flood)
    thread.start()
    latencies = []
    with httpx.Client(base_url=base, timeout=5) as http:
        while thread.is_alive() or len(latencies) < 10:
            t0 = time.monotonic()
            assert http.get("/healthz").status_code == 200
            latencies.append(time.monotonic() - t0)
            time.sleep(0.05)
    thread.join()
    assert result["status"] == 401, result
    assert result["elapsed_s"] < 5.0, result
    assert max(latencies) < 1.0, latencies  # it stalled for 10 s when the body was parsed first
    assert _rss_mb(proc.pid) - rss_before < 40, (rss_before, _rss_mb(proc.pid))


def test_an_authenticated_oversize_body_gets_413(server):
    """With the admin token: an announced length over the cap is refused before the body is sent, and a
    chunked body is refused once the cap has been read."""
    base, _proc = server
    port = _port(base)
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_head(port, "/v1/sources", {**auth, "Content-Length": str(2 * CAP)}))
        status, headers, body = _response(sock, timeout_s=10)
    assert status == 413
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body)["detail"] == f"request body over {CAP} bytes"

    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_head(port, "/v1/sources", {**auth, "Transfer-Encoding": "chunked"}))
        chunk = b" " * 65536
        sent = 0
        try:
            while sent < 2 * CAP:
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                sent += len(chunk)
        except OSError:
            pass
        status, headers, body = _response(sock, timeout_s=10)
    assert status == 413
    assert json.loads(body)["detail"] == f"request body over {CAP} bytes"
