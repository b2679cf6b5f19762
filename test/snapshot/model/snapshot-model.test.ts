// The served model (src/snapshot/model/snapshot-model.ts) and its lists: pages newest first, by company and by unions
// of companies, items as the original's bytes; a derived version's lists (overlay.ts) read as the plain arrays their
// changes make; the thread's cache of unions (union-cache.ts), bounded in bytes.
import t from 'tap'
import fc from 'fast-check'
import { renderItem } from '../../../src/snapshot/model/item-bytes.js'
import { Overlay } from '../../../src/snapshot/model/overlay.js'
import type { PageItems } from '../../../src/snapshot/model/snapshot-model.js'
import { UnionCache, unionCache } from '../../../src/snapshot/model/union-cache.js'
import { askMany, buildTestApp, EXPLORE, makeItem, modelOf, smallSnapshot, type SnapshotDoc } from '../../helpers.js'
import { runs } from '../../property-runs.js'

// src/snapshot/model/snapshot-model.ts: pages of a language, by company and by unions, in views of its items' bytes.
const load = async (doc: SnapshotDoc) => await modelOf(doc)
const pks = (items: PageItems): number[] => (JSON.parse(`[${items.toString()}]`) as Array<{ pk: number }>).map(i => i.pk)

t.test('items are served newest first, the same day by pk descending', async t => {
  const en = (await load(smallSnapshot())).language('en')!
  // Days 2024-01-05 (pks 5,10,15,20,25) down to 2024-01-01 (pks 1,6,11,16,21).
  t.same(pks(en.page(null, 0, 25).items), [25, 20, 15, 10, 5, 24, 19, 14, 9, 4, 23, 18, 13, 8, 3, 22, 17, 12, 7, 2, 21, 16, 11, 6, 1])
})

t.test('a page is a slice of the ordered list; past the end it is empty', async t => {
  const en = (await load(smallSnapshot())).language('en')!
  t.same(pks(en.page(null, 3, 4).items), [10, 5, 24, 19])
  t.same(en.page(null, 23, 10).count, 25)
  t.same(pks(en.page(null, 23, 10).items), [6, 1])
  t.same(pks(en.page(null, 25, 10).items), [])
  t.same(pks(en.page(null, 1000, 10).items), [])
  t.same(pks(en.page([7], 7, 10).items), [6], 'the last item of a filtered list')
  t.same(pks(en.page([7], 8, 10).items), [], 'just past the end of a filtered list')
})

t.test('one company: its items in the same order', async t => {
  const en = (await load(smallSnapshot())).language('en')!
  const page = en.page([7], 0, 100)
  t.equal(page.count, 8)
  t.same(pks(page.items), [15, 24, 9, 18, 3, 12, 21, 6])
  t.same(pks(en.page([7], 2, 3).items), [9, 18, 3])
  t.equal(en.page([12345], 0, 10).count, 0)
  t.equal(en.page([12345], 0, 10).items.byteLength, 0)
  t.same(en.page([Infinity], 0, 10).count, 0)
})

t.test('several companies: the union, each item once, in order', async t => {
  const en = (await load(smallSnapshot())).language('en')!
  const union = en.page([7, 9], 0, 100)
  t.same(pks(union.items), [25, 20, 15, 10, 5, 24, 9, 18, 3, 12, 21, 6])
  t.equal(union.count, 12)
  t.same(pks(en.page([9, 7, 9, 12345], 0, 100).items), pks(union.items), 'order of ids, repeats and unknown ids do not matter')
  t.same(pks(en.page([7, 9], 4, 3).items), [5, 24, 9])
  t.same(pks(en.page([9, 7], 4, 3).items), [5, 24, 9], 'served again from the cache')
})

t.test('an item listing a company twice appears once', async t => {
  const en = (await load({ languages: { en: [makeItem(1, '2024-01-01', [7, 7, 7]), makeItem(2, '2024-01-02', [7])] } })).language('en')!
  t.same(pks(en.page([7], 0, 10).items), [2, 1])
  // Company lists share one array: a repeat must not spill into the next company's stretch.
  const mixed = (await load({ languages: { en: [makeItem(1, '2024-01-02', [3, 3]), makeItem(2, '2024-01-03', [4]), makeItem(3, '2024-01-01', [4])] } })).language('en')!
  t.same(pks(mixed.page([3], 0, 10).items), [1])
  t.same(pks(mixed.page([4], 0, 10).items), [2, 3])
})

