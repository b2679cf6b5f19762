#!/usr/bin/env bash
# The stall at a full reload as a user meets it (issue 57): the built service with one thread on a copy of
# SNAPSHOT, hot load from wrk (16 connections, random companies) and a one-at-a-time client; a changed copy
# renamed over the file; the run ends once the new version's image is written. Prints that client's three
# longest waits, each with how long after the `snapshot reloaded` log line it ended, and wrk's latencies.
# With BASE=DIR (another checkout, built) the two alternate, ROUNDS times each.
# Usage: [BASE=DIR] [NODE=node] bash bench/experiments/reload-stall.sh SNAPSHOT [ROUNDS]
set -euo pipefail
snapshot=$1 rounds=${2:-1} node=${NODE:-node}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill "${pid:-}" "${load:-}" "${probe:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
extension=${snapshot##*.}
echo 'request = function() return wrk.format("GET", "/en/api/internal/explore/?companies=" .. math.random(1, 2000) .. "&limit=20") end' > "$work/random.lua"

run () {
  local dir=$1 label=$2
  rm -rf "$work/state" && ln -f "$snapshot" "$work/served.$extension" 2>/dev/null || cp "$snapshot" "$work/served.$extension"
  cp "$snapshot" "$work/next" && echo >> "$work/next"
  local port=$((20000 + RANDOM % 10000))
  (cd "$dir" && STATE_DIR=$work/state WORKERS=1 exec "$node" dist/server.js "$work/served.$extension" --port $port \
    --log-level info --request-log false --request-journal false > "$work/log" 2>&1) &
  pid=$!
  until curl -sf "http://127.0.0.1:$port/-/readyz" > /dev/null; do kill -0 $pid; sleep 0.5; done
  # The first version's image written: nothing left of the start.
  until grep -q '"version image written"' "$work/log"; do kill -0 $pid; sleep 0.5; done
  wrk -t1 -c16 -d600s -s "$work/random.lua" "http://127.0.0.1:$port/" > "$work/wrk" 2>&1 &
  load=$!
  (cd "$here" && exec "$node" --import tsx bench/experiments/one-at-a-time.ts $port) > "$work/probe" &
  probe=$!
  sleep 3
  mv "$work/next" "$work/served.$extension"
  until [ "$(grep -c '"version image written"' "$work/log")" -ge 2 ]; do kill -0 $pid; sleep 0.5; done
  sleep 2
  kill -TERM $probe && wait $probe || true
  kill -INT $load && wait $load || true
  kill $pid && wait $pid || true
  local reloaded
  reloaded=$(grep '"snapshot reloaded"' "$work/log" | grep -o '"time":[0-9]*' | cut -d: -f2)
  node -e '
const [label, probe, reloaded, wrk] = process.argv.slice(1)
const { requests, longest } = JSON.parse(probe)
const after = longest.map(([ms, at]) => `${ms} ms (${at - Number(reloaded) >= 0 ? "+" : ""}${at - Number(reloaded)} ms)`)
const latency = /Latency\s+(\S+)\s+(\S+)\s+(\S+)/.exec(wrk)
console.log(`${label}: one at a time, ${requests} requests, longest ${after.join(", ")}; wrk mean ${latency?.[1]}, max ${latency?.[3]}`)
' "$label" "$(cat "$work/probe")" "$reloaded" "$(cat "$work/wrk")"
}

for round in $(seq "$rounds"); do
  echo "round $round"
  run "$here" "this build"
  [ -z "${BASE:-}" ] || run "$BASE" "BASE"
done
