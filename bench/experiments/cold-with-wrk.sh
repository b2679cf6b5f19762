#!/bin/bash
# Cold 50k pages, WORKERS=1 against WORKERS=2, rounds alternating, with wrk (a C client: about half the CPU
# of autocannon per request) to see whether the serving threads scale with the cores they are given.
#   bash bench/experiments/cold-with-wrk.sh [ROUNDS]     (apt-get install wrk; run `npm run build` first;
#   Node 24 first on PATH; bench/.data's 50k snapshot: `npm run bench -- --sizes 50k` makes it)
# Prints per round: requests/s, the client's cores (wrk's CPU time) and the service's (/proc/PID/stat).
set -eu
ROOT=$(cd "$(dirname "$0")"/../.. && pwd); W=/tmp/cold-with-wrk; PORT=3917
SNAP=$(ls "$ROOT"/bench/.data/snapshot-50k-*.json | grep -v meta | head -1)
mkdir -p $W
cat > $W/paths.ts <<TS
import { readFileSync, writeFileSync } from 'node:fs'
import { coldWorkload } from '$ROOT/bench/workloads.ts'
const meta = JSON.parse(readFileSync('${SNAP%.json}.meta.json', 'utf8'))
writeFileSync('$W/paths.txt', coldWorkload(meta.companies, 600000, 0, 7).measured.join('\n') + '\n')
TS
(cd "$ROOT" && npx tsx $W/paths.ts)
cat > $W/paths.lua <<'LUA'
local paths = {}
for line in io.lines("/tmp/cold-with-wrk/paths.txt") do paths[#paths + 1] = line end
local i = 0
function request() i = i % #paths + 1; return wrk.format("GET", paths[i]) end
LUA
for round in $(seq 1 "${1:-3}"); do for workers in 1 2; do
  PORT=$PORT WORKERS=$workers SNAPSHOT_PATH=$SNAP REQUEST_LOG=false LOG_LEVEL=warn WATCH=false node "$ROOT"/dist/server.js & pid=$!
  for _ in $(seq 1 100); do curl -sf localhost:$PORT/-/readyz > /dev/null && break; sleep 0.2; done
  wrk -t1 -c32 -d3s -s $W/paths.lua http://127.0.0.1:$PORT > /dev/null
  before=$(awk '{print $14 + $15}' /proc/$pid/stat)
  out=$(/usr/bin/time -f "client %U %S" wrk -t1 -c32 -d8s -s $W/paths.lua http://127.0.0.1:$PORT 2>&1)
  after=$(awk '{print $14 + $15}' /proc/$pid/stat)
  echo "round $round WORKERS=$workers $(echo "$out" | awk '/Requests\/sec/{printf "%s req/s", $2} /^client/{printf "  client %.2f cores", ($2 + $3) / 8}')  service $(echo "($after - $before) / 100 / 8" | bc -l | cut -c1-4) cores"
  kill $pid; wait $pid 2> /dev/null || true
done; done
