// A serving thread (ADR 029): listens on the public port beside the others and answers from the version the
// control thread last handed it, swapped in by one assignment; it never loads. Started by serving-pool.ts.
import type { AddressInfo } from 'node:net'
import { parentPort, workerData } from 'node:worker_threads'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { ForwardedAnswer, ForwardedRequest, ThreadStart, ToControl, ToThread } from './messages.js'
import { withSharedLabels } from '../plugins/request-metrics.js'
import { servingApp } from './serving-app.js'
import { VersionAdopter } from './version-handoff.js'

const control = parentPort
if (control === null) throw new Error('serving-thread.ts runs as a worker thread of the control (serving-pool.ts)')
const { config, port, forwardOps, version } = workerData as ThreadStart
const say = (message: ToControl): void => { control.postMessage(message) }

const adopter = new VersionAdopter()
// The version served when it was started, taken before it listens: no connection finds it without one.
let served: SnapshotModel | null = version === null ? null : adopter.adopt(version.version)
const waiting = new Map<number, (answer: ForwardedAnswer) => void>()
let lastId = 0
const forward = forwardOps
  ? async (request: ForwardedRequest) => await new Promise<ForwardedAnswer>(resolve => {
    const id = ++lastId
    waiting.set(id, resolve)
    say({ type: 'forward', id, request })
  })
  : null

const { app, registry } = await servingApp(config, () => served, forward)

control.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'version': {
      const old = served
      served = adopter.adopt(message.version)
      say({ type: 'serving', seq: message.seq })
      // Let go a turn later (ADR 012): nothing still in this turn reads the old version's pages.
      if (old !== served) old?.memory.retire()
      break
    }
    case 'metrics':
      registry.getMetricsAsJSON().then(
        metrics => { say({ type: 'metrics', id: message.id, metrics: withSharedLabels(metrics) }) },
        () => { say({ type: 'metrics', id: message.id, metrics: [] }) }
      )
      break
    case 'answer':
      waiting.get(message.id)?.(message.answer)
      waiting.delete(message.id)
      break
    case 'close':
      // Stops accepting, lets requests in flight end (drain-on-close.ts), then lets the thread end.
      app.close()
        .catch((error: unknown) => { app.log.error({ err: error }, 'closing a serving thread failed') })
        .finally(() => {
          say({ type: 'closed' })
          control.close()
        })
      break
  }
})

try {
  // `reusePort` (Node 22.12+, serving-mode.ts): every serving thread binds the port, the kernel spreads connections.
  await app.listen({ port, host: config.host, reusePort: true } as unknown as { port: number, host: string })
} catch (error) {
  say({ type: 'failed', message: (error as Error).message, code: (error as NodeJS.ErrnoException).code ?? null })
  control.close()
  await app.close()
}
if (app.server.listening) {
  const address = app.server.address() as AddressInfo
  if (version !== null) say({ type: 'serving', seq: version.seq })
  say({ type: 'listening', port: address.port, address: address.address })
}
