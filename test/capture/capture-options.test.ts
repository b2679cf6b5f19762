// The capture's options: defaults, normalised values, and each refusal naming its option and rule.
import t from 'tap'
import { readCaptureOptions } from '../../src/capture/capture-options.js'
import { CaptureUsageError } from '../../src/errors.js'

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
