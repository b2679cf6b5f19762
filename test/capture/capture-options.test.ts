// The capture's command line (src/capture/capture-options.ts) and the company ids it reads (src/capture/id-ranges.ts).
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readCaptureOptions } from '../../src/capture/capture-options.js'
import { formatIdRanges, parseIdRanges, readIdRanges } from '../../src/capture/id-ranges.js'
import { CaptureUsageError } from '../../src/errors.js'
import { tempDir } from '../helpers.js'

// src/capture/id-ranges.ts: company ids as written on the command line or in a file: ranges, repeats, comments, mistakes.
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

// src/capture/capture-options.ts: defaults, normalised values, and each refusal naming its option and rule.
const REQUIRED = ['--from', 'https://news.example.com/', '--languages', 'en, es,pt-br,en', '--companies', '3,1-2', '--out', 'snap.NDJSON']

t.test('defaults, and values as the capture uses them', async t => {
  t.same(await readCaptureOptions(REQUIRED), {
    from: 'https://news.example.com',
    languages: ['en', 'es', 'pt-br'],
    companies: [1, 2, 3],
    out: 'snap.NDJSON',
    format: 'jsonl',
    concurrency: 4,
    rps: 10,
    maxBodyBytes: 32 * 1024 * 1024,
    retries: 5,
    retryDelayMs: 500,
    timeoutMs: 30_000,
    pageSize: null,
    generatedAt: null
  })
  const set = await readCaptureOptions([...REQUIRED, '--from', 'http://10.0.0.1:8000/news//', '--out', 'a.json', '--concurrency', '8', '--rps', '2.5', '--retries', '0',
    '--retry-delay', '0', '--timeout', '1.5', '--page-size', '250', '--generated-at', '2026-11-20T09:30:00+01:00', '--max-body-mb', '2'])
  t.match(set, { from: 'http://10.0.0.1:8000/news', format: 'json', concurrency: 8, rps: 2.5, maxBodyBytes: 2 * 1024 * 1024, retries: 0, retryDelayMs: 0, timeoutMs: 1500, pageSize: 250, generatedAt: '2026-11-20T09:30:00+01:00' })
  t.equal(await readCaptureOptions(['--help']), 'help')
  t.match(await readCaptureOptions([...REQUIRED, '--rps', '0']), { rps: null }, '--rps 0 lifts the default rate')
})

t.test('refusals name the option and the rule', async t => {
  const refused = async (args: string[], message: string): Promise<void> => {
    await t.rejects(readCaptureOptions([...REQUIRED, ...args]), new CaptureUsageError(message), message)
  }
  await refused(['--from', 'news.example.com'], '--from: "news.example.com" is not a URL (like https://news.example.com)')
  await refused(['--from', 'ftp://news.example.com'], '--from: "ftp://news.example.com" is not an http or https URL')
  await refused(['--from', 'https://news.example.com/?x=1'], '--from: "https://news.example.com/?…": the base URL takes no query or fragment')
  await refused(['--from', 'https://reader:S3cret@news.example.com/?token=S3cret'], '--from: "https://news.example.com/?…": the base URL takes no query or fragment')
  await refused(['--languages', ' , '], '--languages: no language (like en,es,fr)')
  await refused(['--rps', 'none'], '--rps: "none" is not a number of seconds or requests (like 2 or 0.5)')
  await refused(['--max-body-mb', '0'], '--max-body-mb: "0" is not a whole number from 1 to 4096')
  await refused(['--timeout=-1'], '--timeout: "-1" is not a number of seconds or requests (like 2 or 0.5)')
  await refused(['--timeout', '-1'], 'Option \'--timeout\' argument is ambiguous. Did you forget to specify the option argument for \'--timeout\'? To specify an option argument starting with a dash use \'--timeout=-XYZ\'.')
  await refused(['--retries', '1.5'], '--retries: "1.5" is not a whole number from 0 to 100')
  await refused(['--generated-at', '2026-02-30T00:00:00Z'], '--generated-at: "2026-02-30T00:00:00Z" is not an ISO-8601 timestamp (like 2026-11-20T09:30:00Z)')
  await refused(['extra'], 'Unexpected argument \'extra\'. This command does not take positional arguments')
  await t.rejects(readCaptureOptions(['--from', 'http://x']), new CaptureUsageError('--languages is required'))
})
