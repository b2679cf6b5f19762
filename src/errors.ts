// Every error this service raises, created here and nowhere else, each a ServiceError with a code (as Fastify's
// FST_ERR_*) and its class's name. HTTP errors carry the exact body the original Django REST Framework service
// answers with; snapshot errors carry the editor-facing report.
import { STATUS_CODES } from 'node:http'
import { format } from 'node:util'

/** The one base: a code a caller may test besides the class, and the class's name in logs. */
export abstract class ServiceError extends Error {
  abstract readonly code: string

  constructor (message?: string) {
    super(message)
    this.name = new.target.name
  }
}

/** The JSON body a client sees for an error: DRF's shapes, never a stack trace or a file path. */
export type ErrorBody = { detail: string } | Record<string, string[]>

export class HttpError extends ServiceError {
  /** Seconds a client should wait before it asks again: DRF's `exc.wait`, sent as `Retry-After`. */
  wait?: number
  /**
   * The indentation the view negotiated before it failed: DRF renders a view's errors with the renderer it
   * chose (`application/json; indent=4` indents a 404 too). Unset: compact.
   */
  indent?: number | null

  constructor (readonly code: string, readonly statusCode: number, message: string, readonly body: ErrorBody) {
    super(message)
  }
}

/** A maker of one HTTP error: `message` takes its `%s` from the arguments; `body` defaults to `{"detail": message}`. */
function httpError<Args extends unknown[] = []> (
  code: string, statusCode: number, message: string, body: (...args: Args) => ErrorBody = () => ({ detail: message })
) {
  return (...args: Args): HttpError => new HttpError(code, statusCode, format(message, ...args), body(...args))
}

// `companies` is validated like Django's IntegerField, which answers with this exact message.
export const companiesNotInteger = httpError('EXPLORE_ERR_COMPANIES', 400, 'companies must be whole numbers',
  () => ({ companies: ['Enter a whole number.'] }))

export const notFound = httpError('EXPLORE_ERR_NOT_FOUND', 404, 'Not found.')

export const methodNotAllowed = httpError('EXPLORE_ERR_METHOD_NOT_ALLOWED', 405, 'Method "%s" not allowed.',
  (method: string) => ({ detail: `Method "${method}" not allowed.` }))

export const notAcceptable = httpError('EXPLORE_ERR_NOT_ACCEPTABLE', 406,
  'Could not satisfy the request Accept header.')

// Django refuses a query string of more than DATA_UPLOAD_MAX_NUMBER_FIELDS (1000) fields.
export const TOO_MANY_FIELDS_CODE = 'EXPLORE_ERR_TOO_MANY_FIELDS'
export const tooManyFields = httpError(TOO_MANY_FIELDS_CODE, 400, 'The number of GET/POST parameters exceeded 1000.')

// Django's host check (ALLOWED_HOSTS and the host syntax) answers 400 before anything else runs.
export const invalidHost = httpError('EXPLORE_ERR_INVALID_HOST', 400, 'Invalid Host header.')

export const uriTooLong = httpError('EXPLORE_ERR_URI_TOO_LONG', 414, 'URI Too Long.')

// The ServiceUnavailable of DRF's documentation (its "Custom exceptions" example; DRF ships no 503 of its own).
const SERVICE_UNAVAILABLE = 'Service temporarily unavailable, try again later.'

// No snapshot is served yet (the first load is under way): the ServiceUnavailable above, with its default detail.
export const snapshotLoading = httpError('EXPLORE_ERR_SNAPSHOT_LOADING', 503, SERVICE_UNAVAILABLE)

// Refusals that come before any view: a path the router cannot decode, a request Fastify refuses, and
// the ones Node's HTTP parser raises before Fastify sees a request (written on the raw socket).
export const badRequest = httpError('EXPLORE_ERR_BAD_REQUEST', 400, 'Bad Request.')

export const requestTimeout = httpError('EXPLORE_ERR_REQUEST_TIMEOUT', 408, 'Request Timeout.')

export const headersTooLarge = httpError('EXPLORE_ERR_HEADERS_TOO_LARGE', 431, 'Request Header Fields Too Large.')

