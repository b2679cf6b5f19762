// WORKERS > 1: the primary process of node:cluster. It serves nothing itself and holds no snapshot; it
// starts the workers (each a whole service on the shared port, with its own copy of the snapshot), starts
// again one that dies (with a backoff, logged), follows the snapshot file once for all of them and tells
// every worker to reload, passes SIGHUP on, keeps the table of what each worker serves (shown by every
// worker's /-/status), answers /-/metrics for the cluster (prom-client's AggregatorRegistry), and on
// SIGTERM or SIGINT stops them all within the grace period.
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry } from 'prom-client'
import pino from 'pino'
import { changesDirOf, type Config } from '../config.js'
import { watchSnapshot } from '../snapshot/store/watch-snapshot.js'
import type { Chain } from '../snapshot/store/snapshot-store.js'
import { sourceStatusJson, type SourceFollower } from '../sources/follow-source.js'
import { followedFile, followerFor } from '../sources/open-follower.js'
import { openSource } from '../sources/open-source.js'
import { isHttpError, serverError } from '../errors.js'
import { openVersions, ServedVersions, versionPaths, type ActionResult } from '../snapshot/versions/served-versions.js'
import { allLoaded, askToServe, ClusterStore, type WorkerAnswer, type WorkerAsk } from './cluster-store.js'
import { LoadOrder } from './memory-order.js'
import { megabytes, resolveBudget } from '../snapshot/memory-budget.js'
import { isExploreMessage, type ToPrimary, type ToWorker, type WorkerServes, type WorkerState } from './messages.js'

/** Environment variable that tells a process it is a worker of this primary (workers never watch). */
export const WORKER_ENV = 'EXPLORE_CLUSTER_WORKER'

/** A worker that lived this long before it died is started again at once; one that did not, after a backoff. */
const STABLE_MS = 30_000
const MAX_BACKOFF_MS = 30_000

