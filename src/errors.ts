// Every error the service raises, each with a code; HTTP errors carry the exact body DRF answers with.
import { STATUS_CODES } from 'node:http'
import { format } from 'node:util'

export abstract class ServiceError extends Error {
  abstract readonly code: string

  constructor (message?: string) {
    super(message)
    this.name = new.target.name
  }
}

/** Never a stack trace or a file path. */
export type ErrorBody = { detail: string } | Record<string, string[]>

export class HttpError extends ServiceError {
  /** Seconds: DRF's `exc.wait`, sent as `Retry-After`. */
  wait?: number
  /** DRF renders a view's errors with the renderer it negotiated (`indent=4` indents a 404 too). */
  indent?: number | null

  constructor (readonly code: string, readonly statusCode: number, message: string, readonly body: ErrorBody) {
    super(message)
  }
}

function httpError<Args extends unknown[] = []> (
  code: string, statusCode: number, message: string, body: (...args: Args) => ErrorBody = () => ({ detail: message })
) {
  return (...args: Args): HttpError => new HttpError(code, statusCode, format(message, ...args), body(...args))
}

// Django's IntegerField's exact message.
export const companiesNotInteger = httpError('EXPLORE_ERR_COMPANIES', 400, 'companies must be whole numbers',
  () => ({ companies: ['Enter a whole number.'] }))

export const notFound = httpError('EXPLORE_ERR_NOT_FOUND', 404, 'Not found.')

export const methodNotAllowed = httpError('EXPLORE_ERR_METHOD_NOT_ALLOWED', 405, 'Method "%s" not allowed.',
  (method: string) => ({ detail: `Method "${method}" not allowed.` }))

export const notAcceptable = httpError('EXPLORE_ERR_NOT_ACCEPTABLE', 406,
  'Could not satisfy the request Accept header.')

// Django's DATA_UPLOAD_MAX_NUMBER_FIELDS.
export const TOO_MANY_FIELDS_CODE = 'EXPLORE_ERR_TOO_MANY_FIELDS'
export const tooManyFields = httpError(TOO_MANY_FIELDS_CODE, 400, 'The number of GET/POST parameters exceeded 1000.')

// Django's host check answers before anything else runs.
export const invalidHost = httpError('EXPLORE_ERR_INVALID_HOST', 400, 'Invalid Host header.')

export const uriTooLong = httpError('EXPLORE_ERR_URI_TOO_LONG', 414, 'URI Too Long.')

// From DRF's "Custom exceptions" example: DRF ships no 503 of its own.
const SERVICE_UNAVAILABLE = 'Service temporarily unavailable, try again later.'

export const snapshotLoading = httpError('EXPLORE_ERR_SNAPSHOT_LOADING', 503, SERVICE_UNAVAILABLE)

// Refusals before any view, some written on the raw socket by Node's HTTP parser.
export const badRequest = httpError('EXPLORE_ERR_BAD_REQUEST', 400, 'Bad Request.')

export const requestTimeout = httpError('EXPLORE_ERR_REQUEST_TIMEOUT', 408, 'Request Timeout.')

export const headersTooLarge = httpError('EXPLORE_ERR_HEADERS_TOO_LARGE', 431, 'Request Header Fields Too Large.')

/** Never Fastify's message: it may echo internals. */
export function refusalBody (statusCode: number): ErrorBody {
  return { detail: `${STATUS_CODES[statusCode] ?? 'Bad Request'}.` }
}

// The 401s are DRF's NotAuthenticated and AuthenticationFailed.
export const opsActionsOff = httpError('EXPLORE_ERR_OPS_ACTIONS_OFF', 403, 'Operator actions are off: set OPS_TOKEN.')

export const opsNotAuthenticated = httpError('EXPLORE_ERR_OPS_NOT_AUTHENTICATED', 401,
  'Authentication credentials were not provided.')

export const opsTokenInvalid = httpError('EXPLORE_ERR_OPS_TOKEN_INVALID', 401, 'Invalid token.')

