#!/bin/bash
# A replica that joins a fleet, with and without the version image `publish` makes (ADR 033): publishes SNAPSHOT
# to two folders (one --no-image), serves both with nginx (ETags, as a static store), then starts the built
# service on each manifest with an empty cache and STATE_DIR, ROUNDS times alternating, and times spawn to the
# first 200 of /-/readyz. The download is loopback: what is left is the replica's own work.
# Usage: bash bench/experiments/join-from-image.sh SNAPSHOT [ROUNDS]
set -euo pipefail
snapshot=$1
rounds=${2:-3}
work=$(mktemp -d)
pid=
trap 'kill $pid 2>/dev/null || true; nginx -p "$work" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$work"' EXIT
node dist/cli/main.js publish --to "$work/fleet/with" --snapshot "$snapshot"
node dist/cli/main.js publish --to "$work/fleet/without" --snapshot "$snapshot" --no-image
port=$((20000 + RANDOM % 10000))
cat > "$work/nginx.conf" <<CONF
daemon on;
pid $work/nginx.pid;
error_log $work/error.log;
events {}
http {
  access_log off;
  sendfile on;
  server { listen 127.0.0.1:$port; root $work/fleet; }
}
CONF
# nginx's workers run as another user: the folders readable by all (mktemp makes them the owner's alone).
chmod -R a+rX "$work"
nginx -p "$work" -c nginx.conf
for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then order="with without"; else order="without with"; fi
  for fleet in $order; do
    rm -rf "$work/replica" && mkdir -p "$work/replica"
    started=$(date +%s%N)
    SNAPSHOT_URL="http://127.0.0.1:$port/$fleet/manifest.json" SNAPSHOT_CACHE_DIR="$work/replica/cache" \
      STATE_DIR="$work/replica/state" node dist/server.js --port $((port + 1)) --log-level warn > "$work/out" 2>&1 &
    pid=$!
    until curl -sf "http://127.0.0.1:$((port + 1))/-/readyz" > /dev/null; do
      kill -0 $pid || { cat "$work/out"; exit 1; }
      [ $(( $(date +%s%N) - started )) -lt 120000000000 ] || { echo "not ready after 120 s"; tail -3 "$work/out"; exit 1; }
      sleep 0.05
    done
    ended=$(date +%s%N)
    image=$(curl -s "http://127.0.0.1:$((port + 1))/-/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot"]["imageMs"])')
    echo "round $round, $fleet image: ready in $(( (ended - started) / 1000000 )) ms (imageMs $image)"
    kill $pid && wait $pid || true
  done
done
