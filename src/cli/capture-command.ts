// `explore-replica capture`: a snapshot from walking a running explore API, written once the service's loader takes it.
import {
  DEFAULT_CONCURRENCY, DEFAULT_MAX_BODY_MB, DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_S, DEFAULT_RPS, DEFAULT_TIMEOUT_S,
  readCaptureOptions
} from '../capture/capture-options.js'
import { formatSummary } from '../capture/capture-summary.js'
import { progressBar } from '../capture/progress-bar.js'
import { BACKOFF_CAP_MS, RETRY_AFTER_CAP_MS } from '../capture/retry-policy.js'
import { runCapture } from '../capture/run-capture.js'
import { ASK_PAGE_SIZE } from '../capture/walk-source.js'
import { CaptureError, CaptureInterrupted, CaptureUsageError } from '../errors.js'

export const CAPTURE_USAGE = `Usage: explore-replica capture --from URL --languages L --companies IDS --out FILE [options]
       (npm run capture -- …)
Walks a running explore API (the original or a replica) and writes what it serves as a snapshot: every item
of each language, each with the listed companies whose pages hold it (one request per company, language
and page). The snapshot is written beside FILE, loaded as the service loads it, then renamed over FILE.

  --from URL          the source's base URL: pages are URL/{lang}/api/internal/explore/
  --languages L       language segments, comma-separated: en,es,fr
  --companies IDS     company ids and ranges, 1-5000,7000; or @FILE, a file of them (separated by spaces,
                      commas or newlines; # starts a comment). Companies not listed are not captured.
  --out FILE          .jsonl or .ndjson: JSON Lines; .json: format v1
  --concurrency N     requests in flight at once (default ${DEFAULT_CONCURRENCY})
  --rps N             requests per second at most, to be polite to the source (default ${DEFAULT_RPS}; 0: no cap,
                      for a source of your own)
  --retries N         tries after a 5xx, a 429, a network error or a timeout (default ${DEFAULT_RETRIES}); a 4xx
                      other than 429 is not tried again
  --retry-delay S     first backoff in seconds (default ${DEFAULT_RETRY_DELAY_S}), doubled at each retry up to
                      ${BACKOFF_CAP_MS / 1000} s, with jitter; a Retry-After from the source pauses every request,
                      for ${RETRY_AFTER_CAP_MS / 1000} s at most
  --timeout S         seconds for one request, its body included (default ${DEFAULT_TIMEOUT_S})
  --max-body-mb N     an answer larger than N MiB once decoded stops the capture, read no further
                      (default ${DEFAULT_MAX_BODY_MB})
  --page-size N       the limit to ask for (default ${ASK_PAGE_SIZE}; the source clamps it to its own maximum,
                      and its first page tells the size it gives)
  --generated-at T    the snapshot's generated_at, ISO-8601 (default: when the capture starts)
  -h, --help          this text

A progress bar is drawn on stderr when it is a terminal; a summary is printed at the end: items per
language, companies with no item, requests and retries, time, and what changed during the walk.
Exit status: 0 written; 1 failed, FILE untouched; 2 bad usage; 130/143 interrupted (SIGINT/SIGTERM),
FILE untouched.
`

export async function captureCommand (argv: string[]): Promise<number> {
  let options
  try {
    options = await readCaptureOptions(argv)
  } catch (error) {
    if (!(error instanceof CaptureUsageError)) throw error
    process.stderr.write(`capture: ${error.message}\nRun explore-replica capture --help for the options.\n`)
    return 2
  }
  if (options === 'help') {
    process.stdout.write(CAPTURE_USAGE)
    return 0
  }

  const controller = new AbortController()
  const interrupt = (signal: 'SIGINT' | 'SIGTERM') => () => { controller.abort(new CaptureInterrupted(signal)) }
  const onSigint = interrupt('SIGINT')
  const onSigterm = interrupt('SIGTERM')
  // Once: a second Ctrl-C while the capture cleans up ends the process the usual way.
  process.once('SIGINT', onSigint)
  process.once('SIGTERM', onSigterm)
  const progress = progressBar(process.stderr)
  try {
    const report = await runCapture(options, {
      signal: controller.signal,
      ...(progress === undefined ? {} : { progress, onRetry: progress.retried })
    })
    progress?.stop()
    process.stdout.write(formatSummary(report))
    return 0
  } catch (error) {
    progress?.stop()
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : error
    if (reason instanceof CaptureInterrupted) {
      process.stderr.write(`capture: ${reason.message}: nothing written, ${options.out} left as it was\n`)
      return reason.exitCode
    }
    if (reason instanceof CaptureError) {
      process.stderr.write(`capture: ${reason.message}\n`)
      return 1
    }
    process.stderr.write(`capture: unexpected failure, nothing written: ${(reason as Error).message}\n`)
    return 1
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
  }
}
