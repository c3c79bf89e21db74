"""Read-path throughput: chipwatch's GET /v1/signals and GET /v1/race, and the pages GET / (the race) and
GET /chips/jalapeno, against a bare Starlette app serving the same bytes (with the same media type),
measured in the same run with wrk on loopback (32 connections by default).

Prints requests/s and p99 latency for both and the ratio chipwatch / bare.  Goal: ratio >= 0.6 and
p99 <= 15 ms at 32 connections on 2 cores.  Needs wrk (Debian package ``wrk``).

    python benchmarks/read_api.py [--connections 32] [--duration 10]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, seeded_env, server, tempdir  # noqa: E402

BARE_APP = """
import sys
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
bodies = {p: (open(f, "rb").read(), "text/html; charset=utf-8" if f.endswith(".html") else "application/json")
          for p, f in zip(sys.argv[2::2], sys.argv[3::2])}
def make(body, media_type):
    async def endpoint(request):
        return Response(body, media_type=media_type)
    return endpoint
app = Starlette(routes=[Route(p, make(b, m)) for p, (b, m) in bodies.items()])
import uvicorn
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def wrk(url: str, connections: int, duration_s: int) -> tuple[float, float]:
    """(requests/s, p99 ms) from one wrk run."""
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{duration_s}s", "--latency", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
    return rps, p99


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk not found: apt-get install wrk")
    paths = ["/v1/signals", "/v1/race", "/", "/chips/jalapeno"]
    with tempdir() as tmp:
        env = seeded_env(tmp)
        port = free_port()
        cmd = [
            sys.executable,
            "-m",
            "uvicorn",
            "chipwatch.app:create_app",
            "--factory",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ]
        results = {}
        with server(cmd, env, port):
            files = []
            for p in paths:
                answer = httpx.get(f"http://127.0.0.1:{port}{p}")
                answer.raise_for_status()
                body = answer.content
                suffix = ".html" if answer.headers["content-type"].startswith("text/html") else ".json"
                f = tmp / ((p.strip("/").replace("/", "_") or "race_page") + suffix)
                f.write_bytes(body)
                files += [p, str(f)]
            for p in paths:
                wrk(f"http://127.0.0.1:{port}{p}", args.connections, 2)  # warm-up
                results[("chipwatch", p)] = wrk(
                    f"http://127.0.0.1:{port}{p}", args.connections, args.duration
                )
        bare_port = free_port()
        with server([sys.executable, "-c", BARE_APP, str(bare_port), *files], env, bare_port, paths[0]):
            for p in paths:
                wrk(f"http://127.0.0.1:{bare_port}{p}", args.connections, 2)
                results[("bare", p)] = wrk(
                    f"http://127.0.0.1:{bare_port}{p}", args.connections, args.duration
                )
    print(f"{'path':<18}{'chipwatch req/s':>17}{'p99 ms':>9}{'bare req/s':>12}{'p99 ms':>9}{'ratio':>8}")
    for p in paths:
        c_rps, c_p99 = results[("chipwatch", p)]
        b_rps, b_p99 = results[("bare", p)]
        print(f"{p:<18}{c_rps:>17.0f}{c_p99:>9.2f}{b_rps:>12.0f}{b_p99:>9.2f}{c_rps / b_rps:>8.2f}")
    print(f"goal: ratio >= 0.60 and chipwatch p99 <= 15 ms at {args.connections} connections")


if __name__ == "__main__":
    main()
