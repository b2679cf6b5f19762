#!/usr/bin/env node
// Differential comparison of two HTTP servers implementing the explore API
// (typically: A = the Django/DRF reference in this folder, B = the replica).
//
//   node test/drf-reference/compare.mjs --a http://127.0.0.1:PORT_A --b http://127.0.0.1:PORT_B
//        [--cases FILE] [--with-builtin] [--random N --seed S] [--host testserver]
//        [--filter REGEX] [--concurrency 4] [--max-print 50] [--timeout 15000]
//        [--vary-non200 note|error] [--json-report FILE] [--replica-known] [--list]
//   node test/drf-reference/compare.mjs --a http://127.0.0.1:PORT --show [--filter REGEX]
//
// Requests are written byte-exact on a raw TCP socket (node:net): the request
// target is sent exactly as written in the case (no URL normalisation, odd
// percent-escapes, '+', raw UTF-8, even spaces), headers exactly as given, plus
// "Connection: close" so the response is delimited by EOF and a body sent on
// HEAD is noticed. No dependencies beyond Node's built-ins.
//
// Exit status: 0 no differences (notes allowed, and with --replica-known the
// replica's documented differences, marked ~), 1 differences, 2 usage or
// connection errors.

import net from 'node:net'
import { readFileSync, writeFileSync } from 'node:fs'

const P = '/en/api/internal/explore/'

// ---------------------------------------------------------------- arguments

function parseArgs (argv) {
  const o = {
    a: null,
    b: null,
    cases: null,
    withBuiltin: false,
    random: 0,
    seed: 1,
    host: 'testserver',
    filter: null,
    concurrency: 4,
    maxPrint: 50,
    timeout: 15000,
    varyNon200: 'note',
    jsonReport: null,
    replicaKnown: false,
    list: false,
    show: false
  }
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]
    const v = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${k}`)
      return argv[++i]
    }
    switch (k) {
      case '--a': o.a = v(); break
      case '--b': o.b = v(); break
      case '--cases': o.cases = v(); break
      case '--with-builtin': o.withBuiltin = true; break
      case '--random': o.random = Number(v()); break
      case '--seed': o.seed = Number(v()); break
      case '--host': o.host = v(); break
      case '--filter': o.filter = new RegExp(v()); break
      case '--concurrency': o.concurrency = Math.max(1, Number(v())); break
      case '--max-print': o.maxPrint = Number(v()); break
      case '--timeout': o.timeout = Number(v()); break
      case '--vary-non200': o.varyNon200 = v(); break
      case '--json-report': o.jsonReport = v(); break
      case '--replica-known': o.replicaKnown = true; break
      case '--list': o.list = true; break
      case '--show': o.show = true; break
      case '-h': case '--help': usage(null, 0); break
      default: usage(`unknown argument ${k}`)
    }
  }
  if (!['note', 'error'].includes(o.varyNon200)) usage('--vary-non200 must be note or error')
  if (!Number.isInteger(o.random) || o.random < 0) usage('--random must be a non-negative integer')
  if (!Number.isFinite(o.seed)) usage('--seed must be a number')
  return o
}

function usage (msg, code = 2) {
  if (msg) process.stderr.write(`compare.mjs: ${msg}\n`)
  process.stderr.write(
    'usage: node test/drf-reference/compare.mjs --a URL --b URL [--cases FILE] [--with-builtin]\n' +
    '         [--random N --seed S] [--host testserver] [--filter REGEX] [--concurrency 4]\n' +
    '         [--max-print 50] [--timeout 15000] [--vary-non200 note|error] [--json-report FILE]\n' +
    '         [--replica-known]   (B is the replica: its documented differences do not fail the run)\n' +
    '       node test/drf-reference/compare.mjs --a URL --show [--filter REGEX]   (print A\'s answers)\n' +
    '       node test/drf-reference/compare.mjs --list [--random N --seed S]     (print the cases as JSON)\n')
  process.exit(code)
}

function parseOrigin (s) {
  const u = new URL(s)
  if (u.protocol !== 'http:') usage(`only http:// servers are supported: ${s}`)
  return { hostname: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80), label: s }
}

// ---------------------------------------------------------------- cases
//
// A case: { name, method = 'GET', target, headers?: [[name, value], ...] | {name: value},
//           body?: string, note?: string, informational?: true }
// Host defaults to --host; give Host: null to send no Host header at all.
// informational: differences are reported as notes (e.g. CORS preflight, which
// the replica leaves to @fastify/cors and the reference does not model).

function q (s) { return P + s }

