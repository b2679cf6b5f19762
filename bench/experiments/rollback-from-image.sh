#!/bin/bash
# A rollback at a large size: the version before is not in memory, so it is served from its version image
# (ADR 033). Starts the built service on a copy of SNAPSHOT with its own STATE_DIR, replaces the file by one a
# newline longer (another version, parsed), then times POST /-/rollback until it answers, ROUNDS times.
# Usage: bash bench/experiments/rollback-from-image.sh SNAPSHOT [ROUNDS]
set -euo pipefail
snapshot=$1
rounds=${2:-3}
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
extension=${snapshot##*.}
cp "$snapshot" "$work/snapshot.$extension"
port=$((20000 + RANDOM % 10000))
ops=$((port + 1))
OPS_TOKEN=rollback-experiment-token STATE_DIR="$work/state" node dist/server.js "$work/snapshot.$extension" --port $port --ops-port $ops \
  --log-level warn --reload-debounce-ms 200 > "$work/out" 2>&1 &
pid=$!
status () { curl -s "http://127.0.0.1:$ops/-/status" | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["snapshot"] or {}; i=d["reloads"].get("images") or {}; print(s.get("version"), s.get("imageMs"), i.get("read"), i.get("written"))'; }
# Waits until another version is served and its image is written: the disk quiet again.
settled () {
  local before=$1 written=$2
  until read -r version _ _ now <<< "$(status)" && [ "$version" != "$before" ] && [ "$now" -gt "$written" ]; do sleep 0.2; done
}
until curl -sf "http://127.0.0.1:$ops/-/readyz" > /dev/null; do kill -0 $pid || { cat "$work/out"; exit 1; }; sleep 0.1; done
until read -r _ _ _ written <<< "$(status)" && [ "$written" -gt 0 ]; do sleep 0.2; done
for round in $(seq "$rounds"); do
  read -r served _ _ written <<< "$(status)"
  # Another version: the same items, newlines longer; renamed over the file, as an editor's save.
  cp "$snapshot" "$work/next"
  for _ in $(seq "$round"); do echo >> "$work/next"; done
  mv "$work/next" "$work/snapshot.$extension"
  settled "$served" "$written"
  started=$(date +%s%N)
  curl -sf -X POST -H 'authorization: Bearer rollback-experiment-token' "http://127.0.0.1:$ops/-/rollback" > /dev/null
  ended=$(date +%s%N)
  echo "round $round: rollback answered in $(( (ended - started) / 1000000 )) ms; now (version, imageMs, images read, written) $(status)"
  # Following the file again serves the newer version, from its image.
  curl -sf -X POST -H 'authorization: Bearer rollback-experiment-token' "http://127.0.0.1:$ops/-/unpin" > /dev/null
done
