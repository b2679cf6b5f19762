// The ways a capture stops: bad usage (exit 2), a failure that leaves --out untouched (exit 1), an
// interruption (130/143). Each carries a one-line message for the person running it, never a stack trace.
import { UsageError } from '../errors.js'

/** A bad option or argument of the capture: the command line's UsageError, printed with a usage hint, exit 2. */
export class CaptureUsageError extends UsageError {
  override readonly name = 'CaptureUsageError'
}

/** The capture failed; nothing was written. */
export class CaptureError extends Error {
  override readonly name: string = 'CaptureError'
}

/** The source answered something that is not an explore page: retrying would not help. */
export class NotExploreError extends CaptureError {
  override readonly name = 'NotExploreError'
  constructor (readonly url: string, what: string) {
    super(`not an explore API: GET ${url}: ${what}`)
  }
}

/** A signal stopped the capture; `exitCode` is the shell's 128 + signal number. */
export class CaptureInterrupted extends Error {
  override readonly name = 'CaptureInterrupted'
  readonly exitCode: number
  constructor (readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`)
    this.exitCode = signal === 'SIGINT' ? 130 : 143
  }
}
