#!/bin/bash
# A start whose version image is damaged, against a start with no image and one with a good image (ADR 033, 042):
# for each build (BUILDS, checkouts with a dist/; default this one), makes the state a first start leaves (a kept
# copy and an image of SNAPSHOT), then starts that build on SNAPSHOT with a fresh copy of it, ROUNDS times, the
# variants in turn (rotated each round, the builds alternating): `none` (no image: the parse), `flipped` (a bit
# flipped in the middle of the file; `flipped-late`, at nine tenths), `cut` (the file cut in half), `good` (a restart). Times spawn to the first
# 200 of /-/readyz and the CPU time it took; prints the log's image and load lines, each at its time since the
# process's first line.
# MEMORY_LIMIT_MB, when set, is the service's: under a budget, what a refused image's read left in memory counts.
# Usage: [BUILDS="DIR…"] [MEMORY_LIMIT_MB=N] bash bench/experiments/damaged-image-start.sh SNAPSHOT [ROUNDS] [VARIANTS]
set -euo pipefail
snapshot=$(realpath "$1")
rounds=${2:-3}
read -r -a variants <<< "${3:-none flipped cut good}"
read -r -a builds <<< "${BUILDS:-.}"
work=$(mktemp -d)
pid=
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 10000))
start () {
  env STATE_DIR="$2" ${MEMORY_LIMIT_MB:+MEMORY_LIMIT_MB=$MEMORY_LIMIT_MB} node "$1/dist/server.js" "$snapshot" --port $port --log-level info --request-log false --watch false > "$3" 2>&1 &
  pid=$!
}
ready () {
  until curl -sf "http://127.0.0.1:$port/-/readyz" > /dev/null; do
    kill -0 $pid || { tail -5 "$2"; exit 1; }
    [ $(( $(date +%s%N) - $1 )) -lt 300000000000 ] || { echo "not ready after 300 s"; exit 1; }
    sleep 0.02
  done
}
lines () {
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").flatMap(line => { try { return [JSON.parse(line)] } catch { return [] } })
    for (const l of lines) if (/image|snapshot loaded|reload failed/.test(l.msg)) console.log(`    +${l.time - lines[0].time} ms ${l.msg}${l.problem ? `: ${l.problem}` : ""}${l.ms === undefined ? "" : ` (${l.ms} ms)`}`)
  ' "$1"
}
# Each build's template: the state its first start leaves, once its image is written.
for b in "${!builds[@]}"; do
  start "${builds[$b]}" "$work/template-$b" "$work/first.log"
  ready "$(date +%s%N)" "$work/first.log"
  until grep -q '"version image written"' "$work/first.log"; do sleep 0.2; done
  kill $pid && wait $pid || true
done
echo "$(uptime)"
for round in $(seq "$rounds"); do
  for n in $(seq 0 $(( ${#variants[@]} - 1 ))); do
    variant=${variants[$(( (n + round - 1) % ${#variants[@]} ))]}
    for b in "${!builds[@]}"; do
      image=$(ls "$work/template-$b/images/"*.image)
      size=$(stat -c %s "$image")
      rm -rf "$work/state" && mkdir "$work/state"
      # The kept copy linked (never written); the image copied, then damaged.
      cp -al "$work/template-$b/versions" "$work/state/versions"
      mkdir "$work/state/images"
      copy="$work/state/images/$(basename "$image")"
      case $variant in
        none) ;;
        good) cp "$image" "$copy" ;;
        flipped) cp "$image" "$copy"; printf '\x5a' | dd of="$copy" bs=1 seek=$(( size / 2 )) conv=notrunc status=none ;;
        flipped-late) cp "$image" "$copy"; printf '\x5a' | dd of="$copy" bs=1 seek=$(( size / 10 * 9 )) conv=notrunc status=none ;;
        cut) head -c $(( size / 2 )) "$image" > "$copy" ;;
      esac
      sync
      started=$(date +%s%N)
      start "${builds[$b]}" "$work/state" "$work/out"
      ready "$started" "$work/out"
      ended=$(date +%s%N)
      # Its CPU time until then, every thread's (utime and stime, in ticks): less at the mercy of a busy machine.
      cpu=$(awk -v tick="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / tick) }' "/proc/$pid/stat")
      echo "round $round, ${builds[$b]}, $variant: ready in $(( (ended - started) / 1000000 )) ms, $cpu ms of CPU"
      lines "$work/out"
      kill $pid && wait $pid || true
    done
  done
done
echo "$(uptime)"