function builtinCases () {
  const c = []
  const add = (name, target, extra = {}) => c.push({ name, method: 'GET', target, ...extra })

  // ---- basics and the envelope
  add('plain', P)
  add('empty-query', q('?'))
  add('all-items-limit-100', q('?limit=100'))
  add('documented-example', q('?zeta=1&companies=7&offset=10'))
  add('es', '/es/api/internal/explore/')
  add('pt-br-region-segment', '/pt-br/api/internal/explore/?limit=5&offset=5')
  add('fr-empty-language', '/fr/api/internal/explore/')
  add('fr-empty-language-offset', '/fr/api/internal/explore/?offset=5&companies=7')

  // ---- companies
  for (const [n, v] of [
    ['7', '7'], ['12', '12'], ['3', '3'], ['0', '0'], ['unknown-id', '999'], ['large-id', '123456789012'],
    ['30-digits', '9'.repeat(30)], ['leading-zeros', '007'], ['zero-padded-zero', '000']
  ]) add(`companies-${n}`, q(`?companies=${v}`))
  add('companies-7-paged', q('?companies=7&limit=5&offset=5'))
  add('companies-unknown-id-paged', q('?companies=999&limit=5&offset=5'))
  add('companies-blank', q('?companies='))
  add('companies-no-equals', q('?companies'))
  add('companies-no-equals-next-link', q('?companies&limit=2'))
  add('companies-blank-then-7', q('?companies=&companies=7'))
  add('companies-7-then-blank', q('?companies=7&companies=&limit=3'))
  add('companies-union-7-12', q('?companies=7&companies=12&limit=100'))
  add('companies-union-12-7', q('?companies=12&companies=7&limit=100'))
  add('companies-union-dup', q('?companies=7&companies=7&limit=100'))
  add('companies-union-3-paged', q('?companies=7&companies=3&companies=12&limit=5&offset=5'))
  add('companies-union-with-unknown', q('?companies=999&companies=3'))
  add('companies-union-link-order', q('?companies=12&zeta=&companies=7&limit=3&offset=3'))
  for (const [n, v] of [
    ['abc', 'abc'], ['plus7-encoded', '%2B7'], ['plus7-literal-is-space', '+7'], ['space7', '%207'],
    ['7space', '7%20'], ['7.0', '7.0'], ['minus1', '-1'], ['fullwidth1', '%EF%BC%91'],
    ['arabic-indic-3', '%D9%A3'], ['underscore', '1_0'], ['hex', '0x7'], ['newline', '7%0A'],
    ['ff-byte', '%FF'], ['7e0', '7e0'], ['comma-list', '7,12'], ['nul', '%00'], ['only-space', '%20'],
    ['only-plus', '+'], ['tab', '%09'], ['nbsp7', '%C2%A07'], ['superscript2', '%C2%B2'],
    ['30-digit-plus', '%2B' + '9'.repeat(30)]
  ]) add(`companies-bad-${n}`, q(`?companies=${v}`))
  add('companies-valid-then-bad', q('?companies=7&companies=abc'))
  add('companies-bad-then-valid', q('?companies=abc&companies=7'))
  add('companies-blank-then-bad', q('?companies=&companies=x'))
  add('companies-bad-and-bad-limit', q('?companies=x&limit=abc&offset=-1'))
  add('companies-encoded-key-bad', q('?compan%69es=abc'))
  add('companies-encoded-key-ok', q('?compan%69es=7&limit=2'))
  add('companies-uppercase-key', q('?Companies=abc&limit=2'))
  add('companies-bracket-key', q('?companies[]=abc&limit=2'))

  // ---- limit
  for (const [n, v] of [
    ['0', '0'], ['minus1', '-1'], ['abc', 'abc'], ['blank', ''], ['1', '1'], ['5', '5'], ['9', '9'],
    ['10', '10'], ['11', '11'], ['99', '99'], ['100', '100'], ['101', '101'], ['1000', '1000'],
    ['30-digits', '9'.repeat(30)], ['leading-zeros', '007'], ['zero-padded-zero', '000'],
    ['plus-encoded', '%2B5'], ['plus-literal', '+5'], ['space5', '%205'], ['5space', '5%20'],
    ['5.0', '5.0'], ['fullwidth', '%EF%BC%95'], ['arabic-indic', '%D9%A5'], ['underscore', '1_0'],
    ['newline', '5%0A'], ['ff', '%FF'], ['minus0', '-0'], ['1e1', '1e1']
  ]) add(`limit-${n}`, q(`?limit=${v}&offset=10`))
  add('limit-no-equals', q('?limit&offset=10'))
  add('limit-repeated-last-wins', q('?limit=5&limit=3'))
  add('limit-repeated-last-bad', q('?limit=3&limit=abc'))
  add('limit-repeated-last-blank', q('?limit=3&limit='))
  add('limit-encoded-key', q('?%6Cimit=2'))
  add('limit-above-max-with-offset', q('?limit=500&offset=20'))
  add('limit-30-digits-offset-30-digits', q(`?limit=${'9'.repeat(30)}&offset=${'9'.repeat(30)}`))

  // ---- offset
  for (const [n, v] of [
    ['0', '0'], ['minus1', '-1'], ['abc', 'abc'], ['blank', ''], ['1', '1'], ['5', '5'], ['9', '9'],
    ['10', '10'], ['11', '11'], ['15', '15'], ['20', '20'], ['47', '47'], ['50', '50'],
    ['56', '56'], ['57-count', '57'], ['58', '58'], ['1000', '1000'], ['30-digits', '9'.repeat(30)],
    ['leading-zeros', '0015'], ['plus-encoded', '%2B5'], ['space5', '%205'], ['5.0', '5.0'],
    ['fullwidth', '%EF%BC%95'], ['underscore', '1_5'], ['newline', '15%0A'], ['minus0', '-0']
  ]) add(`offset-${n}`, q(`?offset=${v}`))
  add('offset-repeated-last-wins', q('?offset=5&offset=20'))
  add('offset-repeated-last-bad', q('?offset=20&offset=x'))
  add('offset-not-multiple', q('?offset=3&limit=2'))
  add('offset-not-multiple-prev-remove', q('?offset=7&limit=10'))
  add('offset-equals-limit', q('?offset=4&limit=4'))
  add('offset-past-count-with-limit', q('?offset=60&limit=5'))
  add('offset-past-count-companies', q('?companies=3&offset=30'))
  add('offset-30-digits-limit-3', q(`?offset=${'1'.repeat(30)}&limit=3`))
  add('offset-encoded-key', q('?offs%65t=2&limit=2'))
  add('offset-only-last-page', q('?offset=50'))

  // ---- limit and offset read by Python's int() (DRF's _positive_int): spaces as
  // str.isspace() has them but \x1c-\x1f, one sign, `_` between digits, any Unicode Nd digit;
  // the links carry the number read. A literal `+` in a query is a space.
  const intValues = [
    ['plus-zero-underscore', '%2B0_5'], ['plus-literal-both-sides', '+5+'], ['tab-cr-lf', '%095%0D%0A'],
    ['vt-ff', '%0B5%0C'], ['nbsp', '%C2%A05'], ['nel', '%C2%855'], ['ideographic-space', '%E3%80%805%E3%80%80'],
    ['em-space', '%E2%80%835'], ['line-separator', '5%E2%80%A8'], ['ogham-space', '%E1%9A%805'],
    ['devanagari-2', '%E0%A5%A8'], ['arabic-indic-12', '%D9%A1%D9%A2'], ['extended-arabic-7', '%DB%B7'],
    ['fullwidth-underscore', '%EF%BC%91_%EF%BC%92'], ['mixed-scripts', '1%D9%A2'], ['math-bold-7', '%F0%9D%9F%95'],
    ['raw-utf8-arabic-indic', '\u0665'], ['minus-arabic-indic', '-%D9%A5'], ['minus-30-digits', '-' + '9'.repeat(30)],
    ['4300-digits', '7'.repeat(4300)], ['4301-digits', '7'.repeat(4301)], ['4301-zeros', '0'.repeat(4301)],
    ['not-0x10', '0x10'], ['not-1e3', '1e3'], ['not-1.0', '1.0'], ['not-minus-minus', '--1'],
    ['not-plus-space-1', '%2B+1'], ['not-plus-pct20-1', '%2B%201'], ['not-lead-underscore', '_1'],
    ['not-trail-underscore', '1_'], ['not-double-underscore', '1__0'], ['not-superscript', '%C2%B2'],
    ['not-circled', '%E2%91%A4'], ['not-fs-1c', '%1C5'], ['not-us-1f', '5%1F'], ['not-nul', '5%00'],
    ['not-bom', '%EF%BB%BF5'], ['not-zwsp', '%E2%80%8B5'], ['not-kawi-unicode-15', '%F0%91%BD%95'],
    ['not-only-plus', '+'], ['not-sign-only', '%2B'], ['not-minus-only', '-']
  ]
  for (const [n, v] of intValues) add(`int-limit-${n}`, q(`?limit=${v}&offset=10`))
  for (const [n, v] of intValues) add(`int-offset-${n}`, q(`?offset=${v}`))
  add('int-brief-example', q('?offset=+0_5'))
  add('int-both-normalised', q('?limit=%2B0_5&offset=+%D9%A1%D9%A5'))
  add('int-offset-huge-arabic-indic', q(`?offset=${'%D9%A9'.repeat(25)}&limit=%2B3`))
  add('int-repeated-last-wins', q('?offset=%D9%A5&limit=%2B3&offset=%2B7&limit=%C2%B2'))

  // ---- unknown parameters and link re-encoding
  add('unknown-blank-kept', q('?a=&b=1&offset=10'))
  add('unknown-no-equals-kept', q('?flag&offset=10'))
  add('unknown-plus-space', q('?q=hello+world&offset=10'))
  add('unknown-pct20-space', q('?q=hello%20world&offset=10'))
  add('unknown-pct2B-plus', q('?q=a%2Bb&offset=10'))
  add('unknown-utf8-escaped', q('?q=%C3%A9t%C3%A9&offset=10'))
  add('unknown-utf8-raw-bytes', q('?q=\u00e9t\u00e9&offset=10'))
  add('unknown-cjk-emoji', q('?q=%E5%B7%A5%F0%9F%98%80&offset=10'))
  add('unknown-ff-value', q('?q=%FF&offset=10'))
  add('unknown-ff-key', q('?%FF=1&offset=10'))
  add('unknown-overlong-utf8', q('?q=%C0%AF&offset=10'))
  add('unknown-repeat-order-kept', q('?b=2&a=1&b=1&offset=10'))
  add('unknown-key-sorting', q('?Z=1&a=1&_=1&~=1&%C3%A9=1&A=1&0=1&offset=20'))
  add('unknown-key-sorting-with-companies', q('?zz=1&companies=7&aa=2&companies=12&limit=3&offset=3'))
  add('unknown-semicolon', q('?x=1;y=2&offset=10'))
  add('unknown-semicolon-limit', q('?limit=2;offset=4'))
  add('unknown-empty-pairs', q('?a=1&&b=2&&offset=10'))
  add('unknown-empty-key', q('?=x&offset=10'))
  add('unknown-double-equals', q('?a=b=c&offset=10'))
  add('unknown-bad-percent', q('?x=%&offset=10'))
  add('unknown-bad-percent-G', q('?x=%G1&offset=10'))
  add('unknown-truncated-percent', q('?offset=10&x=%2'))
  add('unknown-space-in-key', q('?k%20ey=1&k+ey2=2&offset=10'))
  add('unknown-reserved-chars', q("?x=a/b?c:d@e!$'()*,&offset=10"))
  add('unknown-encoded-ampersand-equals', q('?x=a%26b%3Dc&offset=10'))
  add('unknown-tilde-star-dash', q('?x=~*-._&offset=10'))
  add('unknown-hash-in-target', q('?x=1#frag&offset=10'), {
    informational: true,
    note: 'server-dependent: Python http.server keeps "#frag..." in QUERY_STRING, gunicorn drops the fragment'
  })
  add('unknown-lowercase-escapes', q('?x=%c3%a9&offset=10'))
  add('unknown-nul', q('?x=%00&offset=10'))
  add('unknown-newline-value', q('?x=a%0D%0Ab&offset=10'))
  add('unknown-long-value', q(`?x=${'v'.repeat(6000)}&offset=10`))
  add('unknown-format-json-kept', q('?format=json&limit=2'))
  add('unknown-only-no-links', q('?zeta=1'))

  // ---- format / content negotiation by query
  add('format-json', q('?format=json'))
  add('format-api', q('?format=api'))
  add('format-blank', q('?format='))
  add('format-xml', q('?format=xml'))
  add('format-JSON-upper', q('?format=JSON'))
  add('format-api-unknown-lang', '/de/api/internal/explore/?format=api')
  add('format-api-bad-companies', q('?format=api&companies=x'))

  // ---- Accept header
  const accepts = [
    ['star', '*/*'], ['json', 'application/json'], ['html', 'text/html'], ['empty', ''],
    ['json-indent4', 'application/json; indent=4'], ['application-star', 'application/*'],
    ['html-then-json', 'text/html, application/json;q=0.9'], ['json-q0', 'application/json; q=0'],
    ['xml', 'application/xml'], ['text-star', 'text/*'], ['json-charset', 'application/json; charset=utf-8'],
    ['json-upper', 'APPLICATION/JSON'], ['json-indent-abc', 'application/json; indent=abc'],
    ['json-indent0', 'application/json; indent=0'], ['json-indent20', 'application/json; indent=20'],
    ['browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['garbage', ';;;'], ['json-ld', 'application/ld+json'], ['json-indent2-q', 'application/json; indent=2; q=0.5'],
    ['json-indent-plus', 'application/json; indent=+3'], ['json-indent-underscore', 'application/json; indent=0_3'],
    ['json-indent-float', 'application/json; indent=3.0'], ['json-indent-huge', `application/json; indent=${'9'.repeat(30)}`],
    ['json-indent-negative-huge', `application/json; indent=-${'9'.repeat(30)}`],
    // Quotes keep a `;` inside a parameter; the replica reads the header in one walk (ADR 037).
    ['json-quoted-semicolon', 'application/json; x=";"; indent=3'], ['json-unmatched-quote', 'application/json; x="; indent=3'],
    ['json-indent-quoted', 'application/json; indent="5"'], ['quotes-and-semicolons', `"${';""'.repeat(1000)}`],
    ['commas-then-json', `${','.repeat(1000)}application/json; indent=2`], ['json-many-params', `application/json${';a=b'.repeat(500)};indent=6`]
  ]
  for (const [n, v] of accepts) add(`accept-${n}`, q('?limit=2&offset=2'), { headers: { Accept: v } })
  add('accept-none', q('?limit=2'), { headers: { Accept: null } })
  add('accept-html-bad-companies', q('?companies=x'), { headers: { Accept: 'text/html' } })
  add('accept-html-unknown-lang', '/de/api/internal/explore/', { headers: { Accept: 'text/html' } })
  add('accept-html-other-path', '/nope/', { headers: { Accept: 'text/html' } })
  add('accept-html-no-slash', '/en/api/internal/explore', { headers: { Accept: 'text/html' } })
  add('accept-html-post', P, { method: 'POST', headers: { Accept: 'text/html' } })
  add('accept-html-options', P, { method: 'OPTIONS', headers: { Accept: 'text/html' } })
  add('accept-html-head', P, { method: 'HEAD', headers: { Accept: 'text/html' } })
  add('accept-indent-format-json', q('?format=json&limit=1'), { headers: { Accept: 'application/json; indent=4' } })
  add('accept-html-format-json', q('?format=json&limit=1'), { headers: { Accept: 'text/html' } })

  // ---- methods
  add('head', P, { method: 'HEAD' })
  add('head-query', q('?companies=7&limit=3&offset=3'), { method: 'HEAD' })
  add('head-bad-companies', q('?companies=x'), { method: 'HEAD' })
  add('head-unknown-lang', '/de/api/internal/explore/', { method: 'HEAD' })
  add('head-other-path', '/nope', { method: 'HEAD' })
  add('head-no-slash', '/en/api/internal/explore?limit=1', { method: 'HEAD' })
  add('options', P, { method: 'OPTIONS' })
  add('options-query', q('?companies=abc&limit=x'), { method: 'OPTIONS' })
  add('options-unknown-lang', '/de/api/internal/explore/', { method: 'OPTIONS' })
  add('options-other-path', '/nope/', { method: 'OPTIONS' })
  add('options-no-slash', '/en/api/internal/explore', { method: 'OPTIONS' })
  add('options-acrm-without-origin', P, { method: 'OPTIONS', headers: { 'Access-Control-Request-Method': 'GET' } })
  add('options-cors-preflight', P, {
    method: 'OPTIONS',
    headers: { Origin: 'https://example.org', 'Access-Control-Request-Method': 'GET' },
    informational: true,
    note: 'CORS preflights are answered by @fastify/cors; the reference does not model CORS'
  })
  add('get-with-origin', q('?limit=1'), {
    headers: { Origin: 'https://example.org' },
    informational: true,
    note: 'CORS headers (and Vary: Origin) come from @fastify/cors; the reference has no CORS'
  })
  for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    add(`${m.toLowerCase()}`, P, { method: m })
    add(`${m.toLowerCase()}-json-body`, P, { method: m, headers: { 'Content-Type': 'application/json' }, body: '{"a":1}' })
    add(`${m.toLowerCase()}-bad-json-body`, P, { method: m, headers: { 'Content-Type': 'application/json' }, body: '{bad' })
    add(`${m.toLowerCase()}-unknown-lang`, '/de/api/internal/explore/', { method: m })
    add(`${m.toLowerCase()}-other-path`, '/nope/', { method: m })
    add(`${m.toLowerCase()}-no-slash`, '/en/api/internal/explore?limit=2', { method: m })
  }
  add('post-form-body', P, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'a=1' })
  add('post-bad-companies', q('?companies=x'), { method: 'POST' })
  add('trace', P, { method: 'TRACE' })
  add('custom-method', P, { method: 'PROPFIND' })
  add('get-with-body', q('?limit=1'), { headers: { 'Content-Type': 'application/json' }, body: '{bad' })

  // ---- trailing slash redirect
  add('no-slash', '/en/api/internal/explore')
  add('no-slash-query', '/en/api/internal/explore?companies=7&limit=2')
  add('no-slash-query-odd', '/en/api/internal/explore?q=%C3%A9+x%20y&b=%FF&companies=abc')
  add('no-slash-empty-query', '/en/api/internal/explore?')
  add('no-slash-unknown-lang', '/de/api/internal/explore')
  add('no-slash-bad-lang', '/EN/api/internal/explore')
  add('no-slash-parent', '/en/api/internal')
  add('no-slash-encoded-e', '/%65n/api/internal/explore?limit=1')
  add('no-slash-host', '/en/api/internal/explore?limit=1', { headers: { Host: 'example.com:8080' } })

  // ---- languages and other paths
  add('unknown-lang', '/de/api/internal/explore/')
  add('unknown-lang-region', '/zz-abcd/api/internal/explore/')
  add('unknown-lang-bad-companies', '/de/api/internal/explore/?companies=abc')
  add('bad-lang-uppercase', '/EN/api/internal/explore/')
  add('bad-lang-mixed-region', '/pt-BR/api/internal/explore/')
  add('bad-lang-long-region', '/zz-abcde/api/internal/explore/')
  add('bad-lang-one-letter', '/e/api/internal/explore/')
  add('bad-lang-three-letters', '/eng/api/internal/explore/')
  add('bad-lang-underscore', '/pt_br/api/internal/explore/')
  add('bad-lang-digits', '/e1/api/internal/explore/')
  for (const [n, t] of [
    ['root', '/'], ['lang-root', '/en/'], ['api', '/en/api/'], ['internal', '/en/api/internal/'],
    ['no-lang', '/api/internal/explore/'], ['extra-segment', '/en/api/internal/explore/x/'],
    ['double-slash-middle', '/en//api/internal/explore/'],
    ['double-slash-end', '/en/api/internal/explore//'], ['encoded-e', '/%65n/api/internal/explore/?limit=2'],
    ['encoded-slash', '/en/api/internal/explore%2F'], ['encoded-slash-end', '/en/api/internal/explore/%2F'],
    ['dot-segment', '/en/api/internal/x/../explore/'], ['dot', '/en/api/internal/./explore/'],
    ['json-suffix', '/en/api/internal/explore.json'], ['index', '/en/api/internal/explore/index.html'],
    ['favicon', '/favicon.ico'], ['accented', '/en/api/internal/explor%C3%A9/'],
    ['uppercase-path', '/en/API/internal/explore/'], ['trailing-dot', '/en/api/internal/explore/.'],
    ['semicolon-path', '/en/api/internal/explore/;x=1'], ['no-slash-other', '/nope'],
    ['other-with-query', '/nope/?companies=abc'],
    ['raw-utf8-path', '/en/api/internal/explor\u00e9/'],
    ['long-path', '/' + 'a'.repeat(3000) + '/']
  ]) add(`path-${n}`, t)
  // request-target forms whose handling belongs to the HTTP server in front of Django
  const serverDependent = 'server-dependent: decided by the HTTP server in front of Django (here Python http.server)'
  add('path-double-slash-start', '//en/api/internal/explore/', {
    informational: true, note: serverDependent + ', which collapses a leading "//" to "/"; gunicorn would 404'
  })
  add('path-asterisk', '*', { informational: true, note: serverDependent })
  add('path-absolute-form', 'http://testserver/en/api/internal/explore/?limit=1', {
    informational: true, note: serverDependent + ', which does not understand absolute-form; gunicorn would serve the path'
  })

  // ---- Host header and forwarding headers (links echo the host)
  const hosts = [
    ['with-port', 'example.com:8080'], ['uppercase', 'EXAMPLE.com'], ['ipv4', '127.0.0.1'],
    ['ipv6', '[::1]:8000'], ['trailing-dot', 'example.com.'], ['underscore', 'bad_host'],
    ['space', 'a b'], ['empty', ''], ['bad-port', 'host:abc'], ['two-colons', 'a:1:2'],
    ['long', 'h'.repeat(300) + '.example'], ['userinfo', 'user@example.com'], ['utf8', 'ex\u00e4mple.com'],
    ['comma', 'a.com,b.com'], ['slash', 'a.com/x'], ['port-only', ':80'], ['port-0', 'example.com:0'],
    ['dash-start', '-example.com']
  ]
  for (const [n, v] of hosts) add(`host-${n}`, q('?limit=2&offset=2'), { headers: { Host: v } })
  add('host-missing', q('?limit=2&offset=2'), {
    headers: { Host: null },
    informational: true,
    note: 'without a Host header the link host is server-specific (each server\'s own address)'
  })
  add('host-underscore-other-path', '/nope/', { headers: { Host: 'bad_host' } })
  add('host-underscore-no-slash', '/en/api/internal/explore', { headers: { Host: 'bad_host' } })
  add('host-underscore-options', P, { method: 'OPTIONS', headers: { Host: 'bad_host' } })
  add('host-underscore-post', P, { method: 'POST', headers: { Host: 'bad_host' } })
  add('host-underscore-no-links', q('?limit=100'), { headers: { Host: 'bad_host' } })
  add('host-duplicate', q('?limit=2&offset=2'), { headers: [['Host', 'a.example'], ['Host', 'b.example']] })
  add('x-forwarded-host-proto', q('?limit=2&offset=2'), {
    headers: { 'X-Forwarded-Host': 'proxy.example', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Port': '8443' }
  })
  add('x-forwarded-host-list', q('?limit=2&offset=2'), { headers: { 'X-Forwarded-Host': 'a.example, b.example', 'X-Forwarded-Proto': 'https, http' } })
  add('forwarded-rfc7239', q('?limit=2&offset=2'), { headers: { Forwarded: 'for=1.2.3.4;host=proxy.example;proto=https' } })

  // ---- query size (Django: DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000)
  const tooMany = {
    informational: true,
    note: 'Django 3.2 answers >1000 query fields with a 500: TooManyFieldsSent is logged to django.security, ' +
      'whose default mail_admins handler re-reads request.GET and crashes; without that handler it is a 400 ' +
      'text/html "Bad Request (400)" page (README.md here, "Query size"). Decide deliberately.'
  }
  add('fields-999', q('?' + Array(999).fill('x=1').join('&')))
  add('fields-1000', q('?' + Array(1000).fill('x=1').join('&')))
  add('fields-1000-next-link', q('?limit=2&' + Array(999).fill('x=').join('&')))
  add('fields-1001', q('?' + Array(1001).fill('x=1').join('&')), tooMany)
  add('fields-1001-with-companies-first', q('?companies=abc&' + Array(1000).fill('x=1').join('&')), tooMany)
  add('fields-1001-unknown-lang', '/de/api/internal/explore/?' + Array(1001).fill('x=1').join('&'), tooMany)
  add('fields-1001-options', q('?' + Array(1001).fill('x=1').join('&')), { method: 'OPTIONS', ...tooMany })
  add('fields-1001-post', q('?' + Array(1001).fill('x=1').join('&')), { method: 'POST', ...tooMany })
  add('fields-1001-empty-pairs', q('?' + Array(1002).fill('').join('&')), tooMany)
  add('fields-1001-no-slash', '/en/api/internal/explore?' + Array(1001).fill('x=1').join('&'))
  add('fields-1001-other-path', '/nope/?' + Array(1001).fill('x=1').join('&'))
  add('fields-1001-accept-html', q('?' + Array(1001).fill('x=1').join('&')), { headers: { Accept: 'text/html' }, ...tooMany })
  add('fields-1001-semicolons', q('?' + Array(1001).fill('x=1').join(';')))
  add('fields-600-limit-then-other', q('?' + Array(600).fill('limit=2').join('&') + '&offset=4'))

  return c
}

