// A serving thread (ADR 029): answers on the shared public port from the version the control last handed it.
import type { AddressInfo } from 'node:net'
import { parentPort, workerData } from 'node:worker_threads'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import type { ForwardedAnswer, ForwardedRequest, PublishedVersion, ThreadStart, ToControl, ToThread } from './messages.js'
import { withSharedLabels } from '../plugins/request-metrics.js'
import { Requests } from './requests-by-id.js'
import { servingApp } from './serving-app.js'
import { collectWhenIdle } from './collect-when-idle.js'
import { VersionAdopter } from './version-handoff.js'

if (parentPort === null) throw new Error('serving-thread.ts runs as a worker thread of the control (serving-pool.ts)')
const control = parentPort
const { config, port, forwardOps, id, askings } = workerData as ThreadStart
const say = (message: ToControl): void => { control.postMessage(message) }

const adopter = new VersionAdopter()
let served: SnapshotModel | null = null
/** A `listen` after `close` (the pool closing while it started) is not carried out. */
let closing = false
const forwarded = new Requests<ForwardedAnswer>()
const forward = forwardOps
  ? async (request: ForwardedRequest) => await forwarded.ask(id => { say({ type: 'forward', id, request }) })
  : null

const { app, registry } = await servingApp(config, () => served, forward, { thread: id, askings })

function serve ({ seq, version }: PublishedVersion): void {
  const old = served
  served = adopter.adopt(version)
  const letGo = old === null || old === served ? null : old
  say({ type: 'serving', seq, letGo: letGo?.info.version ?? null })
  if (letGo === null) return
  // A turn later (ADR 012); the control counts it as held until it is gone (ADR 034).
  letGo.memory.retire()
  const { version: name } = letGo.info
  letGo.memory.freed.then(() => { say({ type: 'released', version: name }) }, () => {})
}

/** Serves first, so that no connection finds it without a version. */
async function listen (current: PublishedVersion | null): Promise<void> {
  if (closing) return
  if (current !== null) serve(current)
  try {
    // `reusePort` (Node 22.12+): every thread binds the port, the kernel spreads connections.
    await app.listen({ port, host: config.host, reusePort: true } as unknown as { port: number, host: string })
  } catch (error) {
    say({ type: 'failed', message: (error as Error).message, code: (error as NodeJS.ErrnoException).code ?? null })
    control.close()
    await app.close()
    return
  }
  const address = app.server.address() as AddressInfo
  say({ type: 'listening', port: address.port, address: address.address })
}

control.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'listen':
      // A version it cannot take ends the thread: the pool starts another.
      listen(message.current).catch((error: unknown) => { process.nextTick(() => { throw error }) })
      break
    case 'version':
      serve(message)
      break
    case 'metrics':
      registry.getMetricsAsJSON().then(
        metrics => { say({ type: 'metrics', id: message.id, metrics: withSharedLabels(metrics) }) },
        () => { say({ type: 'metrics', id: message.id, metrics: [] }) }
      )
      break
    case 'answer':
      forwarded.answer(message.id, message.answer)
      break
    case 'journal': {
      const journal = app.requestJournal
      if (message.reset) {
        journal?.clear()
        app.trouble?.restart()
      }
      say({ type: 'journal', id: message.id, part: journal?.part() ?? null })
      break
    }
    case 'close':
      closing = true
      app.close()
        .catch((error: unknown) => { app.log.error({ err: error }, 'closing a serving thread failed') })
        .finally(() => {
          say({ type: 'closed' })
          // A log write still waiting for a stuck reader would keep the thread alive (ADR 032).
          app.logDestination?.close()
          control.close()
        })
      break
  }
})

collectWhenIdle()
say({ type: 'ready' })
