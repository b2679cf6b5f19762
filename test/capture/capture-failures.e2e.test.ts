// The capture command against sources that fail, refuse or are something else, and against bad usage:
// the exit status, a one-line message, and --out as it was (no temporary file left beside it).
import t, { type Test } from 'tap'
import { once } from 'node:events'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { freePort, smallSnapshot, tempDir } from '../helpers.js'
import { frontServer, listeningApp, runCaptureCli, startCapture } from './capture-fixtures.js'

const OLD = 'the previous snapshot, byte for byte\n'

/** A directory holding an existing --out. */
async function existingOut (t: Test, name = 'snapshot.jsonl'): Promise<{ dir: string, out: string }> {
  const dir = await tempDir(t)
  const out = join(dir, name)
  await writeFile(out, OLD)
  return { dir, out }
}

async function untouched (t: Test, dir: string, out: string): Promise<void> {
  t.equal(await readFile(out, 'utf8'), OLD, '--out keeps its bytes')
  t.same(await readdir(dir), [out.slice(dir.length + 1)], 'no temporary file left')
}

function oneLine (t: Test, stderr: string): void {
  t.equal(stderr.trimEnd().split('\n').length, 1, `one line: ${stderr}`)
  t.notMatch(stderr, /\n\s+at /, 'no stack trace')
}

t.test('an unreachable source: exit 1, the URL and the network error named', async t => {
  const { dir, out } = await existingOut(t)
  const port = await freePort()
  const run = await runCaptureCli(['--from', `http://127.0.0.1:${port}`, '--languages', 'en', '--companies', '1', '--out', out, '--retries', '1', '--retry-delay', '0.01'])
  t.equal(run.code, 1)
  t.match(run.stderr, `capture: GET http://127.0.0.1:${port}/en/api/internal/explore/?limit=1000: cannot reach the source: `)
  t.match(run.stderr, /ECONNREFUSED.*\(2 tries; --retries 1\)/)
  oneLine(t, run.stderr)
  await untouched(t, dir, out)
})

t.test('a source that is not an explore API: HTML, or JSON of another shape: exit 1, "not an explore API"', async t => {
  const { dir, out } = await existingOut(t)
  const html = await frontServer(t, null, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html>\n<html><body>Welcome to the news site</body></html>')
    return true
  })
  const other = await frontServer(t, null, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[],"total":0}')
    return true
  })
  const args = ['--languages', 'en', '--companies', '1-3', '--out', out]
  const [fromHtml, fromOther] = await Promise.all([runCaptureCli(['--from', html.url, ...args]), runCaptureCli(['--from', other.url, ...args])])
  t.equal(fromHtml.code, 1)
  t.match(fromHtml.stderr, `capture: not an explore API: GET ${html.url}/en/api/internal/explore/?limit=1000: the answer is not JSON (text/html; charset=utf-8): "<!DOCTYPE html> <html><body>Welcome`)
  oneLine(t, fromHtml.stderr)
  t.equal(fromOther.code, 1)
  t.match(fromOther.stderr, `capture: not an explore API: GET ${other.url}/en/api/internal/explore/?limit=1000: the JSON is not a page of {count, next, previous, results}`)
  oneLine(t, fromOther.stderr)
  t.same([html.seen.length, other.seen.length], [1, 1], 'not retried')
  await untouched(t, dir, out)
})

t.test('a 404 for the path (a language the source lacks): "not an explore API", not retried', async t => {
  const { dir, out } = await existingOut(t)
  const { app } = await listeningApp(t, smallSnapshot())
  const front = await frontServer(t, app)
  const run = await runCaptureCli(['--from', front.url, '--languages', 'en,de', '--companies', '7', '--out', out, '--concurrency', '1'])
  t.equal(run.code, 1)
  t.match(run.stderr, `capture: not an explore API: GET ${front.url}/de/api/internal/explore/?limit=1000: 404 Not Found: "{\\"detail\\":\\"Not found.\\"}"`)
  t.equal(front.seen.filter(target => target.startsWith('/de/')).length, 1)
  await untouched(t, dir, out)
})

t.test('a 429 storm with Retry-After, then success: every retry waits as long as the source asked', async t => {
  const { app } = await listeningApp(t, smallSnapshot())
  // A strict rate limiter: after a 429 it refuses everything until the time its Retry-After named, so a
  // client that retries sooner collects more 429s than there are storms. Storms start at the first request
  // (Retry-After in seconds) and at the sixth (an HTTP date).
  let until = 0
  const refused: string[] = []
  const early: string[] = []
  const front = await frontServer(t, app, (request, response, n) => {
    const now = Date.now()
    // 20 ms of slack: the client starts counting when it has read the answer, the server when it wrote it.
    if (now < until - 20) {
      early.push(request.url!)
      response.writeHead(429, { 'retry-after': String(Math.ceil((until - now) / 1000)) }).end()
      return true
    }
    if (n === 1) {
      until = now + 1000
      refused.push(request.url!)
      response.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' }).end('{"detail":"Request was throttled. Expected available in 1 second."}')
      return true
    }
    if (n === 6) {
      const date = new Date(Math.floor(now / 1000) * 1000 + 2000)
      until = date.getTime()
      refused.push(request.url!)
      response.writeHead(429, { 'retry-after': date.toUTCString() }).end()
      return true
    }
    return false
  })
  const dir = await tempDir(t)
  const out = join(dir, 'snapshot.json')
  const run = await runCaptureCli(['--from', front.url, '--languages', 'en,es', '--companies', '7-9', '--out', out, '--concurrency', '1', '--retry-delay', '0.001'])
  t.equal(run.code, 0, run.stderr)
  t.same(early, [], 'no request came before the time a Retry-After named')
  t.equal(refused.length, 2)
  for (const target of refused) t.equal(front.seen.filter(seen => seen === target).length, 2, `${target}: refused once, asked again`)
  t.match(run.stdout, `  requests: ${front.seen.length}, retries: 2 (429 ×2)\n`, 'the summary counts the retries')
  t.match(run.stdout, '  items: en 25, es 2 (27 in all)')
})

