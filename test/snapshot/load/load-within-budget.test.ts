// The load pipeline with a memory guard: a file that does not fit is refused before anything
// is read, and a load that reaches the budget is abandoned cleanly: reading stops, the batches in flight on
// the pool's threads settle before the load rejects, what it rendered is retired, and the threads go.
import t from 'tap'
import { SnapshotLoader } from '../../../src/snapshot/load/load-snapshot.js'
import { ParsePool, type BatchParser } from '../../../src/snapshot/load/parse-pool.js'
import { SnapshotModelBuilder } from '../../../src/snapshot/model/build-model.js'
import { ProcessMemoryGuard, watchLoad, type MemoryGuard, type ParsedFormat } from '../../../src/snapshot/memory-budget.js'
import { TooBigError } from '../../../src/errors.js'
import { makeItem, poolForAnySize, toJsonLines, writeSnapshot } from '../../helpers.js'

const MiB = 1024 * 1024

/** 3,000 items: many small batches. */
function manyItems (): string {
  const en = Array.from({ length: 3000 }, (_, i) => makeItem(i + 1, '2024-01-01', [i % 7], { translated_abstract: 'x'.repeat(200) }))
  return toJsonLines({ languages: { en } })
}

/** A guard whose process "uses" more memory at each check: the budget is reached at check `at`. */
function risingGuard (at: number): MemoryGuard & { checks: number, admitted: Array<{ bytes: number, format: ParsedFormat | 'image' }> } {
  const budget = { bytes: 1000 * MiB, source: 'MEMORY_LIMIT_MB' as const }
  const guard = {
    budget,
    checks: 0,
    admitted: [] as Array<{ bytes: number, format: ParsedFormat | 'image' }>,
    async admit (file: string, bytes: number, format: ParsedFormat | 'image') {
      guard.admitted.push({ bytes, format })
      return watchLoad(file, 10 * MiB, budget.bytes, () => (++guard.checks >= at ? 1000 : 500) * MiB)
    }
  }
  return guard
}

t.test('a file that would not fit is refused before it is read, with its numbers', async t => {
  const file = await writeSnapshot(t, manyItems(), 'big.jsonl')
  const guard = new ProcessMemoryGuard({ bytes: 100 * MiB, source: 'MEMORY_LIMIT_MB' }, { rss: () => 95 * MiB })
  const error = await new SnapshotLoader({ memory: guard }).load(file).then(() => null, (error: unknown) => error)
  t.ok(error instanceof TooBigError, 'a TooBigError, which the store reports as a refusal')
  t.match((error as TooBigError).problems, [/^needs ~\d+ MB at its peak; 5 MB of the 100 MB budget are free$/])
})

t.test('the guard is asked with the file\'s size and format', async t => {
  const file = await writeSnapshot(t, manyItems(), 'ok.jsonl')
  const guard = risingGuard(Infinity)
  const model = await new SnapshotLoader({ memory: guard, batchBytes: 64 * 1024 }).load(file)
  t.equal(model.itemCounts().en, 3000)
  t.match(guard.admitted, [{ format: 'jsonl', bytes: Buffer.byteLength(manyItems()) }])
  t.ok(guard.checks > 5, `checked after every batch (${guard.checks} checks)`)
})

t.test('a load that reaches the budget is abandoned: no batch left in flight, what it built retired', async t => {
  const file = await writeSnapshot(t, manyItems(), 'grows.jsonl')
  const pool = new ParsePool({ threads: 2 })
  t.teardown(() => pool.close())
  // The pool's parsers, counting the batches still being parsed.
  let inFlight = 0
  let mostInFlight = 0
  const counting = Object.assign(Object.create(poolForAnySize(pool)) as ParsePool, {
    parserFor: async (bytes: number, serving: boolean): Promise<BatchParser> => {
      const parser = await poolForAnySize(pool).parserFor(bytes, serving)
      return Object.assign(Object.create(parser) as BatchParser, {
        parse: async (task: Parameters<BatchParser['parse']>[0]) => {
          inFlight++
          mostInFlight = Math.max(mostInFlight, inFlight)
          try {
            return await parser.parse(task)
          } finally {
            inFlight--
          }
        },
        done: () => parser.done()
      })
    }
  })
  let discarded = 0
  const discard = SnapshotModelBuilder.prototype.discard
  SnapshotModelBuilder.prototype.discard = function (this: SnapshotModelBuilder) {
    discarded++
    discard.call(this)
  }
  t.teardown(() => { SnapshotModelBuilder.prototype.discard = discard })

  const guard = risingGuard(4)
  const error = await new SnapshotLoader({ memory: guard, pool: counting, batchBytes: 16 * 1024 }).load(file).then(() => null, (error: unknown) => error)
  t.ok(error instanceof TooBigError)
  t.match((error as TooBigError).problems, [/^reached the 1,000 MB budget while loading \(1,000 MB in use; estimated to need ~10 MB at its peak\): the load was abandoned$/])
  t.ok(mostInFlight > 1, `batches were in flight on the threads (${mostInFlight} at most)`)
  t.equal(inFlight, 0, 'every batch in flight settled before the load rejected')
  t.equal(guard.checks, 4, 'reading stopped at the check that reached the budget')
  t.equal(discarded, 1, 'what the load rendered is retired')
  t.equal(pool.status().threads, 0, 'the threads went at once, their heaps with them')

  const model = await new SnapshotLoader({ memory: risingGuard(Infinity), pool: counting, batchBytes: 16 * 1024 }).load(file)
  t.equal(model.itemCounts().en, 3000, 'the pool loads the next file as before')
  t.equal(pool.status().threads, 2, 'on threads started again, which stay for the next file')
})
