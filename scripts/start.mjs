// `npm start`: builds only when a source is newer than the build, then serves in this very process, so a
// signal to npm (which passes it on) or to this process stops the server. Plain JavaScript: it runs before
// any build.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const built = join(root, 'dist', 'cli', 'main.js')

/** The newest modification time among `path` and, for a directory, everything in it. */
function newest (path) {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return 0
  if (!stat.isDirectory()) return stat.mtimeMs
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs)
}

const sources = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map(name => join(root, name))
if (Math.max(...sources.map(newest)) >= newest(built)) {
  process.stderr.write('building (a source is newer than dist/)\n')
  // A group of its own, so that a stop while it builds ends the compiler too (npm's `sh -c` passes no signal on).
  const build = spawn('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit', detached: true })
  const stop = signal => {
    try {
      process.kill(-build.pid, signal)
    } catch {
      // ESRCH: the build has just ended.
    }
  }
  process.once('SIGINT', stop).once('SIGTERM', stop)
  const [code, signal] = await once(build, 'exit')
  process.off('SIGINT', stop).off('SIGTERM', stop)
  if (signal !== null) process.kill(process.pid, signal)
  if (code !== 0) process.exit(code ?? 1)
}
await import(built)
