// Entry point: configuration → buildApp → listen; closes cleanly on SIGINT/SIGTERM. Run it with
// `node dist/server.js` in production (npm may not forward signals).
import { buildApp } from './app.js'
import { helpText, loadConfig } from './config.js'
import { ConfigError, SnapshotError } from './errors.js'

async function main (): Promise<void> {
  const argv = process.argv.slice(2)
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText())
    return
  }
  const config = loadConfig({ env: process.env, argv })
  const app = await buildApp(config)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'shutting down')
      app.close().then(() => process.exit(0), () => process.exit(1))
    })
  }
  // The Unix convention for daemons: SIGHUP re-reads the snapshot, whether or not the file is watched.
  process.on('SIGHUP', () => {
    app.log.info('SIGHUP: reloading the snapshot')
    app.snapshots.reload().catch(() => {})
  })
  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: unknown) => {
  // Configuration and snapshot errors are the operator's to fix: say what is wrong, no stack trace.
  if (error instanceof ConfigError) {
    process.stderr.write(`configuration error: ${error.message}\nRun with --help for the options.\n`)
  } else if (error instanceof SnapshotError) {
    process.stderr.write(`${error.message}\n`)
  } else {
    process.stderr.write(`failed to start: ${(error as Error).stack ?? String(error)}\n`)
  }
  process.exit(1)
})
