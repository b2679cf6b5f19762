// How both followers download (src/sources/download-object.ts): a body that does not say its length is stopped
// as it streams, at SNAPSHOT_MAX_MB or at what is left of a manifest's budget, never read far past it; a large one's
// digest is taken on a thread of its own.
import t from 'tap'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { DownloadBudget, downloadObject } from '../../src/sources/download-object.js'
import { tempDir } from '../helpers.js'

const CHUNK = 64 * 1024

/** An endless body, counting what was read of it. */
function endless (): { body: AsyncIterable<Uint8Array>, read: () => number } {
  let read = 0
  return {
    body: (async function * () {
      for (;;) {
        read += CHUNK
        yield Buffer.alloc(CHUNK, 0x20)
      }
    })(),
    read: () => read
  }
}

t.test('a manifest\'s budget: each object up to SNAPSHOT_MAX_MB, together up to twice that', async t => {
  const budget = new DownloadBudget(1000)
  t.same(budget.next(), { maxBytes: 1000, rule: 'SNAPSHOT_MAX_MB', detail: '1000 bytes' })
  budget.spend(900)
  t.same(budget.next(), { maxBytes: 1000, rule: 'SNAPSHOT_MAX_MB', detail: '1000 bytes' })
  budget.spend(700)
  t.same(budget.next(), { maxBytes: 400, rule: 'the manifest\'s download budget', detail: '400 of 2000 bytes left: its new objects together, twice SNAPSHOT_MAX_MB at most' })
})

t.test('a body without a length is stopped as it streams, at the object\'s cap and at what is left of the budget', async t => {
  const dir = await tempDir(t)
  const budget = new DownloadBudget(1024 * 1024)
  const first = endless()
  await t.rejects(downloadObject(first.body, join(dir, 'a'), { limit: budget.next(), length: null, signal: AbortSignal.timeout(30_000) }),
    { message: 'the object is more than SNAPSHOT_MAX_MB allows (1048576 bytes): download stopped' })
  t.ok(first.read() <= 1024 * 1024 + 4 * CHUNK, `read ${first.read()} bytes of it`)
  budget.spend(1.5 * 1024 * 1024)
  const second = endless()
  await t.rejects(downloadObject(second.body, join(dir, 'b'), { limit: budget.next(), length: null, signal: AbortSignal.timeout(30_000) }),
    { message: 'the object is more than the manifest\'s download budget allows (524288 of 2097152 bytes left: its new objects together, twice SNAPSHOT_MAX_MB at most): download stopped' })
  t.ok(second.read() <= 512 * 1024 + 4 * CHUNK, `read ${second.read()} bytes of it`)
})

t.test('a large download\'s digest, taken on a thread of its own behind the bytes written, is the digest of its bytes', async t => {
  const dir = await tempDir(t)
  // Pieces of unequal sizes and contents, past a few of the thread's reads.
  const pieces = Array.from({ length: 40 }, (_, n) => Buffer.alloc(300_000 + n * 977, n))
  const whole = Buffer.concat(pieces)
  const body = async function * () { yield * pieces }
  const options = { limit: new DownloadBudget(whole.length).next(), length: whole.length, signal: AbortSignal.timeout(30_000), digestBehindFrom: 0 }
  const sha256 = await downloadObject(body(), join(dir, 'a'), { ...options, digest: 'sha256' })
  t.same(sha256, { bytes: whole.length, digest: createHash('sha256').update(whole).digest('hex') })
  const version = await downloadObject(body(), join(dir, 'b'), { ...options, digest: 'version', lowPriority: true })
  t.same(version, { bytes: whole.length, digest: createHash('sha1').update(whole).digest('base64url') }, 'a snapshot\'s version, at a lower priority')
  const cut = async function * () { yield * pieces.slice(0, 3) }
  await t.rejects(downloadObject(cut(), join(dir, 'c'), { ...options, digest: 'sha256' }), { message: /^the download was cut short/ }, 'cut short: refused, its thread stopped')
})