export async function runPrimary (config: Config): Promise<void> {
  // The workers' logger settings (Fastify's is pino too), so that one log reads as one.
  const log = pino({
    level: config.logLevel,
    base: { pid: process.pid, role: 'primary' },
    ...(config.logPretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' } } } : {})
  })
  const states = new Map<number, WorkerState>()
  const aggregator = new AggregatorRegistry()
  let stopping = false
  let failuresInARow = 0
  /** Whether any worker has served a snapshot yet: before, a worker that exits 1 had a bad first file. */
  let served = false
  /** Workers that have reported since they started: they listen for the primary's messages. */
  const reported = new Set<number>()
  let startFollowing: (() => void) | null = null
  // The budget is the whole cluster's: every worker's load is granted here, in turn when they do not all fit.
  const budget = resolveBudget(config.memoryLimitMb)
  const loads = new LoadOrder(budget, () => [...states.values()].map(state => state.pid))

  // The versions are kept here, where the snapshot is followed: workers report what they
  // load, and pass the operator's actions on. Read before any worker starts: it may report at once.
  const versionsLog = log.child({ component: 'versions' })
  const opened = await openVersions({ ...versionPaths(config.stateDir), keep: config.keepVersions, log: versionsLog, sweep: true })
  /** What each worker last said it serves: the file it loaded and its items. */
  const servedBy = new Map<number, WorkerServes>()
  const loadEverywhere = async (chain: Chain): Promise<'loaded' | 'failed'> => {
    const answers = await askAll(askToServe(chain))
    return allLoaded(answers) ? 'loaded' : 'failed'
  }
  const versions = new ServedVersions(opened.kept, versionPaths(config.stateDir).pinFile, {
    serve: loadEverywhere,
    served: () => {
      const state = [...states.values()].find(worker => worker.version !== null)
      if (state === undefined || state.version === null) return null
      return { version: state.version, generatedAt: state.generatedAt, items: servedBy.get(state.id)?.items ?? {} }
    },
    follow: async () => {
      if (store === null) {
        await loadEverywhere({ snapshot: config.snapshotPath, changes: [] })
        return
      }
      // What is held (the cached copy, or the cached manifest's chain), then any newer object.
      await follower?.resume()
    },
    // Each worker loads one file at a time, in the order it is told.
    idle: async () => {}
  }, opened.pin)
  const sharePin = () => broadcast({ explore: 'pin', pin: versions.currentPin(), newest: versions.noticed() })
  /** Keeps the version a worker serves, as it reported it. */
  const keepServed = (state: WorkerState, served: WorkerServes): void => {
    if (state.version === null) return
    opened.kept.keep({ ...served, version: state.version, generatedAt: state.generatedAt, source: follower?.status().url ?? config.snapshotPath }, { owned: config.snapshotUrl !== null }).catch(() => {})
  }
  /** Keeps the version the workers serve from the snapshot `file`, as the first of them reported it. */
  const keepServedFrom = (file: string): void => {
    const state = [...states.values()].find(worker => worker.version !== null && servedBy.get(worker.id)?.file === file)
    const served = state === undefined ? undefined : servedBy.get(state.id)
    if (state !== undefined && served !== undefined) keepServed(state, served)
  }

  const broadcast = (message: ToWorker) => {
    for (const worker of Object.values(cluster.workers ?? {})) if (worker !== undefined) tell(worker, message)
  }
  // With SNAPSHOT_URL, the source is followed here, once: each download goes to every worker.
  let follower: SourceFollower | null = null
  const shareStates = () => broadcast({ explore: 'cluster', workers: [...states.values()], source: follower === null ? null : sourceStatusJson(follower.status()) })
  /** Reloads asked of the workers and not yet answered by all: request → the workers still to answer. */
  const asked = new Map<number, { waiting: Set<number>, answers: WorkerAnswer[], done: () => void }>()
  let nextRequest = 1
  const askAll = async (ask: WorkerAsk): Promise<WorkerAnswer[]> => {
    const request = nextRequest++
    const workers = Object.values(cluster.workers ?? {}).filter(worker => worker !== undefined && reported.has(worker.id)) as Worker[]
    if (workers.length === 0) return []
    return await new Promise(resolve => {
      const entry = { waiting: new Set(workers.map(worker => worker.id)), answers: [] as WorkerAnswer[], done: () => { asked.delete(request); resolve(entry.answers) } }
      asked.set(request, entry)
      for (const worker of workers) tell(worker, { ...ask, request })
    })
  }
  /** A worker answered (or died, and will not): the reload is done once every worker has. */
  const answered = (request: number, workerId: number, answer: WorkerAnswer | null) => {
    const entry = asked.get(request)
    if (entry === undefined || !entry.waiting.delete(workerId)) return
    if (answer !== null) entry.answers.push(answer)
    if (entry.waiting.size === 0) entry.done()
  }

  const start = (slot: number) => {
    const started = Date.now()
    const worker = cluster.fork({ [WORKER_ENV]: '1', EXPLORE_WORKER_SLOT: String(slot) })
    states.set(worker.id, { id: worker.id, pid: worker.process.pid ?? 0, version: null, generatedAt: null, loadedAt: null, lastReload: null })
    worker.on('message', (message: unknown) => { onMessage(worker, message) })
    // A send racing a worker's exit fails on the worker's channel: its exit is handled below.
    worker.on('error', (error: Error) => log.warn({ worker: worker.id, err: error }, 'a message to a worker failed'))
    worker.on('exit', (code, signal) => {
      states.delete(worker.id)
      servedBy.delete(worker.id)
      loads.forget(worker.process.pid ?? 0)
      for (const request of [...asked.keys()]) answered(request, worker.id, null)
      shareStates()
      if (stopping) return
      if (code === 1 && !served && config.snapshotUrl === null) {
        // As a single process does: a bad or missing first snapshot stops the service.
        log.fatal({ worker: worker.id }, 'a worker could not load the first snapshot (its report is above): stopping')
        stop('SIGTERM', 1)
        return
      }
      const lived = Date.now() - started
      failuresInARow = lived > STABLE_MS ? 0 : failuresInARow + 1
      const wait = failuresInARow === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 500 * 2 ** (failuresInARow - 1))
      log.error({ worker: worker.id, workerPid: worker.process.pid, code, signal, restartInMs: wait }, 'a worker died; starting another')
      setTimeout(() => { if (!stopping) start(slot) }, wait).unref()
    })
  }

  const onMessage = (worker: Worker, message: unknown) => {
    if (!isExploreMessage(message)) return
    const said = message as ToPrimary
    if (said.explore === 'reloaded') {
      answered(said.request, worker.id, { outcome: said.outcome, problems: said.problems })
    } else if (said.explore === 'state') {
      const before = states.get(worker.id)
      states.set(worker.id, said.state)
      if (said.state.version !== null) served = true
      if (said.served !== undefined && said.state.version !== null) {
        servedBy.set(worker.id, said.served)
        // An editor's file is copied as soon as one worker has loaded it (every worker reports the same
        // version: it is kept once). A download is linked once every worker has loaded it (below), before
        // the follower renames it over the cached copy: a worker that refused it serves no such version.
        if (config.snapshotUrl === null) keepServed(said.state, said.served)
      }
      if (!reported.has(worker.id)) {
        reported.add(worker.id)
        // A worker started again while the cluster follows a source loads the last good copy.
        if (store !== null && served) {
          const pinned = versions.pinnedChain()
          tell(worker, pinned === null ? store.catchUp() : askToServe(pinned))
        }
        tell(worker, { explore: 'pin', pin: versions.currentPin(), newest: versions.noticed() })
        // The source is followed once every first worker listens: a message sent before would be lost.
        if (reported.size === config.workers) startFollowing?.()
      }
      if (said.state.lastReload === 'failed' && before?.lastReload !== 'failed') {
        log.error({ worker: worker.id, workerPid: said.state.pid, serving: said.state.version }, 'a worker could not load the new snapshot; it serves its last good one')
      }
      shareStates()
    } else if (said.explore === 'memory') {
      const { request } = said
      loads.ask(`${worker.id}:${request}`, worker.process.pid ?? 0, said.neededBytes).then(answer => { tell(worker, { explore: 'memory', request, answer }) }, () => {})
    } else if (said.explore === 'memory-done') {
      loads.done(`${worker.id}:${said.request}`)
    } else if (said.explore === 'versions') {
      const { request, action } = said
      const acting: Promise<ActionResult> = action === 'state'
        ? Promise.resolve({ state: versions.state(), from: null, to: null })
        : versions.carryOut(action, said.version)
      acting.then(result => {
        if (action !== 'state') {
          log.info({ action, from: result.from, to: result.to, worker: worker.id }, `operator action carried out by every worker: ${action}`)
          sharePin()
        }
        tell(worker, { explore: 'versions', request, result, error: null })
      }, (error: unknown) => {
        if (!isHttpError(error)) log.error({ err: error, action }, 'an operator action failed')
        const relayed = isHttpError(error) ? error : serverError()
        tell(worker, { explore: 'versions', request, result: null, error: { statusCode: relayed.statusCode, code: relayed.code, body: relayed.body } })
      })
    } else if (said.explore === 'metrics') {
      aggregator.clusterMetrics().then(
        text => { tell(worker, { explore: 'metrics', request: said.request, text }) },
        (error: unknown) => {
          log.error({ err: error }, 'cluster metrics could not be gathered')
          tell(worker, { explore: 'metrics', request: said.request, text: null })
        }
      )
    }
  }

  for (let slot = 0; slot < config.workers; slot++) start(slot)
  log.info({ workers: config.workers, memoryBudget: budget }, `started ${config.workers} workers; each holds its own copy of the snapshot, within a memory budget of ${megabytes(budget.bytes)} (${budget.source}) for all`)

  // Followed once, here; every worker loads the file when told (a failed load keeps its last good one).
  let store: ClusterStore | null = null
  if (config.snapshotUrl !== null) {
    const source = await openSource(config.snapshotUrl, { forcePathStyle: config.s3ForcePathStyle, headers: config.snapshotHttpHeaders })
    store = new ClusterStore(followedFile(source, config.snapshotCacheDir), {
      askAll: async ask => {
        const answers = await askAll(ask)
        // Every worker has read it: linked now, before the follower renames the download over the cached copy.
        if (allLoaded(answers)) keepServedFrom(ask.explore === 'reload' ? ask.file : ask.chain.snapshot)
        await opened.kept.idle()
        return answers
      },
      serving: () => [...states.values()].some(state => state.version !== null)
    }, () => versions.pinnedChain())
    const sourceLog = log.child({ component: 'snapshot' })
    follower = followerFor(source, store, {
      cacheDir: config.snapshotCacheDir,
      pollSeconds: config.snapshotPollSeconds,
      maxBytes: config.snapshotMaxMb * 1024 * 1024,
      log: sourceLog,
      onChecked: shareStates,
      held: () => versions.pinned(),
      onNoticed: validators => {
        versions.holdBack({ object: source.shown, etag: validators.etag }, sourceLog)
        sharePin()
      }
    })
    const following = follower
    startFollowing = () => {
      startFollowing = null
      following.start().then(shareStates, (error: unknown) => log.error({ err: error }, 'the snapshot source cannot be followed'))
    }
  }
  const watcher = config.watch && config.snapshotUrl === null
    ? watchSnapshot(config.snapshotPath, () => {
      if (versions.holdBack({ file: config.snapshotPath }, log)) {
        sharePin()
        return
      }
      broadcast({ explore: 'reload' })
    }, {
      debounceMs: config.reloadDebounceMs,
      changesDir: changesDirOf(config),
      onError: error => log.error({ err: error }, 'snapshot watcher error')
    })
    : null
  await watcher?.ready

  process.on('SIGHUP', () => {
    if (follower !== null) {
      log.info('SIGHUP: checking the snapshot source')
      follower.checkAgain().then(shareStates, () => {})
      return
    }
    if (versions.holdBack('signal', log)) return
    log.info('SIGHUP: every worker reloads the snapshot')
    broadcast({ explore: 'reload' })
  })

  function stop (signal: NodeJS.Signals, exitCode = 0): void {
    if (stopping && exitCode === 0) {
      log.error({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    stopping = true
    log.info({ signal }, 'shutting down: every worker finishes its requests in flight')
    watcher?.close().catch(() => {})
    follower?.stop().catch(() => {})
    const workers = Object.values(cluster.workers ?? {}).filter(worker => worker !== undefined)
    let clean = true
    const timer = setTimeout(() => {
      log.error({ graceMs: config.shutdownGraceMs }, 'workers outlived the grace period: killing them')
      for (const worker of workers) worker.process.kill('SIGKILL')
      process.exit(1)
    }, config.shutdownGraceMs + 1000)
    timer.unref()
    let left = workers.length
    if (left === 0) process.exit(exitCode)
    for (const worker of workers) {
      worker.once('exit', code => {
        if (code !== 0) clean = false
        if (--left === 0) {
          log.info('closed')
          process.exit(clean ? exitCode : 1)
        }
      })
      // Each worker shuts down as a single process does on SIGTERM: no new connections, requests finished.
      worker.process.kill('SIGTERM')
    }
  }
  process.on('SIGTERM', signal => { stop(signal) })
  process.on('SIGINT', signal => { stop(signal) })
}

/** Sends to a worker whose channel is still open (one that is closing is about to exit). */
function tell (worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message)
}