t.test('the union cache stays within its bytes', async t => {
  unionCache.resize(20 * 1024)
  t.teardown(() => unionCache.resize(0))
  const items = Array.from({ length: 300 }, (_, i) => makeItem(i + 1, '2024-01-01', [i, i + 1]))
  const en = (await load({ languages: { en: items } })).language('en')!
  for (let i = 0; i < 299; i++) t.equal(en.page([i, i + 2], 0, 10).count, i === 0 || i === 298 ? 3 : 4)
  t.ok(unionCache.size > 0 && unionCache.bytes <= 20 * 1024, `${unionCache.size} unions in ${unionCache.bytes} bytes`)
  t.equal(en.page([0, 2], 0, 10).count, 3, 'an evicted union is computed again')
})

t.test('a union of loaded lists is the sorted union of their ranks, made from bits or by sorting a few', async t => {
  const before = (a: number, b: number): boolean => a < b
  fc.assert(fc.property(fc.array(fc.uniqueArray(fc.nat(500)), { maxLength: 6 }), fc.constantFrom(501, 1_000_000), (lists, size) => {
    const overlays = lists.map(list => Overlay.over(Uint32Array.from([...list].sort((a, b) => a - b))))
    const expected = [...new Set(lists.flat())].sort((a, b) => a - b)
    const union = Overlay.union(overlays, size, before)
    return !union.edited && JSON.stringify([...union.ranks()]) === JSON.stringify(expected)
  }), { numRuns: runs(1000) })
  t.pass('1,000 unions')
})

t.test('an item is served as the original\'s 16 fields, in order, nothing else', async t => {
  const item = makeItem(1, '2024-01-01', [7], {
    secret: 'x',
    display_image: { url: 'https://img/1.jpg', width: 10, height: 20, alt: 'no' } as never,
    translated_languages: [{ language_code: 'fr', language: 'Français', url: '/fr/x/', extra: 1 } as never],
    stories: [{ translated_title: 'S', translated_url: '/en/s/', pk: 3 } as never],
    company_response_summary: { responses: 1, non_responses: 2, other: 3 } as never,
    series: { id: 4, name: 'kept verbatim' }
  })
  const served = JSON.parse(renderItem(item))
  t.same(Object.keys(served), ['pk', 'is_translated', 'translated_languages', 'translated_title', 'backdate',
    'translated_abstract', 'display_image', 'series', 'company_response_summary', 'company_response_responded',
    'responded_to_article', 'translated_url', 'stories', 'story_item_count', 'content_type_display', 'untranslated_content_type'])
  t.same(served.display_image, { url: 'https://img/1.jpg', width: 10, height: 20 })
  t.same(served.translated_languages, [{ language_code: 'fr', language: 'Français', url: '/fr/x/' }])
  t.same(served.stories, [{ translated_title: 'S', translated_url: '/en/s/' }])
  t.same(served.company_response_summary, { responses: 1, non_responses: 2 })
  t.same(served.series, { id: 4, name: 'kept verbatim' })
  t.notOk('companies' in served)
})

t.test('text is written as DRF writes it: non-ASCII as is, U+2028/U+2029 escaped', async t => {
  const json = renderItem(makeItem(1, '2024-01-01', [], { translated_title: 'Société “Générale”\u2028\u2029\n"\\', translated_url: '/en/latest-news/société/' }))
  t.match(json, '"translated_title":"Société “Générale”\\u2028\\u2029\\n\\"\\\\"')
  t.match(json, '"translated_url":"/en/latest-news/société/"')
  t.equal(JSON.parse(json).translated_title, 'Société “Générale”\u2028\u2029\n"\\')
})

t.test('the item bytes agree with JSON.stringify for any strings', async t => {
  fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string(), (title, abstract) => {
    const item = makeItem(1, '2024-01-01', [], { translated_title: title, translated_abstract: abstract })
    const parsed = JSON.parse(renderItem(item))
    return parsed.translated_title === title && parsed.translated_abstract === abstract
  }), { numRuns: runs(300) })
})

