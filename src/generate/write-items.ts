// Writes the items of one planned language, one at a time: headlines, abstracts, slugs, images, stories.
import type { SnapshotItem } from '../schemas/snapshot.js'
import { Rng, at } from './random-source.js'
import {
  ANALYSTS, BANKS, IMAGE_SIZES, IMAGE_SUBJECTS, INTERNAL_NOTES, PLACES,
  baseLanguage, bankFor, sectionFor, sourceLanguageWeights, type TextBank
} from './text-banks.js'
import { DAY_MS, SPAN_DAYS, type Context, type LanguagePlan } from './plan-snapshot.js'

interface Fill {
  rng: Rng
  bank: TextBank
  lead: string | undefined
  second: string | undefined
  year: number
  month: number
}

const PLACEHOLDER = /\{(\w+)\}/g

function groupThousands (n: number, separator: string): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, separator)
}

function fill (template: string, f: Fill): string {
  return template.replace(PLACEHOLDER, (_match, key: string) => {
    const value = resolveKey(key, f)
    return value.includes('{') ? fill(value, f) : value
  })
}

function resolveKey (key: string, f: Fill): string {
  const { rng, bank } = f
  switch (key) {
    case 'c': return f.lead ?? 'the company'
    case 'c2': return f.second ?? f.lead ?? 'the company'
    case 'year': return String(f.year)
    case 'lastYear': return String(f.year - 1)
    case 'targetYear': return String(f.year + rng.int(1, 6))
    case 'num': return String(rng.int(3, 60))
    case 'bigNum': return groupThousands(rng.int(12, 950) * 10, bank.thousands)
    case 'pct':
    case 'pct2': return (rng.int(5, 249) / 10).toFixed(1).replace('.', bank.decimal)
    case 'pctInt': return String(rng.int(2, 12) * 5)
    case 'money': return bank.money(rng)
    case 'place':
    case 'place2': return rng.pick(PLACES)
    case 'analyst': return rng.pick(ANALYSTS)
    case 'monthName': return at(bank.vocab.monthName ?? BANKS.en.vocab.monthName, f.month)
    default: {
      const words = bank.vocab[key]
      if (words === undefined) throw new Error(`no words for {${key}} in ${bank.language}`)
      return rng.pick(words)
    }
  }
}

function capitalize (text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

// Django's slugify(allow_unicode=True): accented letters stay as they are, punctuation goes.
function slugify (text: string): string {
  return text.normalize('NFKC').toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\s-]/gu, '')
    .trim()
    .replace(/[-\s]+/gu, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
}

function uniqueSlug (taken: Map<string, number>, base: string): string {
  const seen = taken.get(base)
  if (seen === undefined) {
    taken.set(base, 1)
    return base
  }
  let n = seen + 1
  while (taken.has(`${base}-${n}`)) n++
  taken.set(base, n)
  taken.set(`${base}-${n}`, 1)
  return `${base}-${n}`
}

function headline (f: Fill, linked: number, story: boolean): string {
  const { rng, bank } = f
  if (story && bank.themes !== undefined && bank.storyTitles !== undefined) {
    const theme = rng.pick(bank.themes)
    return fill(rng.pick(bank.storyTitles).replace('{theme}', theme), f)
  }
  const pool = linked >= 2 && rng.chance(0.35)
    ? bank.titles.pair
    : linked >= 1 ? bank.titles.company : bank.titles.none
  return capitalize(tidy(bank, fill(rng.pick(pool), f)))
}

function tidy (bank: TextBank, text: string): string {
  return bank.tidy === undefined ? text : bank.tidy(text)
}

/** n distinct templates from pool (partial Fisher-Yates), filled. */
function sentencesFrom (f: Fill, pool: readonly string[], n: number): string[] {
  const order = Array.from(pool.keys())
  const chosen: string[] = []
  for (let i = 0; i < Math.min(n, pool.length); i++) {
    const j = f.rng.int(i, order.length - 1)
    const picked = order[j] ?? 0
    order[j] = order[i] ?? 0
    order[i] = picked
    chosen.push(tidy(f.bank, fill(at(pool, picked), f)))
  }
  return chosen
}

// Sentence counts tuned so an average item is ~1.4 KB of compact JSON.
const MIN_SENTENCES = 4
const MAX_SENTENCES = 9

function abstractText (f: Fill, linked: boolean): string {
  const { rng, bank } = f
  if (rng.chance(0.07)) return ''
  if (linked && rng.chance(0.1)) {
    // The editor quoted the company's own statement, quotation marks included.
    const [open, close] = rng.pick(bank.quotes)
    return `${open}${sentencesFrom(f, bank.statements, rng.int(2, 4)).join(' ')}${close}`
  }
  const pool = linked ? [...bank.sentences.company, ...bank.sentences.none] : bank.sentences.none
  return sentencesFrom(f, pool, rng.int(MIN_SENTENCES, MAX_SENTENCES)).join(' ')
}

