// Serving: config → buildApp → listen (this thread or the serving threads, ADR 029) → the first snapshot;
// graceful shutdown on SIGTERM/SIGINT, SIGHUP reloads. Run by server.ts and `explore-replica serve` (src/cli).
import type { AddressInfo } from 'node:net'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { helpText, loadConfig } from './config.js'
import { ConfigError, SnapshotError } from './errors.js'
import { servingThreads } from './serving/serving-mode.js'
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
  const config = loadConfig({ env: process.env, argv, tty: process.stdout.isTTY === true })
  const app = await buildApp(config, { servingThreads: servingThreads(config.workers) })

  // SIGTERM/SIGINT: finish in-flight requests (the serving threads' first), then exit 0; a second signal or the
  // grace period running out exits 1 at once.
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

  // SIGHUP reloads, as daemons do, watched or not; from a URL it begins a new check (one under way may have asked
  // before the publish the signal follows).
  process.on('SIGHUP', () => {
    // A pinned file stays served; a source is still checked (a newer object is noticed, not loaded).
    if (app.snapshotSource === null && app.snapshotVersions?.holdBack('signal', app.log) === true) return
    app.log.info('SIGHUP: reloading the snapshot')
    const reloading = app.snapshotSource?.checkAgain() ?? app.snapshots.reload()
    reloading.catch(() => {})
  })
  // Listening before the first load, which takes what a large file takes (/-/readyz says so). A bad file stops the
  // service; a URL's snapshot is waited for, unready: a store outage must not stop a fleet.
  let where: AddressInfo
  const pool = app.servingPool
  if (pool === null) {
    await app.listen({ port: config.port, host: config.host })
    where = app.server.address() as AddressInfo
  } else {
    await app.ready()
    const port = await pool.start()
    where = { address: config.host, port, family: config.host.includes(':') ? 'IPv6' : 'IPv4' }
    app.log.info({ threads: pool.size, port }, 'serving threads listening')
  }
  const ops = app.ops === null ? null : await app.ops.listen()
  if (config.console) {
    const at = ops ?? where
    app.log.info({ url: `http://${urlHost(at.address)}:${at.port}/-/` }, 'console')
  }
  if (app.snapshotSource === null) await app.snapshots.loaded()
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
