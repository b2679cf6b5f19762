#!/bin/bash
# A replica that joins a fleet, with and without the version image `publish` makes (ADR 033, 042): publishes
# SNAPSHOT to two folders (one --no-image) of a store, then ROUNDS times, the variants in turn (rotated each
# round): `image` is a process that downloads the image alone as a replica does (the built code's source and
# downloadObject, its SHA-256 taken: the floor a join from the image pays), `with` and `without` start the built
# service on that manifest with an empty cache and STATE_DIR; each timed from its spawn to its end, or to the first
# 200 of /-/readyz (and, for `with`, until its log says the snapshot that followed is kept). Over HTTP, curl's
# download of the image into a file is printed too, as the transfer's own floor. STORE=http (default): nginx serves the folders (ETags, as a static store); STORE=s3: moto's S3
# server holds them. BASE=DIR adds `base`: that checkout's build, joining its own publish (before and after, side by
# side). The store is on loopback: what is left is the replica's own work.
# STEPS=1 prints each start's log lines with their times.
# Usage: [STORE=http|s3] [BASE=DIR] [VARIANTS="image with …"] [STEPS=1] bash bench/experiments/join-from-image.sh SNAPSHOT [ROUNDS]
set -euo pipefail
snapshot=$1
rounds=${2:-3}
store=${STORE:-http}
base=${BASE:-}
work=$(mktemp -d)
pid=
server=
trap 'kill $pid 2>/dev/null || true; [ -n "$server" ] && kill $server 2>/dev/null; nginx -p "$work" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 10000))
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
if [ "$store" = s3 ]; then
  moto_server -H 127.0.0.1 -p "$port" > "$work/moto.log" 2>&1 &
  server=$!
  until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.2; done
  curl -sf -X PUT "http://127.0.0.1:$port/bench" > /dev/null
  export AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" S3_FORCE_PATH_STYLE=true
  to () { echo "s3://bench/$1/"; }
  follow () { echo "s3://bench/$1/manifest.json"; }
  publish () { node "$1/dist/cli/main.js" publish --s3-force-path-style "${@:2}"; }
else
  mkdir -p "$work/fleet"
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
  to () { echo "$work/fleet/$1"; }
  follow () { echo "http://127.0.0.1:$port/$1/manifest.json"; }
  publish () { node "$1/dist/cli/main.js" publish "${@:2}"; }
fi
publish . --to "$(to with)" --snapshot "$snapshot"
publish . --to "$(to without)" --snapshot "$snapshot" --no-image
variants=(image with without)
if [ -n "$base" ]; then
  publish "$base" --to "$(to base)" --snapshot "$snapshot"
  variants+=(base)
fi
# VARIANTS: some of them only (the folders are published all the same).
[ -n "${VARIANTS:-}" ] && read -r -a variants <<< "$VARIANTS"
if [ "$store" = http ]; then
  # nginx's workers run as another user: the folders readable by all (mktemp makes them the owner's alone).
  chmod -R a+rX "$work"
  nginx -p "$work" -c nginx.conf
fi
image=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).image.name)' < <(
  if [ "$store" = s3 ]; then node -e '
    const { S3Client, GetObjectCommand } = require("@aws-sdk/client-s3")
    new S3Client({ forcePathStyle: true }).send(new GetObjectCommand({ Bucket: "bench", Key: "with/manifest.json" }))
      .then(async object => process.stdout.write(await object.Body.transformToString()))'
  else cat "$work/fleet/with/manifest.json"; fi))
# The image alone into a file, as a replica downloads it (flushed, its SHA-256 taken). A file, not node -e: the
# digest's thread would take --input-type from it.
cat > "$work/fetch-image.mjs" <<'SCRIPT'
const [root, manifest, name, file] = process.argv.slice(2)
const { openSource } = await import(`${root}/dist/sources/open-source.js`)
const { DownloadBudget, downloadObject } = await import(`${root}/dist/sources/download-object.js`)
const source = (await openSource(manifest, { forcePathStyle: true })).sibling(name)
const signal = AbortSignal.timeout(600_000)
const fetched = await source.fetch(null, signal)
const limit = new DownloadBudget(2 ** 45).next()
await downloadObject(fetched.body, file, { limit, length: fetched.length, signal, digest: 'sha256' })
SCRIPT
fetch_image () { node "$work/fetch-image.mjs" "$PWD" "$(follow with)" "$image" "$work/image.copy"; }
echo "$(uptime); store $store; the snapshot $(stat -c %s "$snapshot") bytes, its image $image"
for round in $(seq "$rounds"); do
  for n in $(seq 0 $(( ${#variants[@]} - 1 ))); do
    variant=${variants[$(( (n + round - 1) % ${#variants[@]} ))]}
    rm -rf "$work/replica" "$work/image.copy" && mkdir -p "$work/replica"
    sync
    started=$(date +%s%N)
    if [ "$variant" = image ]; then
      fetch_image
      line="round $round, the image alone: downloaded in $(( ($(date +%s%N) - started) / 1000000 )) ms"
      if [ "$store" = http ]; then
        rm -f "$work/image.copy" && sync
        started=$(date +%s%N)
        curl -sf -o "$work/image.copy" "http://127.0.0.1:$port/with/$image" && sync "$work/image.copy"
        line="$line (curl: $(( ($(date +%s%N) - started) / 1000000 )) ms)"
      fi
      echo "$line"
      continue
    fi
    build=.
    fleet=$variant
    [ "$variant" = base ] && build=$base
    SNAPSHOT_URL="$(follow "$fleet")" SNAPSHOT_CACHE_DIR="$work/replica/cache" STATE_DIR="$work/replica/state" \
      node "$build/dist/server.js" --port $((port + 1)) --log-level info --request-log false > "$work/out" 2>&1 &
    pid=$!
    until curl -sf "http://127.0.0.1:$((port + 1))/-/readyz" > /dev/null; do
      kill -0 $pid || { cat "$work/out"; exit 1; }
      [ $(( $(date +%s%N) - started )) -lt 300000000000 ] || { echo "not ready after 300 s"; tail -3 "$work/out"; exit 1; }
      sleep 0.02
    done
    ended=$(date +%s%N)
    image_ms=$(curl -s "http://127.0.0.1:$((port + 1))/-/status" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).snapshot.imageMs)')
    line="round $round, $variant: ready in $(( (ended - started) / 1000000 )) ms (imageMs $image_ms)"
    if [ "$variant" = with ]; then
      until grep -q 'the snapshot served from its image is downloaded' "$work/out"; do
        kill -0 $pid || { cat "$work/out"; exit 1; }
        sleep 0.05
      done
      line="$line; its snapshot kept $(( ($(date +%s%N) - started) / 1000000 )) ms after the spawn"
    fi
    echo "$line"
    # The log's steps, each at its time since the process's first line.
    [ -n "${STEPS:-}" ] && node -e '
      const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").flatMap(line => { try { return [JSON.parse(line)] } catch { return [] } })
      for (const l of lines) console.log(`    +${l.time - lines[0].time} ms ${l.msg}${l.object ? ` ${l.object}` : ""}${l.ms === undefined ? "" : ` (${l.ms} ms)`}`)
    ' "$work/out"
    kill $pid && wait $pid || true
  done
done
echo "$(uptime)"
