// Summarises a .cpuprofile (from `npm run bench -- --profile`): self time by function and by file or
// package, as shares of the busy (non-idle) time. Usage: npx tsx bench/profile-top.ts FILE [TOP] [FROM-S [TO-S]]
// (FROM/TO: seconds since the process started, e.g. to leave out the snapshot load or keep only it).
import { readFileSync } from 'node:fs'

interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number } }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

function where (url: string): string {
  if (url === '') return ''
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return `npm:${pkg[1] ?? ''}`
  return url.replace(/^file:\/\//, '').replace(/^.*?\/(dist|src|bench)\//, '$1/')
}

function main (argv: string[]): void {
  const [file, topText, fromText, toText] = argv
  if (file === undefined) {
    console.error('usage: npx tsx bench/profile-top.ts FILE.cpuprofile [TOP] [FROM-S [TO-S]]')
    process.exitCode = 1
    return
  }
  const top = Number(topText ?? 30)
  const from = Number(fromText ?? 0) * 1e6
  const to = toText === undefined ? Infinity : Number(toText) * 1e6
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const nodes = new Map(profile.nodes.map(n => [n.id, n]))
  const byFunction = new Map<string, number>()
  const byPlace = new Map<string, number>()
  let busy = 0
  let idle = 0
  let clock = 0
  profile.samples.forEach((id, i) => {
    const node = nodes.get(id)
    const micros = profile.timeDeltas[i] ?? 0
    clock += micros
    if (node === undefined || clock < from || clock > to) return
    const { functionName, url, lineNumber } = node.callFrame
    if (functionName === '(idle)') { idle += micros; return }
    busy += micros
    const place = where(url)
    const fn = `${functionName === '' ? '(anonymous)' : functionName}${place === '' ? '' : ` ${place}:${lineNumber + 1}`}`
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros)
    const bucket = place === '' ? functionName : place
    byPlace.set(bucket, (byPlace.get(bucket) ?? 0) + micros)
  })
  const share = (micros: number): string => `${(100 * micros / Math.max(1, busy)).toFixed(1).padStart(5)}%`
  console.log(`busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s; shares of busy time`)
  console.log('\nself time by function')
  for (const [name, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(micros)}  ${name}`)
  console.log('\nself time by file or package')
  for (const [name, micros] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(micros)}  ${name}`)
}

main(process.argv.slice(2))