/** The body of any other 4xx Fastify raises: its status text, never Fastify's message (it may echo internals). */
export function refusalBody (statusCode: number): ErrorBody {
  return { detail: `${STATUS_CODES[statusCode] ?? 'Bad Request'}.` }
}

// Operator actions: the operator's listener only, with OPS_TOKEN. The 401s are DRF's
// NotAuthenticated and AuthenticationFailed, with the `WWW-Authenticate: Bearer` the route adds.
export const opsActionsOff = httpError('EXPLORE_ERR_OPS_ACTIONS_OFF', 403, 'Operator actions are off: set OPS_TOKEN.')

export const opsNotAuthenticated = httpError('EXPLORE_ERR_OPS_NOT_AUTHENTICATED', 401,
  'Authentication credentials were not provided.')

export const opsTokenInvalid = httpError('EXPLORE_ERR_OPS_TOKEN_INVALID', 401, 'Invalid token.')

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

// A serving thread forwards the operator's pages to the control thread (ADR 029); one that does not answer.
export const controlUnavailable = httpError('EXPLORE_ERR_CONTROL_UNAVAILABLE', 503,
  'The service is busy or closing; try again.')

export const serverError = httpError('EXPLORE_ERR_SERVER', 500, 'A server error occurred.')

// Failures simulated on purpose (FAIL_RATE, FAIL_STATUS, and `status=` under CHAOS): each status answered with
// the body of the DRF exception that has it, default detail and all (rest_framework/exceptions.py).
const SIMULATED_WAIT_SECONDS = 1

const simulatedFailures = {
  400: httpError('EXPLORE_ERR_SIMULATED_400', 400, 'Malformed request.'),
  403: httpError('EXPLORE_ERR_SIMULATED_403', 403, 'You do not have permission to perform this action.'),
  404: httpError('EXPLORE_ERR_SIMULATED_404', 404, 'Not found.'),
  // DRF's Throttled with a wait: the detail names it (singular or plural, as its ngettext does) and its
  // exception handler sends it as Retry-After.
  429: httpError('EXPLORE_ERR_SIMULATED_429', 429, 'Request was throttled.',
    (wait: number) => ({
      detail: `Request was throttled. Expected available in ${wait} ${wait === 1 ? 'second' : 'seconds'}.`
    })),
  500: httpError('EXPLORE_ERR_SIMULATED_500', 500, 'A server error occurred.'),
  503: httpError('EXPLORE_ERR_SIMULATED_503', 503, SERVICE_UNAVAILABLE)
}

/** The statuses a simulated failure can have: those a DRF exception answers with. */
export type FailStatus = keyof typeof simulatedFailures
export const FAIL_STATUSES = Object.keys(simulatedFailures).map(Number) as FailStatus[]

/** A failure simulated on purpose; 429 and 503 carry a wait (Retry-After): DRF's for 429, a proxy's habit for 503. */
export function simulatedFailure (status: FailStatus): HttpError {
  const error = status === 429 ? simulatedFailures[429](SIMULATED_WAIT_SECONDS) : simulatedFailures[status]()
  if (status === 429 || status === 503) error.wait = SIMULATED_WAIT_SECONDS
  return error
}

/** The error, to be rendered with the indentation the view negotiated before it failed. */
export function negotiatedAs<E extends HttpError> (error: E, indent: number | null): E {
  error.indent = indent
  return error
}

export function isHttpError (error: unknown): error is HttpError {
  return error instanceof HttpError
}

/**
 * A snapshot file that cannot be served: unreadable, invalid with one line per problem, or too big for the
 * memory budget (TooBigError).
 */
