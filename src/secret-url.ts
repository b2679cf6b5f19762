// A URL that may carry a credential (user info; a signed query: S3 presigned, Azure SAS, GCS) kept apart from the
// form that statuses, logs, messages and files show: no user info, the query and fragment as `?…` and `#…`.
import { inspect } from 'node:util'

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i
/** A URL within a library's message: from its scheme to the next white space or quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi

/**
 * `text` as it may be shown: a URL without its user info, its query as `?…` and fragment as `#…`. By its text, not
 * the WHATWG parser, so that a message quotes what was given and a text no parser takes is cut all the same.
 */
export function shownUrl (text: string): string {
  const bare = text.includes('//') ? text.replace(/^([^/?#]*\/\/)[^/?#\\]*@/, '$1') : text.replace(/^[^/?#]*@/, '')
  return bare.replace(/\?[^#]*/, '?…').replace(/#.*$/s, '#…')
}

/** A source as a status names it: a URL as `shownUrl` shows it, a file's path as it is. */
export function shownSource (text: string): string {
  return SCHEME.test(text) ? shownUrl(text) : text
}

/** Every URL within a message (fetch's, undici's, the AWS SDK's) as `shownUrl` shows it. */
export function shownUrlsIn (text: string): string {
  return text.replace(URL_IN_TEXT, shownUrl)
}

/** SNAPSHOT_URL: prints, serializes and inspects as `shown`; only `reveal()` gives the URL itself. */
export class SecretUrl {
  readonly shown: string
  // #: never in what a logger, JSON.stringify or util.inspect prints.
  readonly #href: string

  constructor (href: string) {
    this.#href = href
    this.shown = shownUrl(href)
  }

  /** For the HTTP or S3 client that fetches it, and nothing else. */
  reveal (): URL {
    return new URL(this.#href)
  }

  toString (): string {
    return this.shown
  }

  toJSON (): string {
    return this.shown
  }

  [inspect.custom] (): string {
    return this.shown
  }
}
