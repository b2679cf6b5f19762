// Issue 45's page goal at size: every page the bench's workloads ask for (hot and cold, warm-up included) is the
// same from a start that reads the version image as from one that parses, status, headers and bytes, for the
// loaded version and for the version a change file derives. Three starts of the built service on the bench's
// snapshot: one that parses and writes the image, stopped; then, side by side, one reading that image and one
// parsing with an empty STATE_DIR. `npx tsx bench/experiments/image-pages-equal.ts [TOTAL]` (default 1000000).
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { get, type IncomingMessage } from 'node:http'
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeChangeFile } from '../change-file.js'
import { freePort } from '../processes.js'
import { ensureSnapshot } from '../snapshots.js'
import { coldWorkload, hotWorkload } from '../workloads.js'

const ROOT = join(import.meta.dirname, '..', '..')
const total = Number(process.argv[2] ?? 1_000_000)
await mkdir(join(ROOT, 'bench', '.data'), { recursive: true })
// JSON Lines at every size: the bench's change file is made from a JSON Lines snapshot's first lines.
const info = await ensureSnapshot(ROOT, join(ROOT, 'bench', '.data'), total, 1, 'jsonl')
const hot = hotWorkload(info.items, info.companies, 2000, 1)
const cold = coldWorkload(info.companies, 100_000, 20_000, 1)
const paths = [...new Set([...hot.warmup, ...hot.measured, ...cold.warmup, ...cold.measured])]
const work = await mkdtemp(join(tmpdir(), 'image-pages-'))
const changes = join(work, 'changes')
await mkdir(changes)

interface Service { child: ChildProcess, port: number, status: () => Promise<any> }

const running: Service[] = []

async function start (name: string): Promise<Service> {
  const port = await freePort()
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'server.js'), info.file, '--port', String(port),
    '--log-level', 'warn', '--watch', 'false', '--changes-dir', changes], {
    env: { ...process.env, STATE_DIR: join(work, name) }, stdio: ['ignore', 'inherit', 'inherit']
  })
  const status = async (): Promise<any> => await (await fetch(`http://127.0.0.1:${port}/-/status`)).json()
  running.push({ child, port, status })
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${port}/-/readyz`).then(res => res.ok, () => false)
    if (ready) return { child, port, status }
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

async function stop (service: Service): Promise<void> {
  service.child.kill('SIGTERM')
  if (service.child.exitCode === null) await once(service.child, 'exit')
}

async function until (what: string, check: () => Promise<boolean>): Promise<void> {
  while (!await check()) await new Promise(resolve => setTimeout(resolve, 250))
  console.log(what)
}

/** Status, headers but the date, and body, asked with one Host for both: the links (and ETags) name it. */
async function answer (port: number, path: string): Promise<string> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    get({ port, host: '127.0.0.1', path, headers: { host: 'replica.test' } }, resolve).on('error', reject)
  })
  const chunks: Buffer[] = []
  for await (const chunk of res) chunks.push(chunk as Buffer)
  const headers = Object.entries(res.headers).filter(([name]) => name !== 'date' && name !== 'x-request-id')
  return JSON.stringify([res.statusCode, headers, Buffer.concat(chunks).toString('base64')])
}

/** Every path from both, 8 at a time: the first difference of each kind, and how many differ. */
async function compare (label: string, a: Service, b: Service): Promise<number> {
  let differ = 0
  let next = 0
  const one = async (): Promise<void> => {
    for (let at = next++; at < paths.length; at = next++) {
      const path = paths[at] as string
      const [x, y] = await Promise.all([a, b].map(async s => await answer(s.port, path)))
      if (x !== y && differ++ === 0) console.log(`${label}: first difference at ${path}`)
    }
  }
  await Promise.all(Array.from({ length: 8 }, one))
  console.log(`${label}: ${paths.length} paths, ${differ} differ`)
  return differ
}

let differ = 0
try {
  const writer = await start('image')
  await until('the image written', async () => (await writer.status()).reloads.images.written > 0)
  await stop(writer)
  const [fromImage, parsed] = await Promise.all([start('image'), start('parse')])
  console.log(`read from the image in ${String((await fromImage.status()).snapshot.imageMs)} ms; parsed: ${String((await parsed.status()).snapshot.imageMs)}`)
  differ += await compare('loaded', fromImage, parsed)
  // A change file of the bench's (1,000 upserts, 100 deletes), applied by both on SIGHUP.
  await writeChangeFile(info.file, join(work, '.change.jsonl'))
  await rename(join(work, '.change.jsonl'), join(changes, '0001-bench.jsonl'))
  for (const s of [fromImage, parsed]) s.child.kill('SIGHUP')
  for (const s of [fromImage, parsed]) await until('the change file applied', async () => (await s.status()).reloads.changeFiles.applied === 1)
  differ += await compare('derived by a change file', fromImage, parsed)
} finally {
  await Promise.all(running.map(stop))
  await rm(work, { recursive: true, force: true })
}
process.exitCode = differ === 0 ? 0 : 1
