#!/usr/bin/env bash
# Differential test: the replica against a real Django REST Framework implementation of the explore API,
# request by request, on the same snapshot. Needs Debian's python3-django and python3-djangorestframework
# (apt-get install python3-djangorestframework); skips with a message where they are missing.
# Usage: npm run test:drf [-- SNAPSHOT [RANDOM_CASES [SEED]]]
set -euo pipefail
cd "$(dirname "$0")/../.."
snapshot=${1:-data/snapshot.json}
random=${2:-2000}
seed=${3:-1}
python=/usr/bin/python3
if ! "$python" -c 'import django, rest_framework' 2>/dev/null; then
  echo "SKIP: Django and DRF are not installed (apt-get install python3-djangorestframework)"
  exit 0
fi
pids=()
# The replica's kept versions in a directory of this run's, not the user's cache.
state=$(mktemp -d)
cleanup () {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$state"
}
trap cleanup EXIT
free_port () { node -e 's=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})'; }
ref_port=$(free_port)
"$python" test/drf-reference/serve.py --snapshot "$snapshot" --port "$ref_port" --quiet &
pids+=($!)
rep_port=$(free_port)
STATE_DIR=$state node --import tsx src/server.ts --snapshot-path "$snapshot" --port "$rep_port" --log-level warn &
pids+=($!)
# Exit 2, as compare.mjs does when it cannot compare: a server that never answers is not a difference.
cannot_compare () { echo "test:drf: $1" >&2; exit 2; }
for port in "$ref_port" "$rep_port"; do
  up=0
  for _ in $(seq 1 100); do
    if node -e "require('net').connect($port,'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))"; then up=1; break; fi
    sleep 0.1
  done
  [ "$up" = 1 ] || cannot_compare "nothing listens on port $port after 10 s ($([ "$port" = "$ref_port" ] && echo 'the DRF reference' || echo 'the replica'))"
done
# The replica listens before its snapshot is loaded: wait until it serves one.
ready=0
for _ in $(seq 1 300); do
  if node -e "require('http').get('http://127.0.0.1:$rep_port/-/readyz',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))"; then ready=1; break; fi
  sleep 0.1
done
[ "$ready" = 1 ] || cannot_compare "the replica did not become ready within 30 s (its log above)"
# --replica-known: the differences docs/reference/http-api.md lists as deliberate are counted apart; any other fails the run.
node test/drf-reference/compare.mjs --a "http://127.0.0.1:$ref_port" --b "http://127.0.0.1:$rep_port" --random "$random" --seed "$seed" --replica-known
