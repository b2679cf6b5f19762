// The command line's subcommands, each module loaded only when asked for (`check` does not load Fastify), and the
// usage that lists them.

interface Command {
  summary: string
  run: (argv: string[]) => Promise<number>
}

/** The operator's commands: each asks a running replica's operator listener (versions-command.ts). */
function opsCommand (name: 'versions' | 'rollback' | 'pin' | 'unpin', summary: string): Command {
  return { summary, run: async argv => await (await import('./versions-command.js')).versionsCommand(name, argv) }
}

export const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'serve the explore API from a snapshot: [serve] [FILE] (the default; --help lists every option)',
    run: async argv => {
      const { serve, reportStartFailure } = await import('../serve.js')
      // reportStartFailure ends the process with exit code 1 itself.
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
  rollback: opsCommand(
    'rollback', 'serve the kept version before the served one, and pin it: rollback --ops-url URL (OPS_TOKEN)'
  ),
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

export const MAIN_USAGE = `Usage: explore-replica [COMMAND] [options]
       explore-replica [FILE] [options]     serve FILE, or without one the sample bundled with the package
       explore-replica --version            print the package's version (also -v)

Commands:
${Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`).join('\n')}

\`explore-replica COMMAND --help\` describes each. In a checkout, once built (npm start or npm run build):
npx explore-replica COMMAND. Anywhere else: npm pack in a checkout, then npm install -g ./explore-replica-*.tgz.
`
