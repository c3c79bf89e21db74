#!/usr/bin/env bash
# Runs, as plain processes, the commands the compose containers run (app: init then serve
# --no-scheduler, twice as replicas; worker: chipwatch worker) against a PostgreSQL server, and checks
# that the API answers and the worker keeps running.
#   usage: scripts/compose_smoke.sh postgresql://user@host:port/postgres
set -euo pipefail
cd "$(dirname "$0")/.."
ADMIN_URL="${1:?PostgreSQL server URL}"
BIN="${VENV:-.venv}/bin"
DB="chipwatch_smoke_$$"
WORK="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$BIN/python" - "$ADMIN_URL" "$DB" <<'PY' || true
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute(f'DROP DATABASE IF EXISTS "{sys.argv[2]}" WITH (FORCE)')
PY
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN/python" - "$ADMIN_URL" "$DB" <<'PY'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute(f'CREATE DATABASE "{sys.argv[2]}"')
PY
export CHIPWATCH_DATABASE_URL="${ADMIN_URL%/*}/$DB"
export CHIPWATCH_DATA_DIR="$WORK/data" CHIPWATCH_LOG_FORMAT=json

# app container: migrations and seeds, then the API without the scheduler (two replicas)
"$BIN/chipwatch" init > "$WORK/init.log"
"$BIN/chipwatch" init > "$WORK/init2.log"   # a restarted container re-runs init: it must change nothing
grep -q "0 inserted, 0 updated" "$WORK/init2.log" || { echo "re-init changed data"; cat "$WORK/init2.log"; exit 1; }
"$BIN/chipwatch" serve --host 127.0.0.1 --port 18081 --no-scheduler > "$WORK/app1.log" 2>&1 & pids+=($!)
"$BIN/chipwatch" serve --host 127.0.0.1 --port 18082 --no-scheduler > "$WORK/app2.log" 2>&1 & pids+=($!)
# worker container
"$BIN/chipwatch" worker > "$WORK/worker.log" 2>&1 & pids+=($!)
worker_pid=$!

"$BIN/python" - <<'PY'
import time, httpx
deadline = time.monotonic() + 60
for port in (18081, 18082):
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"replica on {port} never became ready")
        time.sleep(0.5)
    race = httpx.get(f"http://127.0.0.1:{port}/v1/race").json()
    assert len(race["signals"]) >= 10, race
    assert httpx.post(f"http://127.0.0.1:{port}/v1/chips", json={}).status_code == 401
print("smoke: both API replicas ready and serving the seeded race")
PY
sleep 5
kill -0 "$worker_pid" || { echo "worker exited"; cat "$WORK/worker.log"; exit 1; }
echo "smoke: worker running"