// ---------------------------------------------------------------- random cases

function mulberry32 (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function randomCases (n, seed) {
  const rnd = mulberry32(seed)
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)]
  const weighted = (pairs) => {
    const total = pairs.reduce((s, [w]) => s + w, 0)
    let x = rnd() * total
    for (const [w, v] of pairs) { if ((x -= w) < 0) return v }
    return pairs[pairs.length - 1][1]
  }
  const intBelow = (k) => Math.floor(rnd() * k)

  const companyValues = [
    [10, ['7', '12', '3', '0', '999', '123456789012']], [3, ['', '007', '9'.repeat(25)]],
    [2, ['abc', '%2B7', '+7', '%207', '7.0', '-1', '%EF%BC%91', '%D9%A3', '1_0', '%FF', '7,12', '%20']]
  ]
  const limitValues = [
    [10, ['1', '2', '3', '5', '10', '7', '25', '100']], [4, ['0', '101', '1000', '007', '', '9'.repeat(30)]],
    [3, ['-1', 'abc', '%2B5', '+5', '5.0', '%EF%BC%95', '1_0', '5%0A', '-0', '%D9%A5', '%C2%A05', '%2B0_5', '1__0']]
  ]
  const offsetValues = [
    [10, ['0', '1', '2', '5', '9', '10', '13', '20', '28', '50', '56', '57']], [4, ['58', '100', '0015', '', '9'.repeat(30)]],
    [3, ['-1', 'abc', '%2B5', '+5', '5.0', '%EF%BC%95', '1_5', '-0', '%D9%A5', '%C2%A05', '%2B0_5', '1__0']]
  ]
  const unknownKeys = ['zeta', 'a', 'Z', '_', '~', 'q', 'page', 'format', '%C3%A9', 'k%20ey', 'k+ey', '%FF', 'x[]', 'companies_', 'LIMIT', '']
  const unknownValues = ['', '1', 'hello+world', 'hello%20world', 'a%2Bb', '%C3%A9', '%FF', 'a=b', '%', '%2', '~*-._', 'x%26y', '\u00e9', 'json', 'api']
  const encodeKey = (k) => {
    // percent-encode one character of a known key, sometimes
    if (rnd() < 0.85) return k
    const i = intBelow(k.length)
    return k.slice(0, i) + '%' + k.charCodeAt(i).toString(16).toUpperCase().padStart(2, '0') + k.slice(i + 1)
  }

  const out = []
  for (let i = 0; i < n; i++) {
    const method = weighted([[70, 'GET'], [10, 'HEAD'], [5, 'OPTIONS'], [3, 'POST'], [2, 'PUT'], [2, 'PATCH'], [2, 'DELETE'], [1, 'TRACE']])
    const path = weighted([
      [72, P], [6, '/en/api/internal/explore'], [5, '/es/api/internal/explore/'], [4, '/pt-br/api/internal/explore/'],
      [2, '/fr/api/internal/explore/'], [4, '/de/api/internal/explore/'], [2, '/EN/api/internal/explore/'],
      [2, '/%65n/api/internal/explore/'], [2, '/en/api/internal/explore/x/'], [1, '/']
    ])
    const params = []
    const nParams = weighted([[10, 0], [20, 1], [25, 2], [20, 3], [15, 4], [10, 6]])
    for (let j = 0; j < nParams; j++) {
      const kind = weighted([[30, 'companies'], [25, 'limit'], [25, 'offset'], [20, 'unknown']])
      if (kind === 'unknown') {
        const k = pick(unknownKeys)
        const v = pick(unknownValues)
        params.push(rnd() < 0.1 ? k : `${k}=${v}`)
      } else {
        const pool = weighted(kind === 'companies' ? companyValues : kind === 'limit' ? limitValues : offsetValues)
        params.push(`${encodeKey(kind)}=${pick(pool)}`)
      }
    }
    let sep = '&'
    if (rnd() < 0.03) sep = '&&'
    let target = path
    if (params.length) target += '?' + params.join(sep)
    else if (rnd() < 0.05) target += '?'
    const headers = {}
    const accept = weighted([[50, undefined], [15, '*/*'], [15, 'application/json'], [3, 'text/html'], [3, ''],
      [3, 'application/json; indent=2'], [3, 'application/*'], [2, 'application/xml'], [2, 'text/html, */*;q=0.1']])
    if (accept !== undefined) headers.Accept = accept
    const host = weighted([[90, undefined], [4, 'example.com:8080'], [3, 'EXAMPLE.com'], [2, 'bad_host'], [1, '[::1]:8000']])
    if (host !== undefined) headers.Host = host
    if (rnd() < 0.03) { headers['X-Forwarded-Host'] = 'proxy.example'; headers['X-Forwarded-Proto'] = 'https' }
    out.push({ name: `random-${seed}-${i}`, method, target, headers })
  }
  return out
}

