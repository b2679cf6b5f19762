// The first answer of two builds, alternating, N rounds: from the spawn of `node dist/server.js` to the
// first 200 of /-/readyz, and the peak RSS (VmHWM) then, by the bench's own helpers (bench/processes.ts).
// The bench's load figure is one sample per build; on a shared VM one sample moves by ±15%, so a 5% claim
// needs rounds. Rounds go A B, B A, A B … so that neither build always runs second.
//   npx tsx bench/experiments/first-answer.ts CHECKOUT-A CHECKOUT-B [ROUNDS] [SNAPSHOT]
// SNAPSHOT: default the bench's 1M JSON Lines file (`npm run bench -- --sizes 1m` makes it). Each server
// gets a fresh STATE_DIR.
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { experimentSnapshot } from '../snapshots.js'
import { childEnv, freePort, memoryOf, startChild, stopChild, waitUntilAnswering } from '../processes.js'

const [a, b, roundsText = '4', snapshotArg] = process.argv.slice(2)
const rounds = Number(roundsText)
if (a === undefined || b === undefined || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: npx tsx bench/experiments/first-answer.ts CHECKOUT-A CHECKOUT-B [ROUNDS] [SNAPSHOT]')
  process.exit(2)
}
const snapshot = experimentSnapshot(snapshotArg)

async function firstAnswer (checkout: string): Promise<void> {
  const state = await mkdtemp(join(tmpdir(), 'first-answer-'))
  const port = await freePort()
  const child = startChild(checkout, [join(checkout, 'dist', 'server.js'), '--snapshot-path', snapshot, '--port', String(port), '--log-level', 'warn'],
    { env: { ...childEnv(), STATE_DIR: state } })
  try {
    const ms = await waitUntilAnswering(child, `http://127.0.0.1:${port}/-/readyz`, 600_000, 50)
    const { peakRssBytes } = await memoryOf(child.pid)
    const commit = execFileSync('git', ['-C', checkout, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
    console.log(`${checkout} ${commit}: first answer ${Math.round(ms)} ms, peak ${Math.round(peakRssBytes / 1e6)} MB`)
  } finally {
    await stopChild(child)
    await rm(state, { recursive: true, force: true })
  }
}

const [first, second] = [resolve(a), resolve(b)]
for (let round = 1; round <= rounds; round++) {
  for (const checkout of round % 2 === 1 ? [first, second] : [second, first]) await firstAnswer(checkout)
}
