// Company ids as written on the command line or in a file: ranges, repeats, comments, and the mistakes.
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { formatIdRanges, parseIdRanges, readIdRanges } from '../../src/capture/id-ranges.js'
import { tempDir } from '../helpers.js'
import { CaptureUsageError } from '../../src/errors.js'

t.test('ranges and ids, sorted, each once', async t => {
  t.same(parseIdRanges('1-5,7000'), [1, 2, 3, 4, 5, 7000])
  t.same(parseIdRanges('9, 3-4,3 ,0,4-6'), [0, 3, 4, 5, 6, 9], 'overlaps and repeats counted once')
  t.same(parseIdRanges('5-5'), [5])
  t.equal(parseIdRanges('1-5000').length, 5000)
})

t.test('a file: whitespace, commas and newlines separate; # starts a comment', async t => {
  const file = join(await tempDir(t), 'companies.txt')
  await writeFile(file, '# the big ones\n3 1\r\n10-12, 2 # and two\n\n\t7\n')
  t.same(await readIdRanges(`@${file}`), [1, 2, 3, 7, 10, 11, 12])
  await writeFile(file, '1\n2\nabc\n')
  await t.rejects(readIdRanges(`@${file}`), new CaptureUsageError(`${file}:3: "abc" is not an id or a range of ids (like 1-5000)`), 'the line is named')
  await t.rejects(readIdRanges(`@${join(file, 'missing')}`), { message: /--companies: cannot read .*missing: ENOTDIR/ })
  await writeFile(file, '# nothing but a comment\n')
  await t.rejects(readIdRanges(`@${file}`), new CaptureUsageError(`${file}: no ids`))
})

t.test('mistakes are refused with the token named', async t => {
  t.throws(() => parseIdRanges('5-1'), new CaptureUsageError('--companies: "5-1" is not a range: 5 is above 1'))
  t.throws(() => parseIdRanges('1-3,-4'), new CaptureUsageError('--companies: "-4" is not an id or a range of ids (like 1-5000)'))
  t.throws(() => parseIdRanges('1..3'), /"1\.\.3" is not an id/)
  t.throws(() => parseIdRanges(''), new CaptureUsageError('--companies: no ids'))
  t.throws(() => parseIdRanges('1-50000000'), new CaptureUsageError('--companies: more than 10000000 ids'))
  t.throws(() => parseIdRanges('99999999999999999999'), /ids stop at 9007199254740991/)
})

t.test('ids written back as ranges', async t => {
  t.equal(formatIdRanges([1, 2, 3, 7, 9, 10]), '1-3, 7, 9-10')
  t.equal(formatIdRanges([4]), '4')
  t.equal(formatIdRanges([]), '')
})