// ---------------------------------------------------------------- HTTP (raw)

function headerList (c, defaultHost) {
  let list
  if (Array.isArray(c.headers)) list = c.headers.map(([k, v]) => [k, v])
  else list = Object.entries(c.headers || {})
  const hasHost = list.some(([k]) => k.toLowerCase() === 'host')
  if (!hasHost) list.unshift(['Host', defaultHost])
  list = list.filter(([, v]) => v !== null && v !== undefined)
  if (c.body !== undefined && !list.some(([k]) => k.toLowerCase() === 'content-length')) {
    list.push(['Content-Length', String(Buffer.byteLength(c.body))])
  }
  list.push(['Connection', 'close'])
  return list
}

function send (server, c, defaultHost, timeout) {
  const method = c.method || 'GET'
  const head = `${method} ${c.target} HTTP/1.1\r\n` +
    headerList(c, defaultHost).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n'
  const payload = Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(c.body || '', 'utf8')])
  return new Promise((resolve) => {
    const chunks = []
    let done = false
    const sock = net.connect({ host: server.hostname, port: server.port })
    const finish = (err) => {
      if (done) return
      done = true
      clearTimeout(timer)
      sock.destroy()
      const raw = Buffer.concat(chunks)
      if (err && raw.length === 0) resolve({ error: String(err.message || err) })
      else resolve(parseResponse(raw, method, err))
    }
    const timer = setTimeout(() => finish(new Error(`timeout after ${timeout} ms`)), timeout)
    sock.on('connect', () => sock.end(payload))
    sock.on('data', (d) => chunks.push(d))
    sock.on('end', () => finish(null))
    sock.on('close', () => finish(null))
    sock.on('error', (e) => finish(e))
  })
}

