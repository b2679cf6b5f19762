#!/usr/bin/env bash
# Memory under reload churn (issue 49): the built service on a copy of SNAPSHOT, cold load (load-once.ts), the
# file replaced by rename every 15 s, RELOADS times; then the load stops and RSS is read every 10 s, 4 times.
# Prints the RSS (MB) after each reload, idle, and the peak (VmHWM). Run it once per WORKERS, alternating.
# Usage: bash bench/experiments/reload-churn.sh SNAPSHOT WORKERS [RELOADS] [NODE]   (NODE: Node 24 for WORKERS>1)
set -euo pipefail
snapshot=$1 workers=$2 reloads=${3:-6} node=${4:-node}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill "${pid:-}" "${load:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
extension=${snapshot##*.}
cp "$snapshot" "$work/snapshot.$extension"
port=$((20000 + RANDOM % 10000))
STATE_DIR=$work/state WORKERS=$workers "$node" dist/server.js "$work/snapshot.$extension" --port $port \
  --log-level warn --request-log false --reload-debounce-ms 200 > "$work/out" 2>&1 &
pid=$!
until curl -sf "http://127.0.0.1:$port/-/readyz" > /dev/null; do kill -0 $pid || { cat "$work/out"; exit 1; }; sleep 0.2; done
rss () { awk '/^VmRSS/ { printf "%d", $2 / 1024 }' /proc/$pid/status; }
echo "ready: $(rss) MB"
meta=${snapshot%.*}.meta.json
node --import tsx bench/experiments/load-once.ts "$meta" $port $pid cold $((reloads * 15 + 8)) > "$work/load" &
load=$!
after=()
sleep 5
for round in $(seq "$reloads"); do
  cp "$snapshot" "$work/next"
  for _ in $(seq "$round"); do echo >> "$work/next"; done
  mv "$work/next" "$work/snapshot.$extension"
  sleep 15
  after+=("$(rss)")
done
echo "15 s after each reload, under load: ${after[*]}"
wait $load
cat "$work/load"
idle=()
for _ in 1 2 3 4; do sleep 10; idle+=("$(rss)"); done
echo "idle, every 10 s: ${idle[*]}; peak $(awk '/^VmHWM/ { printf "%d", $2 / 1024 }' /proc/$pid/status) MB"