t.test('a page in views of the model holds exactly the bytes it copies, items side by side in one view', async t => {
  const bytes = (items: PageItems): Buffer => {
    const out = Buffer.alloc(items.byteLength)
    t.equal(items.copyTo(out, 0), items.byteLength)
    return out
  }
  const en = (await load(smallSnapshot())).language('en')!
  const pages = [en.page(null, 0, 25), en.page(null, 3, 4), en.page(null, 24, 5), en.page(null, 30, 5), en.page([7], 0, 100), en.page([7, 9], 4, 3), en.page([12345], 0, 10)]
  for (const { items } of pages) {
    t.same(Buffer.concat(items.views()), bytes(items))
    t.same(JSON.parse(`[${Buffer.concat(items.views()).toString()}]`), JSON.parse(`[${items.toString()}]`))
  }
  t.same(en.page(null, 30, 5).items.views(), [], 'nothing for an empty page')
  // Items are kept in the order the file lists them. Listed newest first, a page of the whole language
  // is one run of memory, sent as one view; a company's items are apart.
  const sorted = { languages: { en: Array.from({ length: 50 }, (_, i) => makeItem(50 - i, '2024-01-01', [i % 2])) } }
  const listing = (await load(sorted)).language('en')!
  t.equal(listing.page(null, 5, 20).items.views().length, 1)
  t.equal(listing.page([0], 0, 10).items.views().length, 10)
  t.same(pks(listing.page(null, 5, 3).items), [45, 44, 43])
  t.equal(Buffer.concat(listing.page(null, 5, 3).items.views()).toString(), listing.page(null, 5, 3).items.toString())
})

// src/snapshot/model/overlay.ts: each list reads, page by page, as the plain array the same changes make; older versions unchanged.
/**
 * A flat listing of ranks 0..size-1 and added slots from 1000 up, each with a served place: a rank r sits at 2r + 1
 * and an added slot at an even place, so a slot before the rank r has a place ≤ 2r (and ties between added
 * slots are broken by slot number).
 */
const place = new Map<number, number>()
const before = (a: number, b: number): boolean => {
  const pa = a < 1000 ? 2 * a + 1 : place.get(a)!
  const pb = b < 1000 ? 2 * b + 1 : place.get(b)!
  return pa < pb || (pa === pb && a < b)
}
const sorted = (slots: number[]): number[] => [...slots].sort((a, b) => before(a, b) ? -1 : 1)

/** Every place of `list` read as `plain` has it, by pages of every start and length up to 5. */
function checkReads (list: Overlay, plain: readonly number[]): void {
  if (list.size !== plain.length) throw new Error(`size ${list.size}, expected ${plain.length}`)
  for (let from = 0; from <= plain.length + 1; from++) {
    for (let length = 0; length <= 5; length++) {
      const got = [...list.slots(from, from + length)].join()
      const expected = plain.slice(from, from + length).join()
      if (got !== expected) throw new Error(`places ${from}+${length}: ${got} against ${expected}`)
    }
  }
}

const edit = fc.record({ remove: fc.array(fc.nat(), { maxLength: 6 }), add: fc.array(fc.nat({ max: 80 }), { maxLength: 6 }) })

t.test('an overlay reads as the plain list its edits make; the versions before it are unchanged', async t => {
  fc.assert(fc.property(fc.nat({ max: 40 }), fc.boolean(), fc.array(edit, { maxLength: 8 }), (size, whole, edits) => {
    place.clear()
    // A company's list is every other rank of the listing; the whole list every rank.
    const base = Array.from({ length: size }, (_, i) => i).filter(rank => whole || rank % 2 === 0)
    let list = whole ? new Overlay(null, size) : Overlay.over(Uint32Array.from(base))
    let plain = [...base]
    let next = 1000
    const versions: Array<[Overlay, number[]]> = [[list, plain]]
    for (const { remove, add } of edits) {
      // Removed: some of the list's ranks and added slots, each once.
      const gone = [...new Set(remove.filter(i => i < plain.length).map(i => plain[i]!))]
      const added = add.map(at => {
        const slot = next++
        place.set(slot, 2 * Math.min(at, size))
        return slot
      })
      const inOrder = sorted(added)
      list = list.edit(
        gone.filter(slot => slot < 1000).sort((a, b) => a - b), new Set(gone.filter(slot => slot >= 1000)),
        inOrder, inOrder.map(slot => place.get(slot)! / 2), before
      )
      plain = sorted([...plain.filter(slot => !gone.includes(slot)), ...added])
      checkReads(list, plain)
      versions.push([list, plain])
    }
    for (const [version, itsPlain] of versions) checkReads(version, itsPlain)
  }), { numRuns: runs(500) })
  t.pass('500 random edit sequences')
})

