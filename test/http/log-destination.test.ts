// The log's destination over a real named pipe whose reader stops reading: lines are dropped and counted past a
// fixed buffer, and once the reader reads again the lines kept arrive whole, then one line says what was dropped.
import t from 'tap'
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { execFileSync } from 'node:child_process'
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { LogDestination } from '../../src/http/log-destination.js'
import { tempDir } from '../helpers.js'

/** A named pipe with its reader open (and reading nothing yet), and a non-blocking read of what is in it. */
async function stalledPipe (t: Parameters<typeof tempDir>[0]) {
  const path = join(await tempDir(t), 'log')
  execFileSync('mkfifo', [path])
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(path, constants.O_WRONLY)
  t.teardown(() => {
    closeSync(reader)
    // A destination closed by the test closed it already (libuv closes what it opened a stream on, but 0 to 2).
    try { closeSync(writer) } catch {}
  })
  /** One more descriptor on the same pipe: a destination closing its own (fd > 2) closes no other's. */
  const anotherWriter = (): number => {
    const fd = openSync(path, constants.O_WRONLY)
    t.teardown(() => { try { closeSync(fd) } catch {} })
    return fd
  }
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
  return { writer, readAll, anotherWriter }
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
  for (let turns = 0; said.dropped === null && turns < 100_000; turns++) {
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
  logs.close()
})

t.test('a regular file takes a turn\'s lines in writes of up to 64 KiB, not a pipe\'s 4 KiB: a busy service\'s lines all reach it', async t => {
  const path = join(await tempDir(t), 'log')
  const fd = openSync(path, 'w')
  t.teardown(() => { closeSync(fd) })
  const logs = new LogDestination(fd)
  const line = (i: number): string => `${JSON.stringify({ msg: 'request', i, url: '/en/api/internal/explore/?companies=1' })}\n`
  const all = Array.from({ length: 2000 }, (_, i) => line(i)).join('')
  for (let i = 0; i < 2000; i++) logs.write(line(i))
  // Each write is a round trip to the thread pool: the file's first growth is the first write, seen within a turn.
  let first = 0
  for (let size = 0; size < all.length; size = fstatSync(fd).size) {
    if (first === 0) first = size
    await turn()
  }
  t.ok(first > 32 * 1024, `the first write ${first} bytes`)
  t.equal(readFileSync(path, 'utf8'), all, 'every line, whole and in order')
  t.equal(logs.dropped, 0)
  logs.close()
})

t.test('closing onto a full pipe: every line kept is counted as dropped, the piece it tried included', async t => {
  const { writer, readAll } = await stalledPipe(t)
  const logs = new LogDestination(writer)
  // The destination made the pipe non-blocking: fill it until it takes no more.
  const filler = Buffer.alloc(4096, 'x')
  for (;;) {
    try { writeSync(writer, filler) } catch { break }
  }
  for (let i = 0; i < 100; i++) logs.write(`{"line":${i}}\n`)
  logs.close()
  t.equal(logs.dropped, 100)
  t.notMatch(readAll(), /line/, 'none of them written')
})

t.test('two threads\' loggers on one pipe never tear each other\'s lines', async t => {
  const { readAll, anotherWriter } = await stalledPipe(t)
  // A descriptor each, as the serving threads' stdout is never closed under the other: on one shared fd the first
  // close closed it, and the second thread's last writes went to whatever file reused its number (a CI run).
  const threads = ['a', 'b'].map(who =>
    new Worker(new URL('../fixtures/log-writer-thread.ts', import.meta.url), { workerData: { fd: anotherWriter(), count: 4000, who } }))
  t.teardown(async () => { await Promise.all(threads.map(async thread => await thread.terminate())) })
  // The reader reads while both write: the pipe fills and drains under them.
  let text = ''
  const reading = setInterval(() => { text += readAll() }, 1)
  await Promise.all(threads.map(async thread => await once(thread, 'message')))
  // Each closes: what it kept is written or counted as dropped.
  const dropped = await Promise.all(threads.map(async thread => {
    const answer = once(thread, 'message')
    thread.postMessage('close')
    return (await answer)[0] as number
  }))
  clearInterval(reading)
  text += readAll()
  const lines = text.split('\n').filter(Boolean)
  t.ok(lines.every(line => { try { JSON.parse(line); return true } catch { return false } }), `every one of ${lines.length} lines whole`)
  t.equal(lines.length + (dropped[0] as number) + (dropped[1] as number), 8000, `every line written or counted as dropped (${lines.length} + ${String(dropped)})`)
})

t.test('closed: what is pending is written as far as the reader takes it, and nothing after', async t => {
  const { writer, readAll } = await stalledPipe(t)
  const logs = new LogDestination(writer)
  logs.write('before\n')
  logs.close()
  logs.write('after\n')
  await turn()
  t.equal(readAll(), 'before\n')
  t.equal(logs.dropped, 0, 'a line after the close is not counted: it had nowhere to go')
})
