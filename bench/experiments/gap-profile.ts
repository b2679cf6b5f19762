// What the main thread ran during the stalls gap-recorder.ts logged: the samples of a --cpu-prof profile
// that fall inside each gap, by function (self) and by the innermost frame of our own code.
// `npx tsx bench/experiments/gap-profile.ts PROFILE.cpuprofile /tmp/gaps.jsonl [MIN_MS]`; GAP_STACKS=1 adds
// each sample's frames of ours, innermost first (which loop of a generator held the loop).
// Both clocks are CLOCK_MONOTONIC in microseconds: V8's profile timestamps and process.hrtime.
import { readFileSync } from 'node:fs'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface CpuProfile { nodes: ProfileNode[], startTime: number, samples: number[], timeDeltas: number[] }
interface Gap { at: string, gapMs: number, ranMs?: number, waitedMs?: number, monoUs?: number }

const [profileFile, gapFile, minText = '50'] = process.argv.slice(2)
if (profileFile === undefined || gapFile === undefined) {
  console.error('usage: npx tsx bench/experiments/gap-profile.ts PROFILE GAPLOG [MIN_MS]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile
const nodes = new Map(profile.nodes.map(node => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

const times: number[] = []
let t = profile.startTime
for (const delta of profile.timeDeltas) times.push(t += delta)
const first = times[0] ?? 0
const last = times[times.length - 1] ?? 0

const name = (frame: CallFrame): string => `${frame.functionName === '' ? '(anonymous)' : frame.functionName} ${frame.url.replace(/^.*\/(src|node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}`
const ours = (frame: CallFrame): boolean => /\/(src|dist)\//.test(frame.url) && !frame.url.includes('node_modules')
const count = (map: Map<string, number>, key: string): void => { map.set(key, (map.get(key) ?? 0) + 1) }
const top = (map: Map<string, number>): string => [...map].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, n]) => `    ${String(n).padStart(4)}  ${k}`).join('\n')

const gaps = readFileSync(gapFile, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Gap)
  .filter((gap): gap is Gap & { monoUs: number } =>
    gap.gapMs >= Number(minText) && gap.monoUs !== undefined && gap.monoUs > first && gap.monoUs - gap.gapMs * 1000 < last)
for (const gap of gaps) {
  const from = gap.monoUs - gap.gapMs * 1000
  const self = new Map<string, number>()
  const own = new Map<string, number>()
  const stacks = new Map<string, number>()
  let samples = 0
  times.forEach((time, i) => {
    if (time < from || time > gap.monoUs) return
    samples++
    let node = nodes.get(profile.samples[i] ?? -1)
    if (node === undefined) return
    count(self, name(node.callFrame))
    const frames: string[] = []
    for (let up: ProfileNode | undefined = node; up !== undefined; up = nodes.get(parent.get(up.id) ?? -1)) {
      if (ours(up.callFrame)) frames.push(`${up.callFrame.functionName}:${up.callFrame.lineNumber + 1}`)
    }
    count(stacks, frames.length === 0 ? '(no frame of ours)' : frames.join(' < '))
    while (node !== undefined && !ours(node.callFrame)) node = nodes.get(parent.get(node.id) ?? -1)
    count(own, node === undefined ? '(no frame of ours)' : name(node.callFrame))
  })
  console.log(`${gap.at} gap ${gap.gapMs} ms (on a core ${gap.ranMs ?? '?'}, queued ${gap.waitedMs ?? '?'}): ${samples} samples`)
  console.log(`  self:\n${top(self)}\n  innermost frame of ours:\n${top(own)}`)
  if (process.env.GAP_STACKS === '1') console.log(`  frames of ours:\n${[...stacks].sort((a, b) => b[1] - a[1]).map(([k, n]) => `    ${String(n).padStart(4)}  ${k}`).join('\n')}`)
}