t.test('a union of overlays reads as the union of their plain lists, each slot once', async t => {
  fc.assert(fc.property(fc.array(fc.record({
    ranks: fc.uniqueArray(fc.nat({ max: 30 })),
    remove: fc.array(fc.nat(), { maxLength: 4 }),
    add: fc.uniqueArray(fc.nat({ max: 8 }), { maxLength: 4 })
  }), { minLength: 1, maxLength: 4 }), lists => {
    place.clear()
    // Added slots are shared between lists (slot 1000 + k in each that adds k), as an item in several companies.
    for (let k = 0; k <= 8; k++) place.set(1000 + k, 2 * (k * 4))
    // A rank removed is gone from the whole listing: from every list that has it.
    const gone = new Set(lists.flatMap(({ ranks, remove }) => remove.filter(i => i < ranks.length).map(i => ranks[i]!)))
    const overlays = lists.map(({ ranks, add }) => {
      const base = Uint32Array.from([...ranks].sort((a, b) => a - b))
      const added = sorted(add.map(k => 1000 + k))
      return Overlay.over(base).edit([...base].filter(rank => gone.has(rank)), new Set(), added, added.map(slot => place.get(slot)! / 2), before)
    })
    const plain = sorted([...new Set(lists.flatMap(({ ranks, add }) => [...ranks.filter(rank => !gone.has(rank)), ...add.map(k => 1000 + k)]))])
    // Bits over ranks below 31, or the few ranks of a large listing sorted: the same union.
    checkReads(Overlay.union(overlays, 31, before), plain)
    checkReads(Overlay.union(overlays, 1_000_000, before), plain)
  }), { numRuns: runs(500) })
  t.pass('500 random unions, each made both ways')
})

// src/snapshot/model/union-cache.ts: bounded in bytes, no new union for unknown ids (last: the tests above leave the cache unsized).
const union = (ranks: number): Overlay => Overlay.over(new Uint32Array(ranks))

t.test('unions are kept within the cache\'s bytes, the least recently used out first', async t => {
  const cache = new UnionCache(3 * (4000 + 600))
  cache.keep('a', union(1000))
  cache.keep('b', union(1000))
  cache.keep('c', union(1000))
  t.equal(cache.size, 3)
  t.ok(cache.get('a'), 'a used again')
  cache.keep('d', union(1000))
  t.equal(cache.get('b'), undefined, 'b, the least recently used, made room')
  t.ok(cache.get('a') && cache.get('c') && cache.get('d'))
  t.ok(cache.bytes <= 3 * 4600, `${cache.bytes} bytes`)
  cache.keep('huge', union(4000))
  t.equal(cache.get('huge'), undefined, 'a union larger than the cache is not kept')
  cache.keep('k'.repeat(16_384), union(1))
  t.equal(cache.get('k'.repeat(16_384)), undefined, 'nor one whose key V8 would hash by its length alone')
  for (let i = 0; i < 1000; i++) cache.keep(`many${i}`, union(i % 50))
  t.ok(cache.bytes <= 3 * 4600, `after 1,000 more: ${cache.bytes} bytes`)
})

t.test('requests naming unknown companies make no new union, and get the union of the known ones', async t => {
  const app = await buildTestApp(t)
  const [known] = await askMany(app, 1, () => ({ path: `${EXPLORE}?companies=7&companies=9&limit=100` }))
  t.equal(known, 200)
  const before = unionCache.size
  const expected = (await app.inject(`${EXPLORE}?companies=9&companies=7&limit=100`)).body
  const statuses = await askMany(app, 300, n => ({ path: `${EXPLORE}?companies=7&companies=${1000 + n}&companies=9&companies=${5000 + n}&limit=100` }))
  t.same(new Set(statuses), new Set([200]))
  t.equal(unionCache.size, before, 'the one union of 7 and 9, already kept')
  const res = await app.inject(`${EXPLORE}?companies=7&companies=123456&companies=9&limit=100`)
  t.equal(res.body, expected, 'the page of 7 and 9 (12 items: no links)')
  t.equal(JSON.parse(res.body).count, 12)
  const alone = await askMany(app, 100, n => ({ path: `${EXPLORE}?companies=8&companies=${1000 + n}` }))
  t.same(new Set(alone), new Set([200]))
  t.equal(unionCache.size, before, 'one known company and unknown ones: its own list, no union')
})

t.test('the thread\'s app sizes its union cache with its page cache: PAGE_CACHE_MB=0 keeps no union either', async t => {
  const uncached = await buildTestApp(t, undefined, { pageCacheMb: 0 })
  const before = unionCache.size
  t.same(await askMany(uncached, 3, () => ({ path: `${EXPLORE}?companies=8&companies=9` })), [200, 200, 200])
  t.equal(unionCache.size, before, 'none kept')
  const cached = await buildTestApp(t, undefined, { pageCacheMb: 1 })
  t.same(await askMany(cached, 1, () => ({ path: `${EXPLORE}?companies=8&companies=9` })), [200])
  t.equal(unionCache.size, before + 1, 'kept, within a quarter of 1 MiB')
  t.ok(unionCache.bytes <= 256 * 1024)
})