function parseResponse (raw, method, err) {
  const sep = raw.indexOf('\r\n\r\n')
  if (sep < 0) return { error: `no complete response head (${raw.length} bytes${err ? ', ' + err.message : ''})`, raw }
  const headText = raw.subarray(0, sep).toString('latin1')
  let rest = raw.subarray(sep + 4)
  const lines = headText.split('\r\n')
  const m = /^HTTP\/(\d\.\d) (\d{3})(?: (.*))?$/.exec(lines[0])
  if (!m) return { error: `bad status line ${JSON.stringify(lines[0])}`, raw }
  const headers = []
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':')
    if (i < 0) continue
    headers.push([line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim()])
  }
  const get = (name) => {
    const v = headers.filter(([k]) => k === name).map(([, x]) => x)
    return v.length ? v.join(', ') : undefined
  }
  const status = Number(m[2])
  const problems = []
  let body = Buffer.alloc(0)
  let headBody = 0
  if (method === 'HEAD' || status === 204 || status === 304) {
    headBody = rest.length
  } else if ((get('transfer-encoding') || '').toLowerCase().includes('chunked')) {
    const parts = []
    let p = 0
    for (;;) {
      const eol = rest.indexOf('\r\n', p)
      if (eol < 0) { problems.push('truncated chunked body'); break }
      const size = parseInt(rest.subarray(p, eol).toString('latin1').split(';')[0], 16)
      if (!Number.isFinite(size)) { problems.push('bad chunk size'); break }
      p = eol + 2
      if (size === 0) break
      parts.push(rest.subarray(p, p + size))
      p += size + 2
    }
    body = Buffer.concat(parts)
  } else if (get('content-length') !== undefined) {
    const cl = Number(get('content-length'))
    body = rest.subarray(0, cl)
    if (rest.length !== cl) problems.push(`Content-Length ${cl} but ${rest.length} body bytes on the wire`)
  } else {
    body = rest
  }
  rest = null
  return {
    httpVersion: m[1],
    status,
    reason: m[3] || '',
    headers,
    get,
    body,
    headBody,
    problems,
    transportError: err ? String(err.message) : null
  }
}

