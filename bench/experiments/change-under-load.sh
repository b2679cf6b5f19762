#!/usr/bin/env bash
# One change file (bench/change-file.ts: 1,000 upserts, 100 deletes) dropped into a served 1M snapshot's
# change directory 6 s into hot load (load-once.ts): the service's own "change file applied" time, after the
# debounce. CHECKOUT is the build to measure (its dist/), e.g. a worktree of another commit; run the two
# alternately, nothing else running. Needs `npm run bench -- --sizes 1m` once (the snapshot and its meta).
# Usage: bench/experiments/change-under-load.sh [CHECKOUT] [PORT]   (add --cpu-prof via NODE_ARGS, and the gap
# recorder as NODE_ARGS="--import $PWD/bench/.data/gap-recorder.mjs" (bench/plain-script.ts writes it); a lighter
# steady load with LOAD_CONNECTIONS=n, passed to load-once.ts)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(cd "${1:-$HERE}" && pwd)
PORT=${2:-39123}
cd "$HERE"
SNAP=$(ls bench/.data/snapshot-1M-jsonl-*.jsonl | head -1)
WORK=$(mktemp -d)
trap 'kill "${PID:-}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/snapshot.jsonl.changes"
ln "$SNAP" "$WORK/snapshot.jsonl"
node --import tsx -e "import('./bench/change-file.ts').then(m => m.writeChangeFile('$SNAP', '$WORK/.c.jsonl'))"
# shellcheck disable=SC2086
STATE_DIR=$WORK/state node ${NODE_ARGS:-} "$ROOT/dist/server.js" --snapshot-path "$WORK/snapshot.jsonl" --port "$PORT" \
  --watch true --log-level info --request-log false > "$WORK/server.log" 2>&1 &
PID=$!
until curl -sf "localhost:$PORT/-/readyz" > /dev/null; do
  if ! kill -0 "$PID" 2>/dev/null; then echo "the server exited before it answered:" >&2; cat "$WORK/server.log" >&2; exit 1; fi
  sleep 1
done
# The listing is made ready for change files in the background after the load: let it finish.
sleep 15
node --import tsx bench/experiments/load-once.ts "${SNAP%.jsonl}.meta.json" "$PORT" "$PID" hot 10 &
LOAD=$!
sleep 6
mv "$WORK/.c.jsonl" "$WORK/snapshot.jsonl.changes/0001-bench.jsonl"
wait "$LOAD"
# The whole line: its "time" (epoch ms, when applied) and "ms" (from the debounce's end) place the apply
# window, e.g. against gap-recorder.ts's log.
grep '"msg":"change file applied"' "$WORK/server.log"
kill -TERM "$PID"
wait "$PID" || true
