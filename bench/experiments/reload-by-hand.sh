#!/bin/bash
# One 1M JSON Lines reload under hot load, by hand, with V8's GC trace: for comparing two builds run after
# run (the bench's reload workload gives one figure per fresh service; this gives the GC log beside it).
#   bash bench/experiments/reload-by-hand.sh CHECKOUT TAG      (NODEARGS="..." adds node flags;
#   CONNECTIONS=n autocannon's connections, default 32: fewer, a lighter steady load)
# Serves bench/.data's 1M file (npm run bench -- --sizes 1m makes it) from a hard link with --watch true,
# puts 40 s of autocannon (-c ${CONNECTIONS:-32}, one hot page) on it, renames a copy one newline longer over the link at
# 5 s, then prints the reload count, prom-client's lag max and p99 (scraped just before the rename, which
# resets them, and after the window), the client's latencies, the reload's peak RSS (VmHWM reset at the
# rename), RSS at the end and 10 s later, and the main thread's collections in the window, from
# /tmp/gc-TAG.log.
set -u
DIR=${1:?checkout}; TAG=${2:?tag}; PORT=38400
SRC=$(ls "$(dirname "$0")"/../.data/snapshot-1M-jsonl-*.jsonl | head -1)
AUTOCANNON=$(cd "$(dirname "$0")"/../.. && pwd)/node_modules/.bin/autocannon
W=/tmp/reload-by-hand
rm -rf $W && mkdir -p $W && ln "$SRC" $W/s.jsonl && cp "$SRC" $W/next.jsonl && echo >> $W/next.jsonl && sync
: > $W/server.log
(cd "$DIR" && exec node --trace-gc ${NODEARGS:-} dist/server.js --snapshot-path $W/s.jsonl --port $PORT --log-level warn --watch true >> $W/server.log 2>&1) & SP=$!
for i in $(seq 1 240); do curl -sf localhost:$PORT/-/readyz > /dev/null && break; sleep 0.5; done
curl -s localhost:$PORT/-/status > /dev/null
$AUTOCANNON -c "${CONNECTIONS:-32}" -d 40 "http://127.0.0.1:$PORT/en/api/internal/explore/?companies=7431&limit=20" > $W/client.log 2>&1 & AP=$!
sleep 5
echo 5 > /proc/$SP/clear_refs
curl -s localhost:$PORT/-/metrics > /dev/null
echo MARK-RENAME >> $W/server.log
mv $W/next.jsonl $W/s.jsonl
wait $AP
echo MARK-END >> $W/server.log
curl -s localhost:$PORT/-/status | grep -o '"succeeded":[0-9]*'
curl -s localhost:$PORT/-/metrics | grep -E "eventloop_lag_(max|p99)_seconds [0-9]"
grep -E "^│ Latency" $W/client.log
grep -E "VmHWM|VmRSS" /proc/$SP/status; sleep 10; grep VmRSS /proc/$SP/status
kill $SP; wait $SP 2> /dev/null
cp $W/server.log /tmp/gc-$TAG.log
# The main thread's isolate is the one with the most collections in the log.
MAIN=$(grep -o '^\[[0-9]*:0x[0-9a-f]*\]' /tmp/gc-$TAG.log | sort | uniq -c | sort -rn | head -1 | awk '{print $2}')
awk '/MARK-RENAME/{on=1} /MARK-END/{on=0} on' /tmp/gc-$TAG.log | grep -F "$MAIN" > /tmp/gc-$TAG.window
echo "main thread in the window: $(grep -c 'ms: Mark-Compact' /tmp/gc-$TAG.window) major collections, $(grep -c 'ms: Scavenge' /tmp/gc-$TAG.window) scavenges"