// ---------------------------------------------------------------- diffing

function tryJson (buf) {
  if (!buf || buf.length === 0) return { ok: false }
  try { return { ok: true, value: JSON.parse(buf.toString('utf8')) } } catch { return { ok: false } }
}

function typeOf (v) { return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v }

// Order-sensitive deep diff; returns [{path, kind, a, b}] (at most `max`).
function jsonDiff (a, b, path = '$', out = [], max = 8) {
  if (out.length >= max) return out
  const ta = typeOf(a)
  const tb = typeOf(b)
  if (ta !== tb) { out.push({ path, kind: 'type', a, b }); return out }
  if (ta === 'array') {
    if (a.length !== b.length) out.push({ path: `${path}.length`, kind: 'value', a: a.length, b: b.length })
    for (let i = 0; i < Math.min(a.length, b.length); i++) jsonDiff(a[i], b[i], `${path}[${i}]`, out, max)
    return out
  }
  if (ta === 'object') {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    const onlyA = ka.filter((k) => !Object.hasOwn(b, k))
    const onlyB = kb.filter((k) => !Object.hasOwn(a, k))
    if (onlyA.length || onlyB.length) out.push({ path, kind: 'keys', a: onlyA, b: onlyB })
    else if (ka.join('\u0000') !== kb.join('\u0000')) out.push({ path, kind: 'key-order', a: ka, b: kb })
    for (const k of ka) if (Object.hasOwn(b, k)) jsonDiff(a[k], b[k], `${path}.${k}`, out, max)
    return out
  }
  if (!Object.is(a, b)) out.push({ path, kind: 'value', a, b })
  return out
}

