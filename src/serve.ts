// Serving: config → buildApp → listen (ADR 029) → the first snapshot; SIGTERM/SIGINT close, SIGHUP reloads.
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { type Config, helpText, loadConfig } from './config.js'
import { ConfigError, ServiceError, SnapshotError, StartError } from './errors.js'
import { settledWithin } from './settled-within.js'
import { publicOpsPages } from './plugins/ops-pages-access.js'
import { collectWhenIdle } from './serving/collect-when-idle.js'
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

  // A second signal or the grace period running out exits 1 at once.
  const grace = closeWithGrace({
    delay: config.shutdownGraceMs,
    // SIGHUP means "reload" here, not "stop".
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

  // From a URL, a new check: one under way may have asked before the publish the signal follows.
  const reload = (): void => { app.snapshotSource.reloadAsked().catch(() => {}) }
  process.on('SIGHUP', reload)
  try {
    await start(app, config)
    // This thread answers, or loads for the serving threads that do; the first load was work (ADR 036): without
    // requests, nothing else may make a busy second, and a load's garbage stayed (230 MB at 1M, WORKERS=2).
    collectWhenIdle({ worked: true })
  } catch (error) {
    // A failed start exits 1 whatever comes meanwhile: no reload, and a signal's graceful exit would say 0.
    grace.uninstall()
    process.off('SIGHUP', reload)
    const exitNow = (): void => { process.exit(1) }
    process.once('SIGTERM', exitNow).once('SIGINT', exitNow)
    // Whatever it made of its state goes at exit, even if a load ends during the close.
    app.abandonState()
    try {
      if (!await settledWithin(app.close(), CLOSE_ON_FAILURE_MS)) {
        app.log.warn({ ms: CLOSE_ON_FAILURE_MS }, 'a failed start did not close in time: exiting anyway')
      }
    } catch (closeError) {
      app.log.warn({ err: closeError }, 'a failed start did not close cleanly')
    }
    throw error
  }
}

/** A failed start's close: a close that hangs must not keep a failed process alive. */
const CLOSE_ON_FAILURE_MS = 2_000

/** Listening, then the first snapshot: what can refuse a start once the app is built. */
async function start (app: FastifyInstance, config: Config): Promise<void> {
  // Listening before the first load; a URL's is waited for, unready: a store outage must not stop a fleet.
  // The log says it waits: a start whose first file is refused never said it served.
  const waiting = (): string => app.snapshots.current() === null ? ', waiting for the first snapshot' : ''
  let where: AddressInfo
  const pool = app.servingPool
  if (pool === null) {
    await listening('PORT', config.port, config.host, async () => {
      await app.listen({ port: config.port, host: config.host, listenTextResolver: at => `Server listening at ${at}${waiting()}` })
    })
    where = app.server.address() as AddressInfo
  } else {
    await app.ready()
    const port = await listening('PORT', config.port, config.host, async () => await pool.start())
    where = { address: config.host, port, family: config.host.includes(':') ? 'IPv6' : 'IPv4' }
    app.log.info({ threads: pool.size, port }, `serving threads listening${waiting()}`)
  }
  const opsListener = app.ops
  const ops = opsListener === null
    ? null
    : await listening('OPS_PORT', config.opsPort ?? 0, config.opsHost, async () => await opsListener.listen())
  // A file's first snapshot before the console's address: a refused one ends the start here, exit 1.
  if (!app.snapshotSource.remote) await app.snapshots.start()
  if (publicOpsPages(config) === 'probes') {
    app.log.info(
      { host: config.host },
      'the operator\'s pages are not served: HOST is not a loopback address and OPS_PORT is unset, so PORT serves the API and the probes alone (set OPS_PORT, or EXPOSE_OPS_PAGES=true)'
    )
  } else if (config.console) {
    const at = ops ?? where
    app.log.info({ url: `http://${urlHost(at.address)}:${at.port}/-/` }, 'console')
  }
}

/** A port or host it cannot have is a StartError naming `variable` and what to do. */
async function listening<T> (variable: string, port: number, host: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen()
  } catch (error) {
    const at = `${host.includes(':') ? `[${host}]` : host}:${port}`
    switch ((error as NodeJS.ErrnoException).code) {
      case 'EADDRINUSE':
        throw new StartError(`${variable}=${port}: ${at} is in use by another process: stop it, or set ${variable} to a free port (0: any)`)
      case 'EACCES':
        throw new StartError(`${variable}=${port}: this user may not listen on ${at} (ports below 1024 need privileges): set ${variable} to 1024 or above`)
      case 'EADDRNOTAVAIL':
        throw new StartError(`${variable === 'PORT' ? 'HOST' : 'OPS_HOST'}=${host}: no address of this machine: set it to one of its addresses (0.0.0.0: all)`)
      // A name that does not resolve (for now, EAI_AGAIN): not the stack trace of a DNS lookup.
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        throw new StartError(`${variable === 'PORT' ? 'HOST' : 'OPS_HOST'}=${host}: no address this name resolves to: set it to one of this machine's addresses (0.0.0.0: all)`)
      default:
        throw error
    }
  }
}

/** Wildcard addresses as the loopback a browser can open. */
function urlHost (address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1'
  if (address === '::') return '[::1]'
  return address.includes(':') ? `[${address}]` : address
}

/** The operator's to fix: what is wrong, no stack trace. */
export function reportStartFailure (error: unknown): void {
  if (error instanceof ConfigError) {
    process.stderr.write(`configuration error: ${error.message}\nRun with --help for the options.\n`)
  } else if (error instanceof SnapshotError) {
    process.stderr.write(`${error.message}\n`)
  } else if (error instanceof StartError) {
    process.stderr.write(`cannot start: ${error.message}\n`)
  } else if (error instanceof ServiceError) {
    process.stderr.write(`failed to start: ${error.message}\n`)
  } else {
    process.stderr.write(`failed to start: ${(error as Error).stack ?? String(error)}\n`)
  }
  // The exit waits for the loop to idle a moment: a V8 compile job still running when process.exit disposes of
  // the platform can deadlock it, and the process never ends (nodejs/node#54918; seen on Node 24).
  setTimeout(() => process.exit(1), EXIT_AFTER_FAILURE_MS)
}

const EXIT_AFTER_FAILURE_MS = 100
