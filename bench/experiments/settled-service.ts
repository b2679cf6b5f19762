// The memory goal's two figures, measured as the bench measures settled RSS, several times side by side:
// `node dist/server.js` of each checkout serving SNAPSHOT (or the demo snapshot: `demo`), idle SETTLE
// seconds after /-/readyz, then a full GC forced from outside (SIGUSR1 + the inspector), then VmRSS.
// `npx tsx bench/experiments/settled-service.ts SNAPSHOT|demo ROUNDS CHECKOUT...` (SETTLE=5 by default).
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { forceGc } from '../force-gc.js'
import { freePort, memoryOf, startChild, stopChild, waitUntilAnswering } from '../processes.js'

const [snapshot, rounds = '3', ...checkouts] = process.argv.slice(2)
if (snapshot === undefined || checkouts.length === 0) {
  console.error('usage: npx tsx bench/experiments/settled-service.ts SNAPSHOT|demo ROUNDS CHECKOUT...')
  process.exit(2)
}
const settleMs = Number(process.env.SETTLE ?? 5) * 1000
for (let round = 1; round <= Number(rounds); round++) {
  for (const checkout of checkouts) {
    const root = resolve(checkout)
    const port = await freePort()
    const source = snapshot === 'demo' ? [] : ['--snapshot-path', resolve(snapshot)]
    const child = startChild('service', [join(root, 'dist', 'server.js'), ...source, '--port', String(port), '--log-level', 'warn', '--watch', 'false'], { cwd: root })
    try {
      const readyMs = await waitUntilAnswering(child, `http://127.0.0.1:${port}/-/readyz`, 300_000)
      await sleep(settleMs)
      if (!await forceGc(child.process.pid as number)) throw new Error('could not force a GC (port 9229 taken?)')
      const { rssBytes } = await memoryOf(child.process.pid as number)
      // V8's and Node's own account of the memory, where /-/metrics answers (prom-client's default metrics).
      const metrics = await fetch(`http://127.0.0.1:${port}/-/metrics`).then(async r => await r.text()).catch(() => '')
      const gauge = (name: string): string => {
        const value = new RegExp(`^explore_${name} (\\S+)`, 'm').exec(metrics)?.[1]
        return value === undefined ? '?' : (Number(value) / 1e6).toFixed(1)
      }
      console.log(`round ${round} ${checkout}: ready ${(readyMs / 1000).toFixed(2)} s, settled RSS ${(rssBytes / 1e6).toFixed(1)} MB` +
        ` (heap total ${gauge('nodejs_heap_size_total_bytes')}, used ${gauge('nodejs_heap_size_used_bytes')}, external ${gauge('nodejs_external_memory_bytes')} MB)`)
    } finally {
      await stopChild(child)
    }
  }
}