const trunc = (s, n = 300) => {
  s = typeof s === 'string' ? s : JSON.stringify(s)
  if (s === undefined) return 'undefined'
  return s.length > n ? s.slice(0, n) + `…(${s.length} chars)` : s
}
const showBytes = (buf, n = 300) => trunc(JSON.stringify(buf.toString('utf8')), n)

function varyTokens (v) {
  return (v || '').split(',').map((t) => t.trim().toLowerCase()).filter(Boolean).sort().join(',')
}

// The replica's deliberate differences from Django (docs/reference/http-api.md#where-the-replica-knowingly-differs-from-django),
// recognised only where B gives exactly the documented answer: with --replica-known they are counted as
// `known`, not as differences, so the exit code reports anything else.
const INVALID_HOST = '{"detail":"Invalid Host header."}'
const TOO_MANY_FIELDS = '{"detail":"The number of GET/POST parameters exceeded 1000."}'
const NODE_REFUSED = '{"detail":"Bad Request."}'
const REPLICA_DESCRIPTION = 'Articles and stories linked to a company, newest first.'
// A known difference answers another status, type and body; Allow follows the status (no Allow on a 400).
const KNOWN_CATEGORIES = new Set(['status', 'header-allow', 'header-content-type', 'header-content-length', 'header-location', 'body', 'body-format', 'body-raw', 'body-key-order'])

/** Which documented difference explains the whole case, or null. */
function knownDifference (c, A, B) {
  // B gave this documented answer: its body, or on HEAD (no body) its Content-Length and JSON type.
  const answered = (expected) => (c.method || 'GET') === 'HEAD'
    ? B.get('content-length') === String(Buffer.byteLength(expected)) && /^application\/json/.test(B.get('content-type') || '')
    : (B.body ? B.body.toString('utf8') : '') === expected
  const aHtml = /^text\/html/.test(A.get('content-type') || '')
  if (B.status === 400 && answered(INVALID_HOST) && A.status === 400 && aHtml) return 'a bad Host header: JSON, where Django writes an HTML page'
  if (B.status === 400 && answered(TOO_MANY_FIELDS) && (A.status === 400 || A.status === 500) && aHtml) return 'over 1,000 query fields: JSON, where Django writes an HTML page'
  // Node's HTTP parser refuses a request target with raw (unencoded) bytes over 0x7F, whatever Django
  // answers (a page, a 404, a 405…): A's answer is not looked at.
  if (/[^\x00-\x7f]/.test(c.target) && B.status === 400 && answered(NODE_REFUSED)) return 'raw non-ASCII bytes in the request target: refused by Node\'s HTTP parser'
  return null
}

function compareCase (c, A, B, opts) {
  const diffs = []
  const known = opts.replicaKnown && !A.error && !B.error ? knownDifference(c, A, B) : null
  const add = (severity, category, detail) => {
    if (c.informational && severity === 'error') severity = 'note'
    // Only what the documented answer changes: status, type, length and body; anything else still fails.
    else if (severity === 'error' && known !== null && KNOWN_CATEGORIES.has(category)) severity = 'known'
    // The OPTIONS description is the view's docstring in DRF, the replica's own text: only that field,
    // and only when it is the text docs/reference/http-api.md gives.
    else if (severity === 'error' && opts.replicaKnown && (c.method || 'GET') === 'OPTIONS' && category === 'body' &&
      detail.startsWith('$.description (value)') && detail.endsWith(` B=${REPLICA_DESCRIPTION}`)) severity = 'known'
    diffs.push({ severity, category, detail, ...(severity === 'known' ? { reason: known ?? 'the OPTIONS description: the replica\'s own text' } : {}) })
  }
  if (A.error || B.error) {
    if (A.error !== B.error) add('error', 'transport', `A: ${A.error || 'ok'} | B: ${B.error || 'ok'}`)
    return diffs
  }
  for (const [side, R] of [['A', A], ['B', B]]) {
    for (const p of R.problems) add('error', 'framing', `${side}: ${p}`)
    if (R.headBody) add('error', 'head-body', `${side} sent ${R.headBody} body bytes on ${c.method}/${R.status}`)
  }
  if (A.status !== B.status) add('error', 'status', `A=${A.status} B=${B.status}`)

  const isHead = (c.method || 'GET') === 'HEAD'
  const names = ['allow', 'vary', 'content-type', 'location']
  if (isHead) names.push('content-length')
  for (const h of names) {
    const va = A.get(h)
    const vb = B.get(h)
    if (va === vb) continue
    if (h === 'vary' && varyTokens(va) === varyTokens(vb)) {
      add('note', 'header-vary-format', `A=${trunc(va)} B=${trunc(vb)}`)
      continue
    }
    const sev = (h === 'vary' && (A.status !== 200 || B.status !== 200) && opts.varyNon200 === 'note') ? 'note' : 'error'
    add(sev, `header-${h}`, `A=${trunc(va)} B=${trunc(vb)}`)
  }

  if (!isHead) {
    const ja = tryJson(A.body)
    const jb = tryJson(B.body)
    if (ja.ok && jb.ok) {
      const d = jsonDiff(ja.value, jb.value)
      for (const x of d) {
        add('error', x.kind === 'key-order' ? 'body-key-order' : 'body', `${x.path} (${x.kind}): A=${trunc(x.a)} B=${trunc(x.b)}`)
      }
      if (!d.length && !A.body.equals(B.body)) {
        add('note', 'body-bytes', `same JSON, different bytes (A ${A.body.length} B ${B.body.length}): A=${showBytes(A.body, 160)} B=${showBytes(B.body, 160)}`)
      }
    } else if (ja.ok !== jb.ok) {
      add('error', 'body-format', `A ${ja.ok ? 'JSON' : 'not JSON'}: ${showBytes(A.body)} | B ${jb.ok ? 'JSON' : 'not JSON'}: ${showBytes(B.body)}`)
    } else if (!A.body.equals(B.body)) {
      add('error', 'body-raw', `A=${showBytes(A.body)} B=${showBytes(B.body)}`)
    }
  }
  return diffs
}

