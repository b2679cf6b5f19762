// The log's destination over a real named pipe whose reader stops reading: lines are dropped and counted past a
// fixed buffer, and once the reader reads again the lines kept arrive whole, then one line says what was dropped.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { LogDestination } from '../../src/http/log-destination.js'
import { tempDir } from '../helpers.js'

/** A named pipe with its reader open (and reading nothing yet), and a non-blocking read of what is in it. */
async function stalledPipe (t: Parameters<typeof tempDir>[0]) {
  const path = join(await tempDir(t), 'log')
  execFileSync('mkfifo', [path])
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(path, constants.O_WRONLY)
  t.teardown(() => { closeSync(reader) })
  const chunk = Buffer.alloc(1 << 16)
  const readAll = (): string => {
    let text = ''
    for (;;) {
      let n = 0
      try { n = readSync(reader, chunk) } catch { return text } // EAGAIN: nothing more for now
      if (n === 0) return text
      text += chunk.toString('utf8', 0, n)
    }
  }
  return { writer, readAll }
}

const turn = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('a reader that stops: lines past the buffer are dropped and counted, never held', async t => {
  const { writer, readAll } = await stalledPipe(t)
  const limit = 64 * 1024
  const logs = new LogDestination(writer, limit)
  const line = `${JSON.stringify({ msg: 'request', url: '/en/api/internal/explore/?companies=1' })}\n`
  const said: { dropped: number | null } = { dropped: null }
  logs.onResumed = dropped => { said.dropped = dropped }
  // A Linux pipe holds 64 KiB: 20,000 lines (1.3 MB) fill it and the buffer, and more.
  for (let i = 0; i < 20_000; i++) {
    logs.write(line)
    if (i % 500 === 0) await turn()
  }
  await turn()
  t.ok(logs.dropped > 0, `lines dropped (${logs.dropped})`)
  t.ok(logs.dropped < 20_000 - (limit / line.length), 'no more than what the pipe and the buffer could not hold')
  t.equal(said.dropped, null, 'nothing said while the reader still reads nothing')

  // The reader reads again: every line kept arrives whole, in order, then what was dropped is said.
  let text = ''
  while (said.dropped === null) {
    text += readAll()
    await turn()
  }
  text += readAll()
  t.equal(said.dropped, logs.dropped, 'the count dropped, said once the reader caught up')
  const lines = text.split('\n').filter(Boolean)
  t.ok(lines.every(each => `${each}\n` === line), 'no line torn')
  t.equal(lines.length + logs.dropped, 20_000, 'every line written or counted as dropped')
})

t.test('writes from one turn leave as one write, and a healthy reader loses nothing', async t => {
  const { writer, readAll } = await stalledPipe(t)
  const logs = new LogDestination(writer)
  for (let i = 0; i < 100; i++) logs.write(`line ${i}\n`)
  t.equal(readAll(), '', 'nothing written before the turn ends')
  await turn()
  t.equal(readAll(), Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(''))
  t.equal(logs.dropped, 0)
})
