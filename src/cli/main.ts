#!/usr/bin/env node
// `explore-replica`: one command line for the service and its snapshot tools. The first argument names the
// subcommand; without one (or with an option or a snapshot file first) it serves, so `explore-replica
// --port 4000` and `explore-replica snapshot.jsonl` work as `node dist/server.js …` does. Each subcommand
// is loaded only when asked for: `check` does not load Fastify, `serve` does not load the capture client.
import { existsSync } from 'node:fs'
import { UsageError } from '../errors.js'

interface Command {
  summary: string
  run: (argv: string[]) => Promise<number>
}

/** The operator's commands: each asks a running replica's operator listener (versions-command.ts). */
function opsCommand (name: 'versions' | 'rollback' | 'pin' | 'unpin', summary: string): Command {
  return { summary, run: async argv => await (await import('./versions-command.js')).versionsCommand(name, argv) }
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'serve the explore API from a snapshot: [serve] [FILE] (the default; --help lists every option)',
    run: async argv => {
      const { serve, reportStartFailure } = await import('../serve.js')
      // A server's start-up failure ends the process itself (a cluster's primary included).
      await serve(argv).catch(reportStartFailure)
      return 0
    }
  },
  check: {
    summary: 'check snapshots, change files and fleet manifests as the service reads them: check FILE…',
    run: async argv => await (await import('./check-command.js')).checkCommand(argv)
  },
  generate: {
    summary: 'write a seeded sample snapshot (format v1 or JSON Lines)',
    run: async argv => await (await import('./generate-command.js')).generateCommand(argv)
  },
  convert: {
    summary: 'convert a snapshot between format v1 and JSON Lines: convert IN OUT',
    run: async argv => await (await import('./convert-command.js')).convertCommand(argv)
  },
  capture: {
    summary: 'make a snapshot by walking a running original (or another replica)',
    run: async argv => await (await import('./capture-command.js')).captureCommand(argv)
  },
  versions: opsCommand('versions', 'a running replica\'s served, kept and pinned versions: versions --ops-url URL'),
  rollback: opsCommand('rollback', 'serve the kept version before the served one, and pin it: rollback --ops-url URL (OPS_TOKEN)'),
  pin: opsCommand('pin', 'serve a kept version and pin it: pin VERSION --ops-url URL (OPS_TOKEN)'),
  unpin: opsCommand('unpin', 'follow the source again, its newest loaded at once: unpin --ops-url URL (OPS_TOKEN)'),
  diff: {
    summary: 'write the change file that takes one snapshot to another: diff OLD NEW --out CHANGES.jsonl',
    run: async argv => await (await import('./diff-command.js')).diffCommand(argv)
  },
  apply: {
    summary: 'write a snapshot with change files applied: apply SNAPSHOT CHANGES… --out FILE',
    run: async argv => await (await import('./apply-command.js')).applyCommand(argv)
  },
  publish: {
    summary: 'publish a snapshot or a change file to a fleet\'s manifest: publish --to s3://…/ | DIR',
    run: async argv => await (await import('./publish-command.js')).publishCommand(argv)
  }
}

const MAIN_USAGE = `Usage: explore-replica [COMMAND] [options]
       explore-replica [FILE] [options]     serve FILE, or without one the sample bundled with the package
       explore-replica --version            print the package's version (also -v)

Commands:
${Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`).join('\n')}

\`explore-replica COMMAND --help\` describes each. Through npm: npm start (serve), npm run snapshot:check,
npm run generate, npm run snapshot:convert, npm run capture (each followed by -- and its options).
`

/** Runs the command line; resolves with the exit code (a server keeps the process alive on its own). */
async function main (argv: string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(MAIN_USAGE)
    return 0
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`explore-replica ${(await import('../version.js')).VERSION}\n`)
    return 0
  }
  const command = first !== undefined && Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined
  if (first === undefined || first.startsWith('-') || (command === undefined && namesFile(first))) return await COMMANDS.serve!.run(argv)
  if (command === undefined) {
    process.stderr.write(`explore-replica: unknown command "${first}"\n\n${MAIN_USAGE}`)
    return 2
  }
  try {
    return await command.run(rest)
  } catch (error) {
    // Bad options (parseArgs' own errors, and ours) are the user's to fix: the message and where to look,
    // no stack trace. Anything else is a failure of the command: its message, exit 1.
    const usage = error instanceof UsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')
    process.stderr.write(`explore-replica ${first}: ${(error as Error).message}\n${usage ? `Run explore-replica ${first} --help for the options.\n` : ''}`)
    return usage ? 2 : 1
  }
}

/**
 * Whether a first argument that is no command is the snapshot to serve: a file that exists, or one that
 * reads as a path (the loader then says why it cannot be read). A mistyped command (`serv`) is neither.
 */
function namesFile (arg: string): boolean {
  return /[\\/]/.test(arg) || /\.(json|jsonl|ndjson)$/i.test(arg) || existsSync(arg)
}

main(process.argv.slice(2)).then(code => { if (code !== 0) process.exitCode = code }, (error: unknown) => {
  process.stderr.write(`explore-replica: ${(error as Error).message}\n`)
  process.exitCode = 1
})
