// How many pieces an uncached page is written in, by where the items lie: one per run of items that sit side by
// side in the model. Layouts: `file` (each item once, in the file's order: what the service does), `served`
// (each item once, newest first), one copy per item grouped under one of its companies (`first`, `smallest`,
// `largest` list), newest first in each group. With every item copied under every company it lists under, every
// page is one piece, at the cost the last line prints. The bench's cold pages (ADR 035).
// Usage: npx tsx bench/experiments/page-pieces.ts SNAPSHOT.json (a JSON snapshot with its .meta.json beside it)
import { readFileSync } from 'node:fs'
import { coldWorkload } from '../workloads.js'

interface Item { pk: number, backdate: string, companies: number[] }

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: npx tsx bench/experiments/page-pieces.ts SNAPSHOT.json')
  process.exit(2)
}
const snapshot = JSON.parse(readFileSync(file, 'utf8')) as { languages: Record<string, Item[]> }
const meta = JSON.parse(readFileSync(file.replace(/\.json$/, '.meta.json'), 'utf8'))
const pages = coldWorkload(meta.companies, 100_000, 0, 1).measured

function pushTo (lists: Map<number, number[]>, key: number, item: number): void {
  const list = lists.get(key)
  if (list === undefined) lists.set(key, [item])
  else list.push(item)
}

type Choose = (companies: number[], size: (company: number) => number) => number
const groupedBy: Record<string, Choose> = {
  first: companies => companies[0] as number,
  smallest: (companies, size) => companies.reduce((a, b) => size(b) < size(a) ? b : a),
  largest: (companies, size) => companies.reduce((a, b) => size(b) > size(a) ? b : a)
}

const perLanguage = new Map<string, { lists: Map<number, number[]>, layouts: Map<string, Int32Array> }>()
let items = 0
let listed = 0
for (const [lang, list] of Object.entries(snapshot.languages)) {
  const served = list.map((_, i) => i).sort((a, b) => {
    const x = list[a] as Item
    const y = list[b] as Item
    return x.backdate === y.backdate ? y.pk - x.pk : (x.backdate < y.backdate ? 1 : -1)
  })
  const lists = new Map<number, number[]>()
  for (const i of served) for (const company of (list[i] as Item).companies) pushTo(lists, company, i)
  const size = (company: number): number => lists.get(company)?.length ?? 0
  const positions = (order: number[]): Int32Array => {
    const at = new Int32Array(list.length)
    order.forEach((item, position) => { at[item] = position })
    return at
  }
  const layouts = new Map([['file', positions(list.map((_, i) => i))], ['served', positions(served)]])
  for (const [name, choose] of Object.entries(groupedBy)) {
    const groups = new Map<number, number[]>()
    for (const i of served) {
      const { companies } = list[i] as Item
      const group = companies.length === 0 ? -1 : choose(companies, size)
      pushTo(groups, group, i)
    }
    layouts.set(name, positions([...groups.keys()].sort((a, b) => a - b).flatMap(group => groups.get(group) ?? [])))
  }
  perLanguage.set(lang, { lists, layouts })
  items += list.length
  for (const item of list) listed += item.companies.length
}

const pieces = new Map<string, number>()
let counted = 0
let pageItems = 0
for (const path of pages) {
  const [, lang, company, limit, offset] = /^\/(\w+)\/.*companies=(\d+)&limit=(\d+)&offset=(\d+)/.exec(path) ?? []
  const language = perLanguage.get(lang as string)
  const page = language?.lists.get(Number(company))?.slice(Number(offset), Number(offset) + Number(limit)) ?? []
  if (language === undefined || page.length === 0) continue
  counted++
  pageItems += page.length
  for (const [name, at] of language.layouts) {
    let runs = 1
    for (let i = 1; i < page.length; i++) if (at[page[i] as number] !== (at[page[i - 1] as number] as number) + 1) runs++
    pieces.set(name, (pieces.get(name) ?? 0) + runs)
  }
}
console.log(`${counted} cold pages, ${(pageItems / counted).toFixed(2)} items each; pieces per page by layout:`)
for (const [name, runs] of pieces) console.log(`  ${name}: ${(runs / counted).toFixed(2)}`)
console.log(`every item under every company it lists under: 1 piece a page, ${(listed / items).toFixed(2)}× the items' bytes`)
