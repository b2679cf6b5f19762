// What the main thread ran during the stalls gap-recorder.mjs logged: the samples of a --cpu-prof profile
// that fall inside each gap, by function (self) and by the innermost frame of our own code.
// `node bench/experiments/gap-profile.mjs PROFILE.cpuprofile /tmp/gaps.jsonl [MIN_MS]`
// Both clocks are CLOCK_MONOTONIC in microseconds: V8's profile timestamps and process.hrtime.
import { readFileSync } from 'node:fs'

const [profileFile, gapFile, minText = '50'] = process.argv.slice(2)
if (profileFile === undefined || gapFile === undefined) throw new Error('usage: gap-profile.mjs PROFILE GAPLOG [MIN_MS]')
const profile = JSON.parse(readFileSync(profileFile, 'utf8'))
const nodes = new Map(profile.nodes.map(node => [node.id, node]))
const parent = new Map()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

const times = []
let t = profile.startTime
for (const delta of profile.timeDeltas) times.push(t += delta)
const [first, last] = [times[0], times[times.length - 1]]

const name = frame => `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(src|node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}`
const ours = frame => /\/(src|dist)\//.test(frame.url) && !frame.url.includes('node_modules')

const gaps = readFileSync(gapFile, 'utf8').trim().split('\n').map(line => JSON.parse(line))
  .filter(gap => gap.gapMs >= Number(minText) && gap.monoUs !== undefined && gap.monoUs > first && gap.monoUs - gap.gapMs * 1000 < last)
for (const gap of gaps) {
  const from = gap.monoUs - gap.gapMs * 1000
  const self = new Map()
  const own = new Map()
  let count = 0
  for (let i = 0; i < times.length; i++) {
    if (times[i] < from || times[i] > gap.monoUs) continue
    count++
    let node = nodes.get(profile.samples[i])
    self.set(name(node.callFrame), (self.get(name(node.callFrame)) ?? 0) + 1)
    while (node !== undefined && !ours(node.callFrame)) node = nodes.get(parent.get(node.id))
    const key = node === undefined ? '(no frame of ours)' : name(node.callFrame)
    own.set(key, (own.get(key) ?? 0) + 1)
  }
  const top = map => [...map].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, n]) => `    ${String(n).padStart(4)}  ${k}`).join('\n')
  console.log(`${gap.at} gap ${gap.gapMs} ms (on a core ${gap.ranMs}, queued ${gap.waitedMs}): ${count} samples`)
  console.log(`  self:\n${top(self)}\n  innermost frame of ours:\n${top(own)}`)
}
