#!/usr/bin/env bash
# What serving threads cost beside one (issue 57): the built service on SNAPSHOT with WORKERS=1 and WORKERS=2
# alternating (Node 22.12+; NODE names one), each fresh. Per run: the CPU (every thread of the process, from
# /proc) a SIGHUP of the unchanged file costs, from the signal to 10 s after its `snapshot reloaded` line; RSS
# settled with no requests (every 10 s until two readings agree within 4 MB); then RSS settled the same way
# after 30 s of hot load from wrk (random companies, 16 connections).
# Usage: NODE=/path/to/node24 bash bench/experiments/threads-cost.sh SNAPSHOT [ROUNDS]
set -euo pipefail
snapshot=$1 rounds=${2:-1} node=${NODE:-node}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
extension=${snapshot##*.}
ticks=$(getconf CLK_TCK)
echo 'request = function() return wrk.format("GET", "/en/api/internal/explore/?companies=" .. math.random(1, 2000) .. "&limit=20") end' > "$work/random.lua"
cpu () { awk -v t="$ticks" '{ printf "%.2f", ($14 + $15) / t }' /proc/$pid/stat; }
rss () { awk '/^VmRSS/ { printf "%d", $2 / 1024 }' /proc/$pid/status; }
settled () {
  local last=0 now
  while true; do
    sleep 10
    now=$(rss)
    [ $((now - last)) -gt 4 ] || [ $((last - now)) -gt 4 ] || { echo "$now"; return; }
    last=$now
  done
}
lines () { grep -c "\"$1\"" "$work/log" || true; }

run () {
  local workers=$1
  rm -rf "$work/state" && ln -f "$snapshot" "$work/served.$extension" 2>/dev/null || cp "$snapshot" "$work/served.$extension"
  local port=$((20000 + RANDOM % 10000))
  (cd "$here" && STATE_DIR=$work/state WORKERS=$workers exec "$node" dist/server.js "$work/served.$extension" --port $port \
    --log-level info --request-log false --request-journal false > "$work/log" 2>&1) &
  pid=$!
  until curl -sf "http://127.0.0.1:$port/-/readyz" > /dev/null; do kill -0 $pid; sleep 0.5; done
  until [ "$(lines 'version image written')" -ge 1 ]; do kill -0 $pid; sleep 0.5; done
  local idle
  idle=$(settled)
  local before reloads
  reloads=$(lines 'snapshot reloaded')
  before=$(cpu)
  kill -HUP $pid
  until [ "$(lines 'snapshot reloaded')" -gt "$reloads" ]; do kill -0 $pid; sleep 0.2; done
  sleep 10
  local hup
  hup=$(awk -v a="$before" -v b="$(cpu)" 'BEGIN { printf "%.2f", b - a }')
  wrk -t1 -c16 -d30s -s "$work/random.lua" "http://127.0.0.1:$port/" > /dev/null
  local loaded
  loaded=$(settled)
  kill $pid && wait $pid || true
  echo "WORKERS=$workers: SIGHUP of the unchanged file ${hup} s of CPU; settled RSS, no requests ${idle} MB, after hot load ${loaded} MB"
}

for round in $(seq "$rounds"); do
  echo "round $round"
  run 1
  run 2
done