t.test('a 5xx storm past the retries: exit 1, --out untouched', async t => {
  const { dir, out } = await existingOut(t, 'snapshot.json')
  const front = await frontServer(t, null, (_request, response) => {
    response.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Service Unavailable</h1>')
    return true
  })
  const run = await runCaptureCli(['--from', front.url, '--languages', 'en', '--companies', '1-5', '--out', out, '--retries', '2', '--retry-delay', '0.01'])
  t.equal(run.code, 1)
  t.match(run.stderr, `capture: GET ${front.url}/en/api/internal/explore/?limit=1000: 503 Service Unavailable (3 tries; --retries 2)`)
  oneLine(t, run.stderr)
  t.same(front.seen, Array(3).fill('/en/api/internal/explore/?limit=1000'), 'the first try and two retries, nothing after')
  await untouched(t, dir, out)
})

t.test('SIGINT while the source holds a request open: exit 130, --out untouched, no temporary file', async t => {
  const { dir, out } = await existingOut(t)
  const { app } = await listeningApp(t, smallSnapshot())
  let held: () => void
  const holding = new Promise<void>(resolve => { held = resolve })
  const front = await frontServer(t, app, request => {
    if (!request.url!.includes('companies=8')) return false
    held()
    // Never answered: the capture is stopped while it waits.
    return true
  })
  const { child, done } = startCapture(['--from', front.url, '--languages', 'en,es', '--companies', '7-9', '--out', out, '--concurrency', '1'])
  await holding
  child.kill('SIGINT')
  const run = await done
  t.equal(run.code, 130)
  t.match(run.stderr, `capture: interrupted by SIGINT: nothing written, ${out} left as it was\n`)
  oneLine(t, run.stderr)
  await untouched(t, dir, out)
})

t.test('bad usage: exit 2, the problem and where to look', async t => {
  const dir = await tempDir(t)
  const base = ['--from', 'http://127.0.0.1:9', '--languages', 'en', '--companies', '1-5', '--out', join(dir, 'out.jsonl')]
  const without = (name: string): string[] => {
    const args = [...base]
    args.splice(args.indexOf(name), 2)
    return args
  }
  const replacing = (name: string, value: string): string[] => base.map((arg, i) => base[i - 1] === name ? value : arg)
  const cases: Array<[string, string[], string]> = [
    ['missing --from', without('--from'), '--from is required'],
    ['a backwards range', replacing('--companies', '1-3,5-1'), '--companies: "5-1" is not a range: 5 is above 1'],
    ['an unknown extension', replacing('--out', join(dir, 'out.txt')), `--out: "${join(dir, 'out.txt')}": the extension gives the format: use .json (format v1) or .jsonl/.ndjson (JSON Lines)`],
    ['an unknown option', [...base, '--colour'], "Unknown option '--colour'"],
    ['a bad language', replacing('--languages', 'en,EN'), '--languages: "EN" is not a language segment'],
    ['a bad number', [...base, '--concurrency', '0'], '--concurrency: "0" is not a whole number from 1 to 256']
  ]
  const runs = await Promise.all(cases.map(async ([, args]) => await runCaptureCli(args)))
  for (const [i, [name, , message]] of cases.entries()) {
    const run = runs[i]!
    t.equal(run.code, 2, name)
    t.match(run.stderr, `capture: ${message}`, name)
    t.match(run.stderr, '\nRun explore-replica capture --help for the options.\n', name)
  }
  t.same(await readdir(dir), [], 'nothing written')
  const help = await runCaptureCli(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: explore-replica capture --from URL --languages L --companies IDS --out FILE/)
})

t.test('SIGTERM is an interruption too: exit 143', async t => {
  const { dir, out } = await existingOut(t)
  const front = await frontServer(t, null, () => true)
  const { child, done } = startCapture(['--from', front.url, '--languages', 'en', '--companies', '1', '--out', out])
  while (front.seen.length === 0) await once(front.server, 'request')
  child.kill('SIGTERM')
  const run = await done
  t.equal(run.code, 143)
  t.match(run.stderr, 'interrupted by SIGTERM')
  await untouched(t, dir, out)
})
