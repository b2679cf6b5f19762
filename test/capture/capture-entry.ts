// The process the capture tests start: `explore-replica capture ARGS` without the rest of the command line.
import { captureCommand } from '../../src/cli/capture-command.js'

process.exitCode = await captureCommand(process.argv.slice(2))
