#!/usr/bin/env bash
# The first answer at 1M, two builds alternating, N rounds: from the spawn of `node dist/server.js` to the
# first 200 of /-/readyz (polled every 50 ms), and the peak RSS (VmHWM) then. The bench's load figure is
# one sample per build; on this shared VM one sample moves by ±15%, so a 5% claim needs rounds.
#   bash bench/experiments/first-answer-by-hand.sh CHECKOUT-A CHECKOUT-B [ROUNDS]
# Needs `npm run bench -- --sizes 1m` once (the snapshot). Each server gets a fresh STATE_DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
A=$(cd "${1:?checkout A}" && pwd); B=$(cd "${2:?checkout B}" && pwd); ROUNDS=${3:-4}; PORT=38500
SNAP=$(ls "$HERE"/bench/.data/snapshot-1M-jsonl-*.jsonl | head -1)
WORK=$(mktemp -d)
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
ln "$SNAP" "$WORK/s.jsonl"
one () {
  local dir=$1 start end
  rm -rf "$WORK/state"
  start=$(date +%s%N)
  STATE_DIR=$WORK/state node "$dir/dist/server.js" --snapshot-path "$WORK/s.jsonl" --port $PORT --log-level warn > "$WORK/log" 2>&1 &
  PID=$!
  until curl -sf "localhost:$PORT/-/readyz" > /dev/null; do sleep 0.05; done
  end=$(date +%s%N)
  echo "$(basename "$dir") $(git -C "$dir" rev-parse --short HEAD) first answer $(( (end - start) / 1000000 )) ms, peak $(awk '/VmHWM/ {print int($2/1024)}' /proc/$PID/status) MB"
  kill -TERM $PID; wait $PID || true
}
for _ in $(seq 1 "$ROUNDS"); do one "$A"; one "$B"; done
