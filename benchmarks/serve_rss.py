"""Peak memory of ``chipwatch serve`` on a large database, after its list and detail routes are read.

Starts ``chipwatch serve --no-scheduler`` on the SQLite database kept by ``benchmarks/scale.py
--data-dir DIR`` (the scheduler is off so that the measurement is of the API alone: on that database
it would check 3,000 made-up feeds), reads every list and detail route a client reads (the race board,
signals and each signal's detail, items newest first and by entity and source, 20 pages deep, results
by chip, sources and each source's health, chips, the HTML pages) three times over, and prints the
server process's peak resident set size: ``VmHWM`` of /proc/<pid>/status (Linux), the kernel's own
high-water mark of the process's resident memory, read before the process is stopped. ``VmRSS`` (the
resident size at the end) is printed beside it.

    nice -n 10 python benchmarks/scale.py --items 1000000 --data-dir /tmp/scale1m/data
    nice -n 10 python benchmarks/serve_rss.py --data-dir /tmp/scale1m/data
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _common import ROOT, free_port, server

PAGES = 20
"""Pages followed through each paged list (50 rows a page)."""


def memory_kb(pid: int) -> dict[str, int]:
    """``VmHWM`` and ``VmRSS`` of process ``pid`` in KiB, from /proc/<pid>/status."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(value.split()[0])
    return out


def read_routes(base: str) -> dict[str, int]:
    """Read every route once; returns how many requests each kind of route took."""
    counts: dict[str, int] = {}
    with httpx.Client(base_url=base, timeout=120) as http:

        def get(kind: str, path: str, **params) -> httpx.Response:
            response = http.get(path, params=params)
            response.raise_for_status()
            counts[kind] = counts.get(kind, 0) + 1
            return response

        def pages(kind: str, path: str, **params) -> list[dict]:
            rows, cursor = [], None
            for _ in range(PAGES):
                body = get(kind, path, limit=50, **({"cursor": cursor} if cursor else {}), **params).json()
                rows.extend(body["items"])
                cursor = body.get("next_cursor")
                if not cursor:
                    break
            return rows

        get("race", "/v1/race")
        for signal in pages("signals", "/v1/signals"):
            get("signal detail", f"/v1/signals/{signal['id']}")
            get("signal history", f"/v1/signals/{signal['id']}/history")
        pages("items", "/v1/items")
        pages("items?mentions", "/v1/items", mentions="jalapeno")
        pages("items?source", "/v1/items", source="feed-00001")
        chips = pages("chips", "/v1/chips")
        for chip in chips[:20]:
            get("chip detail", f"/v1/chips/{chip['id']}")
        pages("results?chip", "/v1/results", chip=chips[0]["id"])
        for source in pages("sources", "/v1/sources")[:200]:
            get("source detail", f"/v1/sources/{source['id']}")
        for path in ("/", "/sources", "/leaderboards"):
            get("pages", path)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True, help="a database directory kept by scale.py --data-dir")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--start-timeout-s", type=float, default=600)
    args = ap.parse_args()

    env = {**os.environ, "CHIPWATCH_DATA_DIR": str(Path(args.data_dir).resolve()),
           "CHIPWATCH_SCHEDULER_ENABLED": "0", "PYTHONPATH": str(ROOT / "service")}
    env.pop("CHIPWATCH_DATABASE_URL", None)
    env.pop("CHIPWATCH_READ_TOKEN", None)
    # migrate a database kept by an earlier version (init is idempotent: migrations, then seeds)
    subprocess.run([sys.executable, "-m", "chipwatch.cli", "init"], env=env, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    port = free_port()
    argv = [sys.executable, "-m", "chipwatch.cli", "serve", "--port", str(port), "--no-scheduler"]
    with server(argv, env, port, wait_s=args.start_timeout_s) as proc:
        started = memory_kb(proc.pid)
        print(f"serving: VmRSS {started['VmRSS'] / 1024:.0f} MB after start-up", flush=True)
        for n in range(args.rounds):
            t = time.perf_counter()
            counts = read_routes(f"http://127.0.0.1:{port}")
            now = memory_kb(proc.pid)
            print(f"round {n + 1}: {sum(counts.values())} requests in {time.perf_counter() - t:.1f} s; "
                  f"VmHWM {now['VmHWM'] / 1024:.0f} MB, VmRSS {now['VmRSS'] / 1024:.0f} MB", flush=True)
        print("requests per round:", ", ".join(f"{k} {v}" for k, v in counts.items()))
        end = memory_kb(proc.pid)
    print(f"\npeak RSS of chipwatch serve: {end['VmHWM'] / 1024:.0f} MB (VmHWM); "
          f"{end['VmRSS'] / 1024:.0f} MB resident at the end")


if __name__ == "__main__":
    main()
