#!/usr/bin/env node
// `explore-replica`: the service and its snapshot tools on one command line (subcommands in commands.ts).
// With no command first (an option or a snapshot file instead) it serves, as `node dist/server.js …` does.
import { existsSync } from 'node:fs'
import { UsageError } from '../errors.js'
import { COMMANDS, MAIN_USAGE } from './commands.js'

/** Resolves with the exit code (a server keeps the process alive on its own). */
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
  if (first === undefined || first.startsWith('-') || (command === undefined && namesFile(first))) {
    return await COMMANDS.serve!.run(argv)
  }
  if (command === undefined) {
    process.stderr.write(`explore-replica: unknown command "${first}"\n\n${MAIN_USAGE}`)
    return 2
  }
  try {
    return await command.run(rest)
  } catch (error) {
    // Bad options (ours and parseArgs') are the user's to fix: a pointer to --help and exit 2, never a stack trace.
    const usage = error instanceof UsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')
    process.stderr.write(
      `explore-replica ${first}: ${(error as Error).message}\n${usage ? `Run explore-replica ${first} --help for the options.\n` : ''}`
    )
    return usage ? 2 : 1
  }
}

/** A file that exists, or reads as a path (the loader says what is wrong with it); a mistyped command is neither. */
function namesFile (arg: string): boolean {
  return /[\\/]/.test(arg) || /\.(json|jsonl|ndjson)$/i.test(arg) || existsSync(arg)
}

main(process.argv.slice(2)).then(code => { if (code !== 0) process.exitCode = code }, (error: unknown) => {
  process.stderr.write(`explore-replica: ${(error as Error).message}\n`)
  process.exitCode = 1
})
