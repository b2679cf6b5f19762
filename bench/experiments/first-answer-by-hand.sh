#!/usr/bin/env bash
# The first answer at 1M, two builds alternating, N rounds: from the spawn of `node dist/server.js` to the
# first 200 of /-/readyz (polled every 50 ms), and the peak RSS (VmHWM) then. The bench's load figure is
# one sample per build; on this shared VM one sample moves by ±15%, so a 5% claim needs rounds. Rounds go
# A B, B A, A B … so that neither build always runs second.
#   bash bench/experiments/first-answer-by-hand.sh CHECKOUT-A CHECKOUT-B [ROUNDS] [PORT]
# Needs `npm run bench -- --sizes 1m` once (the snapshot); SNAPSHOT=FILE loads another file (keep its
# extension: the format is read from it). Each server gets a fresh STATE_DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
A=$(cd "${1:?checkout A}" && pwd); B=$(cd "${2:?checkout B}" && pwd); ROUNDS=${3:-4}; PORT=${4:-38500}
SNAP=${SNAPSHOT:-$(ls "$HERE"/bench/.data/snapshot-1M-jsonl-*.jsonl | head -1)}
WORK=$(mktemp -d)
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
# A hard link where the file system allows (no copy of 1.4 GB), else a symbolic one.
FILE=$WORK/s.${SNAP##*.}
ln "$SNAP" "$FILE" 2>/dev/null || ln -s "$(cd "$(dirname "$SNAP")" && pwd)/$(basename "$SNAP")" "$FILE"
one () {
  local dir=$1 start end
  if curl -s -o /dev/null "localhost:$PORT/"; then echo "port $PORT answers already: another server is there" >&2; exit 1; fi
  rm -rf "$WORK/state"
  start=$(date +%s%N)
  STATE_DIR=$WORK/state node "$dir/dist/server.js" --snapshot-path "$FILE" --port "$PORT" --log-level warn > "$WORK/log" 2>&1 &
  PID=$!
  until curl -sf "localhost:$PORT/-/readyz" > /dev/null; do
    if ! kill -0 "$PID" 2>/dev/null; then echo "the server in $dir exited before it answered:" >&2; cat "$WORK/log" >&2; exit 1; fi
    sleep 0.05
  done
  end=$(date +%s%N)
  echo "$(basename "$dir") $(git -C "$dir" rev-parse --short HEAD) first answer $(( (end - start) / 1000000 )) ms, peak $(awk '/VmHWM/ {print int($2/1024)}' "/proc/$PID/status") MB"
  kill -TERM "$PID" 2>/dev/null || true
  wait "$PID" || true
}
for round in $(seq 1 "$ROUNDS"); do
  if (( round % 2 == 1 )); then one "$A"; one "$B"; else one "$B"; one "$A"; fi
done
