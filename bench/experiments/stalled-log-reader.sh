#!/bin/bash
# The request log to a reader that reads nothing (a FIFO held open by a process that never reads: a stuck log
# shipper) against the log to /dev/null and to a regular file, hot pages of the sample snapshot, rounds alternating
# (ADR 032).
#   bash bench/experiments/stalled-log-reader.sh [ROUNDS] [SECONDS]   (apt-get install wrk; `npm run build` first;
#   WORKERS=2 with Node 24 first on PATH)
# Prints per round: requests/s, RSS at the start and at the end of the load, the peak (VmHWM), and how long
# SIGTERM took to end the process; with CONNECTIONS (4) more clients.
set -eu
ROOT=$(cd "$(dirname "$0")"/../.. && pwd); W=$(mktemp -d); PORT=3918; SECONDS_LOAD=${2:-60}
trap 'rm -rf "$W"' EXIT
mkfifo "$W/log"
rss () { awk '/^VmRSS/{print int($2 / 1024)}' "/proc/$1/status"; }
for round in $(seq 1 "${1:-2}"); do for sink in stalled null file; do
  if [ $sink = stalled ]; then
    sleep 100000 < "$W/log" & holder=$!   # opens the reading end, reads nothing
    out=$W/log
  else
    holder=''; out=/dev/null; [ $sink = null ] || out=$W/file.log
  fi
  PORT=$PORT WORKERS=${WORKERS:-1} LOG_LEVEL=info LOG_PRETTY=false WATCH=false node "$ROOT"/dist/server.js > "$out" 2>&1 & pid=$!
  for _ in $(seq 1 100); do curl -sf localhost:$PORT/-/readyz > /dev/null && break; sleep 0.2; done
  wrk -t1 -c4 -d3s "http://127.0.0.1:$PORT/en/api/internal/explore/?companies=1" > /dev/null
  start=$(rss $pid)
  rate=$(wrk -t1 -c"${CONNECTIONS:-4}" -d"${SECONDS_LOAD}s" "http://127.0.0.1:$PORT/en/api/internal/explore/?companies=1" | awk '/Requests\/sec/{print $2}')
  end=$(rss $pid); peak=$(awk '/^VmHWM/{print int($2 / 1024)}' "/proc/$pid/status")
  dropped=$(curl -s localhost:$PORT/-/metrics | awk '/^explore_log_lines_dropped_total/{print $2}')
  t0=$(date +%s%N); kill -TERM $pid
  for _ in $(seq 1 300); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
  if kill -0 $pid 2> /dev/null; then exit_ms='still running after 30 s'; kill -KILL $pid; else exit_ms="$(( ($(date +%s%N) - t0) / 1000000 )) ms"; fi
  wait $pid 2> /dev/null || true
  [ -z "$holder" ] || { kill $holder; wait $holder 2> /dev/null || true; }
  echo "round $round log to $sink: $rate req/s  RSS $start -> $end MB (peak $peak)  dropped ${dropped:-0}  SIGTERM: $exit_ms"
done; done
