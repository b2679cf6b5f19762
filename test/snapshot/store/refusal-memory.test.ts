// The one refusal rule (ADR 045): what is remembered, where, by which key, and until when.
import t from 'tap'
import { ManifestError, SnapshotError, TooBigError } from '../../../src/errors.js'
import { causeOf, RefusalMemory, remembered } from '../../../src/snapshot/store/refusal-memory.js'

const shortfall = { neededBytes: 2, freeBytes: 1, budgetBytes: 3 }

t.test('each refusal\'s cause: the content, the memory budget, or anything else', async t => {
  t.equal(causeOf(new SnapshotError('SNAPSHOT_ERR_INVALID', 'a.json', ['bad'])), 'content')
  t.equal(causeOf(new ManifestError(['bad'])), 'content')
  t.equal(causeOf(new TooBigError('a.json', 'too big', shortfall)), 'memory')
  t.equal(causeOf(new SnapshotError('SNAPSHOT_ERR_UNREADABLE', 'a.json', ['the file does not exist'])), 'other')
  t.equal(causeOf(new Error('a fault of ours')), 'other')
})

t.test('remembered: the content everywhere, the memory budget for an object only, nothing else', async t => {
  t.same(['content', 'memory', 'other'].map(cause => [remembered(cause as never, 'file'), remembered(cause as never, 'object')]),
    [[true, true], [false, true], [false, false]])
})

t.test('the last refusal is recalled by its key alone, until another is refused or a state is served', async t => {
  const memory = new RefusalMemory<string>('object')
  memory.remember('etag-1', 'memory', 'first')
  t.equal(memory.recall('etag-1'), 'first')
  t.equal(memory.recall('etag-2'), null, 'another key: not recalled')
  t.equal(memory.latest, 'first')
  memory.remember('etag-2', 'other', 'second')
  t.equal(memory.recall('etag-1'), null, 'a refusal not remembered forgets the one before')
  t.equal(memory.latest, null)
  memory.remember(null, 'content', 'third')
  t.equal(memory.latest, null, 'nothing names the bytes: nothing remembered')
  memory.remember('etag-3', 'content', 'third')
  memory.forget()
  t.equal(memory.recall('etag-3'), null, 'a state served: forgotten')
  const files = new RefusalMemory<string>('file')
  files.remember('a.json\n1:2:3:4', 'memory', 'too big')
  t.equal(files.latest, null, 'a file too big is weighed again at its next read')
})
