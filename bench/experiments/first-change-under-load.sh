#!/bin/bash
# The first change file after a start, under load (issue 38's goal: served within 1 s at 200k): a change
# directory created at the drop, 4 s into 10 s of autocannon (-c 32, one hot page), 6 s after ready; DROP=0
# runs the same load without it. SNAPSHOT=<200k .jsonl> bash bench/experiments/first-change-under-load.sh [CHECKOUT]
# Prints how long after the rename the change was served (and the service's own "ms"), and the client's p99/max.
set -u
HERE=$(cd "$(dirname "$0")"/../.. && pwd); ROOT=$(cd "${1:-$HERE}" && pwd); PORT=39321

SNAP=${SNAPSHOT:?a 200k JSON Lines snapshot, e.g. node dist/cli/main.js convert bench/.data/snapshot-200k-*.json /tmp/s200k.jsonl}
W=$(mktemp -d); ln "$SNAP" $W/snapshot.jsonl
(cd "$HERE" && node --import tsx -e "import('./bench/change-file.ts').then(m => m.writeChangeFile('$SNAP', '$W/c.jsonl'))")
STATE_DIR=$W/state node $ROOT/dist/server.js --snapshot-path $W/snapshot.jsonl --port $PORT --watch true --log-level info --request-log false > $W/log 2>&1 & PID=$!
until curl -sf localhost:$PORT/-/readyz > /dev/null; do sleep 0.1; done
sleep 2
"$HERE"/node_modules/.bin/autocannon -c 32 -d 10 "http://127.0.0.1:$PORT/en/api/internal/explore/?companies=252&limit=20" > $W/client 2>&1 & AC=$!
sleep 4
if [ "${DROP:-1}" = 1 ]; then
  mkdir -p $W/snapshot.jsonl.changes; T0=$(date +%s%3N); mv $W/c.jsonl $W/snapshot.jsonl.changes/0001.jsonl
fi
wait $AC
LAT=$(grep -E "^│ Latency" $W/client | awk -F'│' '{gsub(/ /,"",$6); gsub(/ /,"",$9); print "p99 "$6" max "$9}')
if [ "${DROP:-1}" = 1 ]; then
  T1=$(grep '"msg":"change file applied"' $W/log | head -1 | grep -o '"time":[0-9]*' | cut -d: -f2)
  APPLIED=$(grep '"msg":"change file applied"' $W/log | head -1 | grep -o '"ms":[0-9]*')
  echo "drop: served after $((T1 - T0)) ms ($APPLIED) client $LAT"
else
  echo "none: client $LAT"
fi
kill $PID; wait $PID 2>/dev/null; rm -rf $W