// Not Django's check: the operator's pages answer the names they are reached by on purpose (ADR 039).
export const opsHostRefused = httpError('EXPLORE_ERR_OPS_HOST', 400,
  'Invalid Host header: the operator\'s pages answer localhost, an IP address or a name in OPS_ALLOWED_HOSTS.')

export const pinBodyInvalid = httpError('EXPLORE_ERR_PIN_BODY', 400, 'The body must be {"version": "…"}.',
  () => ({ version: ['This field is required: send {"version": "…"} as application/json.'] }))

export const versionNotKept = httpError('EXPLORE_ERR_VERSION_NOT_KEPT', 404, 'Version "%s" is not kept here.',
  (version: string) => ({ detail: `Version "${version}" is not kept here (GET /-/versions lists the kept ones).` }))

export const noOlderVersion = httpError('EXPLORE_ERR_NO_OLDER_VERSION', 409,
  'No kept version is older than the served one.')

export const versionNotLoaded = httpError('EXPLORE_ERR_VERSION_NOT_LOADED', 500, 'Version "%s" did not load.',
  (version: string) => ({
    detail: `Version "${version}" did not load; the served version is unchanged (the service's log says why).`
  }))

// The control thread did not answer a serving thread's forward (ADR 029).
export const controlUnavailable = httpError('EXPLORE_ERR_CONTROL_UNAVAILABLE', 503,
  'The service is busy or closing; try again.')

export const serverError = httpError('EXPLORE_ERR_SERVER', 500, 'A server error occurred.')

// GET and DELETE /-/requests (REQUEST_JOURNAL).
export const journalOff = httpError('EXPLORE_ERR_JOURNAL_OFF', 404,
  'The request journal is off: start the service with REQUEST_JOURNAL=true (auto: on when HOST is a loopback address).')

export const journalFilterInvalid = httpError('EXPLORE_ERR_JOURNAL_FILTER', 400, '%s',
  (problem: string) => ({ detail: problem }))

// Simulated failures: each the DRF exception with that status (rest_framework/exceptions.py).
const SIMULATED_WAIT_SECONDS = 1

const simulatedFailures = {
  400: httpError('EXPLORE_ERR_SIMULATED_400', 400, 'Malformed request.'),
  403: httpError('EXPLORE_ERR_SIMULATED_403', 403, 'You do not have permission to perform this action.'),
  404: httpError('EXPLORE_ERR_SIMULATED_404', 404, 'Not found.'),
  // DRF's Throttled with a wait, pluralized as its ngettext does.
  429: httpError('EXPLORE_ERR_SIMULATED_429', 429, 'Request was throttled.',
    (wait: number) => ({
      detail: `Request was throttled. Expected available in ${wait} ${wait === 1 ? 'second' : 'seconds'}.`
    })),
  500: httpError('EXPLORE_ERR_SIMULATED_500', 500, 'A server error occurred.'),
  503: httpError('EXPLORE_ERR_SIMULATED_503', 503, SERVICE_UNAVAILABLE)
}

export type FailStatus = keyof typeof simulatedFailures
export const FAIL_STATUSES = Object.keys(simulatedFailures).map(Number) as FailStatus[]

/** A Retry-After on 429 (DRF's) and 503 (a proxy's habit). */
export function simulatedFailure (status: FailStatus): HttpError {
  const error = status === 429 ? simulatedFailures[429](SIMULATED_WAIT_SECONDS) : simulatedFailures[status]()
  if (status === 429 || status === 503) error.wait = SIMULATED_WAIT_SECONDS
  return error
}

export function negotiatedAs<E extends HttpError> (error: E, indent: number | null): E {
  error.indent = indent
  return error
}

export function isHttpError (error: unknown): error is HttpError {
  return error instanceof HttpError
}

export class SnapshotError extends ServiceError {
  readonly code: 'SNAPSHOT_ERR_UNREADABLE' | 'SNAPSHOT_ERR_INVALID' | 'SNAPSHOT_ERR_TOO_BIG'
  readonly file: string
  readonly problems: readonly string[]
  readonly kind: 'snapshot' | 'change file'

