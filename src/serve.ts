// What serving is: configuration → buildApp (or the cluster's primary) → listen (and OPS_PORT) → the first
// snapshot; graceful shutdown on SIGTERM/SIGINT; SIGHUP reloads. Run by the entry, server.ts, and by
// `explore-replica serve` (src/cli/main.ts).
import cluster from 'node:cluster'
import type { AddressInfo } from 'node:net'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { portSharing } from './cluster/port-sharing.js'
import { runPrimary } from './cluster/primary.js'
import { helpText, loadConfig } from './config.js'
import { ConfigError, SnapshotError } from './errors.js'
import { VERSION } from './version.js'

export async function serve (argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText())
    return
  }
  // `node dist/server.js --version` too, which comes here without src/cli/main.ts.
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`explore-replica ${VERSION}\n`)
    return
  }
  const loaded = loadConfig({ env: process.env, argv, tty: process.stdout.isTTY === true })
  if (loaded.workers > 1 && cluster.isPrimary) {
    await runPrimary(loaded)
    return
  }
  // A worker is told to reload by the primary, which follows the file for all of them.
  const config = cluster.isWorker ? { ...loaded, watch: false } : loaded
  const app = await buildApp(config)

  // SIGTERM or SIGINT: stop accepting, let in-flight requests finish, close the watcher, exit 0. A second
  // signal, or the grace period running out, exits 1 at once. A cluster's worker gets the signal twice
  // (the terminal or systemd signals the whole group, and the primary passes it on): it closes once.
  if (cluster.isWorker) {
    closeOnce(app, config.shutdownGraceMs)
  } else {
    closeWithGrace({
      delay: config.shutdownGraceMs,
      // SIGHUP means "reload" to this service (below), not "stop".
      skip: ['SIGHUP'],
      logger: { error: (message: string) => app.log.error(message) },
      onSecondSignal: signal => app.log.error({ signal }, 'second signal: exiting now'),
      onTimeout: delay => app.log.error({ graceMs: delay }, 'in-flight requests outlived the grace period: exiting now')
    }, async ({ signal, err }) => {
      if (err !== undefined) app.log.error({ err }, 'closing after an unexpected error')
      else app.log.info({ signal }, 'shutting down: no new connections; finishing requests in flight')
      await app.close()
      app.log.info('closed')
    })
  }

  // The Unix convention for daemons: SIGHUP re-reads the snapshot, whether or not the file is watched.
  // From a URL, it checks the source: a check begun after the signal (one under way may have asked before
  // the publish that the signal follows).
  process.on('SIGHUP', () => {
    // A pinned file stays served; a source is still checked (a newer object is noticed, not loaded).
    if (app.snapshotSource === null && app.snapshotVersions?.holdBack('signal', app.log) === true) return
    app.log.info('SIGHUP: reloading the snapshot')
    const reloading = app.snapshotSource?.checkAgain() ?? app.snapshots.reload()
    reloading.catch(() => {})
  })
  // Listening before the snapshot is loaded: a large file takes what it takes, and meanwhile /-/healthz
  // answers and /-/readyz says it is loading. A bad file still stops the service; a
  // snapshot followed from a URL is waited for instead, unready: a store outage must not stop a fleet.
  // A cluster's worker on Node 22.12+ binds the port itself (port-sharing.ts).
  await app.listen({ port: config.port, host: config.host, ...portSharing(config.port) })
  const ops = app.ops === null ? null : await app.ops.listen()
  if (config.console) {
    const where = ops ?? app.server.address() as AddressInfo
    app.log.info({ url: `http://${urlHost(where.address)}:${where.port}/-/` }, 'console')
  }
  // A worker following a source through its primary loads what the primary tells it to.
  if (app.snapshotSource === null && !(cluster.isWorker && config.snapshotUrl !== null)) await app.snapshots.start()
  app.cluster?.report()
}

/** A worker's graceful close: the first SIGTERM or SIGINT starts it, any other is the same request. */
function closeOnce (app: Awaited<ReturnType<typeof buildApp>>, graceMs: number): void {
  let closing = false
  const close = (signal: NodeJS.Signals) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: no new connections; finishing requests in flight')
    setTimeout(() => {
      app.log.error({ graceMs }, 'in-flight requests outlived the grace period: exiting now')
      process.exit(1)
    }, graceMs).unref()
    app.close().then(() => {
      app.log.info('closed')
      process.exit(0)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'closing failed')
      process.exit(1)
    })
  }
  process.on('SIGTERM', close)
  process.on('SIGINT', close)
}

/** An address as a URL's host: IPv6 in brackets, the wildcard addresses as the loopback a browser can open. */
function urlHost (address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1'
  if (address === '::') return '[::1]'
  return address.includes(':') ? `[${address}]` : address
}

/** Configuration and snapshot errors are the operator's to fix: what is wrong, no stack trace. */
export function reportStartFailure (error: unknown): void {
  if (error instanceof ConfigError) {
    process.stderr.write(`configuration error: ${error.message}\nRun with --help for the options.\n`)
  } else if (error instanceof SnapshotError) {
    process.stderr.write(`${error.message}\n`)
  } else {
    process.stderr.write(`failed to start: ${(error as Error).stack ?? String(error)}\n`)
  }
  process.exit(1)
}