// ---------------------------------------------------------------- running

async function pool (items, k, fn) {
  const results = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(k, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await fn(items[i], i)
    }
  }))
  return results
}

function describe (c, host) {
  const hs = headerList(c, host).filter(([k]) => k !== 'Connection')
  return `${c.method || 'GET'} ${trunc(c.target, 160)}  [${hs.map(([k, v]) => `${k}: ${trunc(JSON.stringify(v), 60)}`).join('; ')}]` +
    (c.body !== undefined ? `  body=${trunc(JSON.stringify(c.body), 60)}` : '')
}

function showResponse (c, R, host) {
  const lines = [`== ${c.name}: ${describe(c, host)}`]
  if (R.error) { lines.push(`   ERROR ${R.error}`); return lines.join('\n') }
  lines.push(`   ${R.status} ${R.reason}`)
  for (const [k, v] of R.headers) if (!['date', 'server', 'connection'].includes(k)) lines.push(`   ${k}: ${trunc(v, 200)}`)
  if (R.headBody) lines.push(`   (${R.headBody} body bytes after a HEAD/204/304 head)`)
  for (const p of R.problems) lines.push(`   PROBLEM ${p}`)
  if (R.body.length) lines.push(`   body: ${showBytes(R.body, 600)}`)
  return lines.join('\n')
}

async function main () {
  const argv = process.argv.slice(2)
  if (argv.length === 0 && (process.env.TAP === '1' || process.env.TAP_CHILD_ID)) {
    // picked up by `tap` (it runs every *.mjs under test/): not a unit test
    process.stdout.write('1..0 # SKIP differential tool; run it by hand, see test/drf-reference/README.md\n')
    return 0
  }
  const o = parseArgs(argv)

  let cases = []
  if (o.cases) {
    const text = readFileSync(o.cases, 'utf8').trim()
    const loaded = text.startsWith('[') ? JSON.parse(text) : text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    cases.push(...loaded.map((x, i) => ({ name: x.name || `file-${i}`, ...x })))
    if (o.withBuiltin) cases.push(...builtinCases())
  } else {
    cases.push(...builtinCases())
  }
  if (o.random) cases.push(...randomCases(o.random, o.seed))
  if (o.filter) cases = cases.filter((c) => o.filter.test(c.name))

  if (o.list) {
    process.stdout.write(JSON.stringify(cases, null, 1) + '\n')
    return 0
  }
  if (!o.a) usage('--a is required')
  const A = parseOrigin(o.a)

  if (o.show) {
    const res = await pool(cases, o.concurrency, (c) => send(A, c, o.host, o.timeout))
    cases.forEach((c, i) => process.stdout.write(showResponse(c, res[i], o.host) + '\n'))
    return 0
  }
  if (!o.b) usage('--b is required (or use --show)')
  const B = parseOrigin(o.b)

  // fail fast if a server is not there at all
  for (const S of [A, B]) {
    const r = await send(S, { method: 'GET', target: P }, o.host, o.timeout)
    if (r.error) {
      process.stderr.write(`compare.mjs: cannot reach ${S.label}: ${r.error}\n`)
      return 2
    }
  }

  const results = await pool(cases, o.concurrency, async (c) => {
    const [ra, rb] = await Promise.all([send(A, c, o.host, o.timeout), send(B, c, o.host, o.timeout)])
    return { c, ra, rb, diffs: compareCase(c, ra, rb, o) }
  })

  const withErrors = results.filter((r) => r.diffs.some((d) => d.severity === 'error'))
  const withNotesOnly = results.filter((r) => r.diffs.length && !r.diffs.some((d) => d.severity === 'error'))
  const byReason = new Map()
  for (const r of results) {
    const reasons = new Set(r.diffs.filter((d) => d.severity === 'known').map((d) => d.reason))
    for (const reason of reasons) byReason.set(reason, (byReason.get(reason) || 0) + 1)
  }
  const byCat = new Map()
  for (const r of results) {
    for (const d of r.diffs) {
      const key = `${d.severity}:${d.category}`
      byCat.set(key, (byCat.get(key) || 0) + 1)
    }
  }

  const out = []
  out.push(`compare: A=${A.label} B=${B.label} host=${JSON.stringify(o.host)} cases=${cases.length}` +
    (o.random ? ` (random ${o.random}, seed ${o.seed})` : ''))
  const printed = [...withErrors, ...withNotesOnly].slice(0, o.maxPrint)
  for (const r of printed) {
    const sev = r.diffs.some((d) => d.severity === 'error') ? 'DIFF' : 'note'
    out.push(`\n[${sev}] ${r.c.name}: ${describe(r.c, o.host)}` + (r.c.note ? `\n   (${r.c.note})` : ''))
    out.push(`   status A=${r.ra.status ?? r.ra.error} B=${r.rb.status ?? r.rb.error}`)
    for (const d of r.diffs) out.push(`   ${d.severity === 'error' ? '!' : d.severity === 'known' ? '~' : '·'} ${d.category}: ${d.detail}`)
  }
  const rest = [...withErrors, ...withNotesOnly].slice(o.maxPrint)
  if (rest.length) out.push(`\n… ${rest.length} more case(s) with differences: ${rest.map((r) => r.c.name).join(', ')}`)
  out.push('\nsummary:')
  out.push(`  cases ${results.length}, identical ${results.length - withErrors.length - withNotesOnly.length}, ` +
    `with differences ${withErrors.length}, with notes only ${withNotesOnly.length}`)
  for (const [k, n] of [...byCat.entries()].sort()) out.push(`  ${k.padEnd(28)} ${n}`)
  if (byReason.size) {
    out.push('known differences (docs/reference/http-api.md: where the replica knowingly differs), cases:')
    for (const [reason, n] of [...byReason.entries()].sort()) out.push(`  ${String(n).padStart(5)}  ${reason}`)
  }
  process.stdout.write(out.join('\n') + '\n')

  if (o.jsonReport) {
    writeFileSync(o.jsonReport, JSON.stringify(results.filter((r) => r.diffs.length).map((r) => ({
      name: r.c.name,
      method: r.c.method || 'GET',
      target: r.c.target,
      headers: r.c.headers,
      statusA: r.ra.status,
      statusB: r.rb.status,
      diffs: r.diffs
    })), null, 1) + '\n')
  }
  return withErrors.length ? 1 : 0
}

main().then((code) => { process.exitCode = code }, (e) => {
  process.stderr.write(`compare.mjs: ${e.stack || e}\n`)
  process.exitCode = 2
})