  constructor (
    code: SnapshotError['code'], file: string, problems: readonly string[], kind: SnapshotError['kind'] = 'snapshot'
  ) {
    super(refusalReport(kind, file, code, problems))
    this.code = code
    this.file = file
    this.problems = problems
    this.kind = kind
  }
}

export function refusalReport (
  kind: string, file: string, code: SnapshotError['code'], problems: readonly string[]
): string {
  const what = code === 'SNAPSHOT_ERR_UNREADABLE'
    ? 'cannot be read'
    : code === 'SNAPSHOT_ERR_TOO_BIG' ? 'does not fit in memory' : 'is invalid'
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`
  // A refusal for memory is one sentence of numbers, not a list of problems.
  return code === 'SNAPSHOT_ERR_TOO_BIG'
    ? `${kind} ${file} ${what}: ${problems.join('; ')}`
    : `${kind} ${file} ${what} (${count}):\n${problems.map(p => `  ${p}`).join('\n')}`
}

export interface MemoryShortfall {
  neededBytes: number
  freeBytes: number
  budgetBytes: number
}

export class TooBigError extends SnapshotError {
  constructor (
    file: string, problem: string, readonly shortfall: MemoryShortfall, kind: SnapshotError['kind'] = 'snapshot'
  ) {
    super('SNAPSHOT_ERR_TOO_BIG', file, [problem], kind)
  }
}

export function errnoText (error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message
}

export class ConfigError extends ServiceError {
  readonly code = 'CONFIG_ERR_INVALID'
}

export class StartError extends ServiceError {
  readonly code = 'START_ERR'
}

/** Exit 2. */
export class UsageError extends ServiceError {
  readonly code: string = 'CLI_ERR_USAGE'
}

export class NotText extends ServiceError {
  readonly code = 'LOAD_ERR_NOT_TEXT'
}

export class LineTooLong extends ServiceError {
  readonly code = 'LOAD_ERR_LINE_TOO_LONG'
  constructor (readonly number: number, limit: number) {
    super(`line ${number} is longer than ${limit >= 1024 * 1024 ? `${limit / 1024 / 1024} MiB` : `${limit} bytes`}`)
  }
}

export class NotFollowed extends ServiceError {
  readonly code = 'LOAD_ERR_NOT_FOLLOWED'
  readonly line: number
  readonly column: number

  constructor (readonly reason: string, position: Place) {
    super(`${reason} at ${describePosition(position)}`)
    this.line = position.line
    this.column = position.column
  }
}

/** 1-based, columns in characters. */
interface Place { line: number, column: number }

export function describePosition ({ line, column }: Place): string {
  return `line ${line}, column ${column}`
}

export class ChangeFileError extends ServiceError {
  readonly code = 'CHANGES_ERR_ITEM'
}

export class PublishError extends ServiceError {
  readonly code = 'CLI_ERR_PUBLISH'
}

export class ConvertError extends ServiceError {
  readonly code = 'CLI_ERR_CONVERT'
}

/** Logged, and the snapshot is parsed instead (ADR 033). */
export class ImageError extends ServiceError {
  readonly code = 'SNAPSHOT_ERR_IMAGE'
}

export class SourceError extends ServiceError {
  readonly code = 'SOURCE_ERR'
}

export class ManifestError extends ServiceError {
  readonly code = 'SOURCE_ERR_MANIFEST'
  constructor (readonly problems: readonly string[]) {
    super(problems.join('; '))
  }
}

export class CaptureUsageError extends UsageError {}

export class CaptureError extends ServiceError {
  readonly code: string = 'CAPTURE_ERR'
}

/** Retrying would not help. */
export class NotExploreError extends CaptureError {
  override readonly code = 'CAPTURE_ERR_NOT_EXPLORE'
  constructor (readonly url: string, what: string) {
    super(`not an explore API: GET ${url}: ${what}`)
  }
}

/** `exitCode`: the shell's 128 + signal number. */
export class CaptureInterrupted extends ServiceError {
  readonly code = 'CAPTURE_ERR_INTERRUPTED'
  readonly exitCode: number
  constructor (readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`)
    this.exitCode = signal === 'SIGINT' ? 130 : 143
  }
}
