// The console's browser script (/-/console.js): the preview pages through the explore API as cards. A string: tsc
// ships only compiled .ts, and a string needs no DOM types or esbuild helpers. A module; no backquote or dollar-brace
// (it sits in a template literal); API data reaches the page only as textContent or checked attributes.
export const CONSOLE_SCRIPT = String.raw`// explore-replica console: the preview (see /-/ for the rest, rendered by the server).
const API_TAIL = '/api/internal/explore/'

const form = document.getElementById('preview-form')
if (form !== null) startPreview(form)
const journalRows = document.getElementById('requests-rows')
if (journalRows !== null) startJournal(journalRows)

// The request journal, read again every 2 s while the page is shown: what the API was asked for.
function startJournal (rows) {
  const summary = document.getElementById('requests-summary')
  const clear = document.getElementById('requests-clear')
  clear.hidden = false
  clear.addEventListener('click', async () => {
    await fetch('/-/requests', { method: 'DELETE' }).catch(() => null)
    read()
  })
  let timer = null
  async function read () {
    clearTimeout(timer)
    try {
      const response = await fetch('/-/requests?limit=50', { headers: { accept: 'application/json' } })
      const body = await response.json()
      if (!response.ok) throw new Error(describeError(body))
      const { journal, requests } = body
      summary.textContent = journal.kept + ' kept of the last ' + journal.size + (journal.threads > 1 ? ' per thread' : '') + (journal.dropped > 0 ? ', ' + journal.dropped + ' let go' : '') + '; the newest ' + requests.length + ' below.'
      rows.replaceChildren(...requests.map(requestRow))
    } catch (error) {
      summary.textContent = 'The journal could not be read: ' + error.message
    }
    if (document.visibilityState === 'visible') timer = setTimeout(read, 2000)
  }
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible') read() })
  read()
}

function requestRow (entry) {
  const cell = (text, className) => element('td', { class: className }, [text])
  return element('tr', {}, [
    cell(entry.at.slice(11, 23)),
    cell(entry.method ?? '–'),
    element('td', {}, [element('code', {}, [entry.url ?? '(unreadable)'])]),
    cell(entry.status === null ? 'none' : String(entry.status), 'number'),
    cell(String(Math.round(entry.durationMs)), 'number'),
    cell(troubleText(entry.trouble))
  ])
}

function troubleText (trouble) {
  if (trouble === null) return ''
  const parts = []
  if (trouble.failure !== null) parts.push(trouble.failure.status + ' (' + trouble.failure.by + ')')
  if (trouble.delay !== null) parts.push(trouble.delay.ms + ' ms (' + trouble.delay.by + ')')
  if (trouble.fault !== null) parts.push(trouble.fault)
  return (parts.length === 0 ? 'none' : parts.join(', ')) + '; draw ' + trouble.draw
}

function startPreview (form) {
  const cards = document.getElementById('preview-cards')
  const summary = document.getElementById('preview-summary')
  const previous = document.getElementById('preview-previous')
  const next = document.getElementById('preview-next')
  // The state shown, and the API's links from its page; a newer request makes an older answer moot.
  let shown = null
  let links = { next: null, previous: null }

  form.addEventListener('submit', event => {
    event.preventDefault()
    show(fromForm(), 'push')
  })
  previous.addEventListener('click', () => follow(links.previous))
  next.addEventListener('click', () => follow(links.next))
  window.addEventListener('popstate', () => show(fromQuery(location.search), 'none'))
  previous.hidden = false
  next.hidden = false
  show(fromQuery(location.search), 'replace')

  function fromForm () {
    return { lang: form.elements.lang.value, companies: form.elements.companies.value, limit: wholeNumber(form.elements.limit.value, 10), offset: 0 }
  }

  function fromQuery (search) {
    const params = new URLSearchParams(search)
    const lang = params.get('lang')
    const known = Array.from(form.elements.lang.options, option => option.value)
    return {
      lang: lang !== null && known.includes(lang) ? lang : form.elements.lang.value,
      companies: params.get('companies') ?? '',
      limit: wholeNumber(params.get('limit'), 10),
      offset: wholeNumber(params.get('offset'), 0)
    }
  }

  // next and previous are absolute, built from PUBLIC_BASE_URL when it is set, which may be another
  // host or carry a path prefix: their query is what matters, asked of this origin (connect-src 'self').
  function follow (link) {
    if (link === null) return
    const params = new URL(link).searchParams
    show({ lang: shown.lang, companies: params.getAll('companies').join(','), limit: wholeNumber(params.get('limit'), 10), offset: wholeNumber(params.get('offset'), 0) }, 'push')
  }

  async function show (state, history) {
    shown = state
    form.elements.lang.value = state.lang
    form.elements.companies.value = state.companies
    form.elements.limit.value = String(state.limit)
    if (history !== 'none') {
      const url = '/-/?' + new URLSearchParams({ lang: state.lang, companies: state.companies, limit: String(state.limit), offset: String(state.offset) })
      if (history === 'push') window.history.pushState(null, '', url)
      else window.history.replaceState(null, '', url)
    }
    previous.disabled = true
    next.disabled = true
    cards.setAttribute('aria-busy', 'true')
    summary.textContent = 'Loading…'
    let response
    let body
    try {
      response = await fetch(apiUrl(state, state.limit, state.offset), { headers: { accept: 'application/json' } })
      body = await response.json()
    } catch (error) {
      if (shown === state) failed('The API could not be reached: ' + error.message)
      return
    }
    if (shown !== state) return
    if (!response.ok) {
      failed('The API answered ' + response.status + ': ' + describeError(body))
      return
    }
    links = { next: body.next, previous: body.previous }
    previous.disabled = body.previous === null
    next.disabled = body.next === null
    summary.textContent = pageSummary(body, state)
    cards.replaceChildren(...body.results.map((item, i) => card(item, state, state.offset + i)))
    cards.removeAttribute('aria-busy')
  }

  function failed (message) {
    links = { next: null, previous: null }
    summary.textContent = message
    cards.replaceChildren()
    cards.removeAttribute('aria-busy')
  }
}

function wholeNumber (text, fallback) {
  return typeof text === 'string' && /^[0-9]{1,9}$/.test(text.trim()) ? Number(text.trim()) : fallback
}

function companyIds (text) {
  return text.split(/[\s,]+/).filter(id => id !== '')
}

/** The explore API's page for a state; every company is a companies parameter (the union). */
function apiUrl (state, limit, offset) {
  const params = new URLSearchParams()
  for (const id of companyIds(state.companies)) params.append('companies', id)
  params.set('limit', String(limit))
  params.set('offset', String(offset))
  return '/' + encodeURIComponent(state.lang) + API_TAIL + '?' + params
}

function pageSummary (body, state) {
  const ids = companyIds(state.companies)
  const filter = ids.length === 0 ? 'every company' : (ids.length === 1 ? 'company ' : 'companies ') + ids.join(', ')
  if (body.count === 0) return 'No item in /' + state.lang + '/ for ' + filter + '.'
  if (body.results.length === 0) return 'No item at offset ' + state.offset + ': there are ' + body.count + ' for ' + filter + '.'
  return 'Items ' + (state.offset + 1) + '–' + (state.offset + body.results.length) + ' of ' + body.count + ' in /' + state.lang + '/ for ' + filter + '.'
}

/** DRF's error bodies: {"detail": "…"} or {"field": ["…"]}. */
function describeError (body) {
  if (body !== null && typeof body === 'object') {
    if (typeof body.detail === 'string') return body.detail
    return Object.entries(body).map(([field, messages]) => field + ': ' + [].concat(messages).join(' ')).join('; ')
  }
  return String(body)
}

/** A link or image address from the data, or null: http(s), site-relative, and data: images only. */
function safeUrl (value, images) {
  if (typeof value !== 'string') return null
  try {
    const url = new URL(value, location.href)
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href
    if (images && url.protocol === 'data:' && /^data:image\//i.test(value)) return url.href
  } catch {}
  return null
}

function element (tag, attributes, children) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value))
  }
  for (const child of children ?? []) {
    if (child !== null && child !== undefined) node.append(child)
  }
  return node
}

function link (text, href) {
  const url = safeUrl(href, false)
  const node = url === null ? element('span') : element('a', { href: url })
  node.textContent = text
  return node
}

function labelled (label, className, nodes) {
  if (nodes.length === 0) return null
  const line = element('p', { class: className }, [element('span', { class: 'label' }, [label + ': '])])
  nodes.forEach((node, i) => line.append(...(i === 0 ? [node] : [', ', node])))
  return line
}

function card (item, state, offset) {
  const image = item.display_image === null ? null : safeUrl(item.display_image.url, true)
  const title = element('h3', { class: 'card-title' }, [link(item.translated_title, item.translated_url)])
  const meta = element('p', { class: 'card-meta' }, [
    element('span', { class: 'kind' }, [item.content_type_display]),
    ' · ',
    element('time', { datetime: item.backdate }, [item.backdate]),
    ' · pk ' + item.pk,
    item.is_translated ? null : element('span', { class: 'untranslated' }, [' · not translated'])
  ])
  const abstract = item.translated_abstract === '' ? null : element('p', { class: 'abstract' }, [item.translated_abstract])
  const stories = labelled('Stories', 'stories', item.stories.map(story => link(story.translated_title, story.translated_url)))
  const translations = labelled('Translations', 'translations', item.translated_languages.map(variant => {
    const node = link(variant.language + ' (' + variant.language_code + ')', variant.url)
    node.setAttribute('hreflang', variant.language_code)
    return node
  }))
  const raw = element('p', { class: 'raw' }, [link('Raw JSON (item ' + (offset + 1) + ')', apiUrl(state, 1, offset))])
  return element('li', { class: 'card', 'data-pk': item.pk }, [
    image === null ? null : element('img', { src: image, alt: '', width: item.display_image.width, height: item.display_image.height, loading: 'lazy' }),
    element('div', { class: 'card-body' }, [meta, title, abstract, stories, translations, raw])
  ])
}
`