export class SnapshotError extends ServiceError {
  readonly code: 'SNAPSHOT_ERR_UNREADABLE' | 'SNAPSHOT_ERR_INVALID' | 'SNAPSHOT_ERR_TOO_BIG'
  readonly file: string
  readonly problems: readonly string[]
  /** What the file was read as: the report's first word. */
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

/**
 * The report on a file refused, headed by its kind (`snapshot`, `change file`, `manifest`): why, then each
 * problem on a line of its own.
 */
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

/** What a file refused for memory needs at its peak, and what the budget had free (snapshot/memory-budget.ts). */
export interface MemoryShortfall {
  neededBytes: number
  freeBytes: number
  budgetBytes: number
}

/** A snapshot refused because loading it would pass the memory budget: refused like a bad file. */
export class TooBigError extends SnapshotError {
  constructor (
    file: string, problem: string, readonly shortfall: MemoryShortfall, kind: SnapshotError['kind'] = 'snapshot'
  ) {
    super('SNAPSHOT_ERR_TOO_BIG', file, [problem], kind)
  }
}

/** A file system failure in a word: its code (ENOENT), else its message. */
export function errnoText (error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message
}

/** A bad configuration value: the message names the variable or flag and the rule. */
export class ConfigError extends ServiceError {
  readonly code = 'CONFIG_ERR_INVALID'
}

/** The service cannot start here (a port in use, a STATE_DIR it cannot use): what is wrong and what to do, exit 1. */
export class StartError extends ServiceError {
  readonly code = 'START_ERR'
}

/** A command line used wrongly (an unknown option, a bad value): exit 2, the message, where to read more. */
export class UsageError extends ServiceError {
  readonly code: string = 'CLI_ERR_USAGE'
}

/** A file that is not text at all: empty, or not UTF-8. */
export class NotText extends ServiceError {
  readonly code = 'LOAD_ERR_NOT_TEXT'
}

/** A line longer than the limit: reading stops there. */
export class LineTooLong extends ServiceError {
  readonly code = 'LOAD_ERR_LINE_TOO_LONG'
  constructor (readonly number: number, limit: number) {
    super(`line ${number} is longer than ${limit >= 1024 * 1024 ? `${limit / 1024 / 1024} MiB` : `${limit} bytes`}`)
  }
}

/** The document is not JSON, or not one the streamer follows. The message ends with the line and column. */
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

/** A place in a file's text, as reports name it: 1-based, columns in characters. */
interface Place { line: number, column: number }

export function describePosition ({ line, column }: Place): string {
  return `line ${line}, column ${column}`
}

/** An item a change file cannot carry: nothing is written. */
export class ChangeFileError extends ServiceError {
  readonly code = 'CHANGES_ERR_ITEM'
}

/** A refusal of `publish`, in words for the publisher: exit 1. */
export class PublishError extends ServiceError {
  readonly code = 'CLI_ERR_PUBLISH'
}

/** A reason for `convert` to write nothing, for the person converting. */
export class ConvertError extends ServiceError {
  readonly code = 'CLI_ERR_CONVERT'
}

/** A version image that cannot be used, and why: logged, and the snapshot is parsed instead (ADR 033). */
export class ImageError extends ServiceError {
  readonly code = 'SNAPSHOT_ERR_IMAGE'
}

/** A failure to reach or read a snapshot source, in words for the log and status (never a stack trace). */
export class SourceError extends ServiceError {
  readonly code = 'SOURCE_ERR'
}

/** A manifest that cannot be followed: one line per problem. */
export class ManifestError extends ServiceError {
  readonly code = 'SOURCE_ERR_MANIFEST'
  constructor (readonly problems: readonly string[]) {
    super(problems.join('; '))
  }
}

/** A bad option or argument of the capture: the command line's UsageError, printed with a usage hint, exit 2. */
export class CaptureUsageError extends UsageError {}

/** The capture failed; nothing was written. */
export class CaptureError extends ServiceError {
  readonly code: string = 'CAPTURE_ERR'
}

/** The source answered something that is not an explore page: retrying would not help. */
export class NotExploreError extends CaptureError {
  override readonly code = 'CAPTURE_ERR_NOT_EXPLORE'
  constructor (readonly url: string, what: string) {
    super(`not an explore API: GET ${url}: ${what}`)
  }
}

/** A signal stopped the capture; `exitCode` is the shell's 128 + signal number. */
export class CaptureInterrupted extends ServiceError {
  readonly code = 'CAPTURE_ERR_INTERRUPTED'
  readonly exitCode: number
  constructor (readonly signal: 'SIGINT' | 'SIGTERM') {
    super(`interrupted by ${signal}`)
    this.exitCode = signal === 'SIGINT' ? 130 : 143
  }
}
