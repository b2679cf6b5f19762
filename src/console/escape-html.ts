// HTML from text the service does not control (file names, validator lines, labels): the `html` tag escapes every
// value, so a page cannot forget to.
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }

/** Safe inside an element or a quoted attribute. */
function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, char => ESCAPES[char] as string)
}

/** Markup that is already safe: only the `html` tag makes one. */
export class Html {
  /** @internal */
  constructor (readonly markup: string) {}

  toString (): string {
    return this.markup
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[]

function render (value: Value): string {
  if (value instanceof Html) return value.markup
  if (Array.isArray(value)) return value.map(render).join('')
  // `cond && html…` leaves false; nothing to show.
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/** A template whose every `${value}` is escaped, unless it is itself `html`; arrays are joined. */
export function html (strings: TemplateStringsArray, ...values: Value[]): Html {
  let markup = strings[0] as string
  for (let i = 0; i < values.length; i++) markup += render(values[i] as Value) + (strings[i + 1] as string)
  return new Html(markup)
}