export function * itemsOf (ctx: Context, plan: LanguagePlan): Generator<SnapshotItem> {
  const rng = new Rng(ctx.seed, `items:${plan.code}`)
  const ownBank = bankFor(plan.code)
  const sources = sourceLanguageWeights(plan.code)
  const untranslatedShare = baseLanguage(plan.code) === 'en' ? 0.14 : 0.3
  const storyLanguages = ownBank.themes !== undefined ? [plan.code] : ['en']
  const slugs = new Map<string, number>()
  const { names } = ctx.companies

  for (let i = 0; i < plan.count; i++) {
    const dealt = plan.links[i] ?? []
    const offset = rng.chance(0.3)
      ? plan.burstDays[rng.weighted(plan.burstCumulative)] ?? 0
      // Outside bursts, recent days are busier than old ones.
      : Math.floor(SPAN_DAYS * Math.pow(rng.float(), 1.25))
    const date = new Date((ctx.endDay - offset) * DAY_MS)
    const backdate = date.toISOString().slice(0, 10)

    const untranslated = rng.chance(untranslatedShare)
    const source = untranslated ? at(sources.codes, rng.weighted(sources.cumulative)) : plan.code
    const f: Fill = {
      rng,
      bank: untranslated ? bankFor(source) : ownBank,
      lead: dealt[0] === undefined ? undefined : names[dealt[0]],
      second: dealt[1] === undefined ? undefined : names[dealt[1]],
      year: date.getUTCFullYear(),
      month: date.getUTCMonth()
    }
    const story = rng.chance(0.1)
    const title = headline(f, dealt.length, story)
    const slug = uniqueSlug(slugs, slugify(title))

    // Translations keep the source page's slug, as wagtail-localize does by default.
    const variant = (code: string): SnapshotItem['translated_languages'][number] =>
      ({ language_code: code, language: bankFor(code).language, url: `/${code}/${sectionFor(code)}/${slug}/` })
    const translatedLanguages: SnapshotItem['translated_languages'] = []
    if (untranslated) {
      translatedLanguages.push(variant(source))
      if (rng.chance(0.2)) {
        const other = at(sources.codes, rng.weighted(sources.cumulative))
        if (other !== source) translatedLanguages.push(variant(other))
      }
    }

    const abstract = abstractText(f, dealt.length > 0)

    let displayImage: SnapshotItem['display_image'] = null
    if (!rng.chance(1 / 3)) {
      const [width, height] = rng.pick(IMAGE_SIZES)
      const stamp = rng.int(0, 0xffffff).toString(16).padStart(6, '0')
      displayImage = {
        url: `https://media.example.org/images/${f.year}/${String(f.month + 1).padStart(2, '0')}/${rng.pick(IMAGE_SUBJECTS)}_${stamp}.fill-${width}x${height}.jpg`,
        width,
        height
      }
    }

    const stories: SnapshotItem['stories'] = []
    if (rng.chance(0.13)) {
      const refs = rng.chance(0.3) ? 2 : 1
      const themeCount = BANKS.en.themes.length
      const first = rng.int(0, themeCount - 1)
      for (let r = 0; r < refs; r++) {
        const theme = (first + r * rng.int(1, themeCount - 1)) % themeCount
        // Stories are not always translated: some refs point at another language's version.
        const lang = rng.chance(0.15)
          ? rng.pick(['en', 'es', 'fr'].filter(l => l !== plan.code))
          : rng.pick(storyLanguages)
        const storyTitle = at(bankFor(lang).themes ?? [], theme)
        stories.push({ translated_title: storyTitle, translated_url: `/${lang}/stories/${slugify(storyTitle)}/` })
      }
    }

    const note = baseLanguage(plan.code) === 'en' && rng.chance(0.01) ? rng.pick(INTERNAL_NOTES) : undefined

    yield {
      pk: plan.pks[i] ?? 0,
      is_translated: !untranslated,
      translated_languages: translatedLanguages,
      translated_title: title,
      backdate,
      translated_abstract: abstract,
      display_image: displayImage,
      series: null,
      company_response_summary: { responses: 0, non_responses: 0 },
      company_response_responded: null,
      responded_to_article: null,
      translated_url: `/${plan.code}/${sectionFor(plan.code)}/${slug}/`,
      stories,
      story_item_count: null,
      content_type_display: story ? 'Story' : 'Article',
      untranslated_content_type: story ? 'storypage' : 'articlepage',
      // A field the schema does not know, so the service's forward compatibility gets exercised.
      ...(note === undefined ? {} : { internal_note: note }),
      companies: [...dealt].sort((a, b) => a - b)
    }
  }
}
