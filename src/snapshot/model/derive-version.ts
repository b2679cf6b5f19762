// The next version of a model from a change file, at the cost of what it changes (ADR 026): only the languages
// and company lists it touches are new, as pieces of the ones before; everything else is shared.
import { createHash } from 'node:crypto'
import type { ChangeSet, UpsertOp } from '../changes/change-set.js'
import { runInSlices } from '../slices.js'
import {
  ChangedCompanies, CompanyRanks, LanguageListing, SnapshotModel,
  type AppliedChange, type CompanyList, type ItemStore
} from './snapshot-model.js'
import type { ItemMemory } from './item-memory.js'
import { SlotSpace, slotOfPk, type ListingLineage } from './slot-space.js'
import { RankOrder } from './rank-order.js'
import { IdSlots } from './id-slots.js'
import { uint32ArrayOf } from './shared-arrays.js'

const EMPTY = new Uint32Array(0)

/**
 * A loaded listing's lineage, made once. Keyed by its company lists, which survive the rewrap of an untouched
 * language; keyed by the listing, the next change to that language made it all again (3.5 s at 1M).
 */
const loadedLineages = new WeakMap<object, ListingLineage>()

/** A derived listing's lineage: its slot space and its pks changed since the load. */
const derivedLineages = new WeakMap<LanguageListing, ListingLineage>()

/** The lineage of `listing` (made for a loaded one, in slices: slot-space.ts). */
function * lineageOf (listing: LanguageListing): Generator<void, ListingLineage> {
  const derived = derivedLineages.get(listing)
  if (derived !== undefined) return derived
  let lineage = loadedLineages.get(listing.byCompany)
  if (lineage === undefined) {
    lineage = { space: yield * SlotSpace.of(listing), pks: new Map() }
    loadedLineages.set(listing.byCompany, lineage)
  }
  return lineage
}

/** Makes each loaded language's slot space ready, in slices, so that the first change file pays only for itself. */
export async function prepareForChanges (model: SnapshotModel, sliceMs?: number): Promise<void> {
  await runInSlices((function * () {
    for (const listing of model.listingsByLanguage.values()) yield * lineageOf(listing)
  })(), sliceMs)
}

/** The version `changes` makes of `model`, in slices; `model` is unchanged (and may go on being served). */
export async function deriveVersion (
  model: SnapshotModel, changes: ChangeSet, now = new Date(), sliceMs?: number
): Promise<SnapshotModel> {
  return await runInSlices(derive(model, changes, now), sliceMs)
}

function * derive (model: SnapshotModel, changes: ChangeSet, now: Date): Generator<void, SnapshotModel> {
  // Each item's last op wins: per language, pk → its upsert, or null for a delete.
  const effects = new Map<string, Map<number, UpsertOp | null>>()
  let upserts = 0
  let deletes = 0
  for (const op of changes.ops) {
    // A delete names no new language: only an upsert creates one (an item deleted after it leaves it empty).
    if (op.op === 'delete' && !effects.has(op.language) && model.language(op.language) === undefined) {
      deletes++
      continue
    }
    let language = effects.get(op.language)
    if (language === undefined) effects.set(op.language, language = new Map())
    language.set(op.pk, op.op === 'upsert' ? op : null)
    if (op.op === 'upsert') upserts++
    else deletes++
  }
  const lineages = new Map<string, ListingLineage>()
  for (const code of effects.keys()) {
    const listing = model.language(code)
    lineages.set(code, listing === undefined
      ? { space: SlotSpace.empty(), pks: new Map() }
      : yield * lineageOf(listing))
  }
  const absentDeletes = countAbsentDeletes(changes, lineages)

  const memory = model.memory.derive(changes.chunks)
  const chunks = memory.list
  const chunkBase = chunks.length - changes.chunks.length
  const listings = new Map<string, LanguageListing>()
  let garbageBytes = model.garbageBytes
  for (const [code, listing] of model.listingsByLanguage) {
    const changed = effects.get(code)
    if (changed === undefined) {
      const rewrapped = new LanguageListing(
        code, { ...listing.store, chunks, memory }, listing.byCompany, listing.order, listing.keys
      )
      const lineage = derivedLineages.get(listing)
      if (lineage !== undefined) derivedLineages.set(rewrapped, lineage)
      listings.set(code, rewrapped)
      continue
    }
    const derived = yield * deriveListing(
      code, listing, lineages.get(code) as ListingLineage, changed, chunkBase, chunks, memory
    )
    listings.set(code, derived.listing)
    garbageBytes += derived.garbageBytes
  }
  // A language named first by this change file is created after the others (docs/reference/file-formats.md).
  for (const [code, changed] of effects) {
    if (listings.has(code)) continue
    const { listing: derived } = yield * deriveListing(
      code, null, lineages.get(code) as ListingLineage, changed, chunkBase, chunks, memory
    )
    listings.set(code, derived)
  }
  const snapshotVersion = model.info.snapshotVersion ?? model.info.version
  const applied: AppliedChange = {
    id: changes.id,
    source: changes.source,
    digest: changes.digest,
    generatedAt: changes.generatedAt,
    upserts,
    deletes,
    absentDeletes
  }
  const chain = [...(model.info.changes ?? []), applied]
  const info = {
    ...model.info,
    version: `${snapshotVersion}+${changes.id}`,
    loadedAt: now,
    snapshotVersion,
    changes: chain,
    contentVersion: `${snapshotVersion}+${createHash('sha1').update(chain.map(change => change.digest).join('\n')).digest('base64url').slice(0, 16)}`
  }
  return new SnapshotModel(info, listings, memory, garbageBytes)
}

/** Deletes, in file order, of items that were not there when their line came (an upsert before brings one). */
function countAbsentDeletes (changes: ChangeSet, lineages: ReadonlyMap<string, ListingLineage>): number {
  const present = new Map<string, Map<number, boolean>>()
  let absent = 0
  for (const op of changes.ops) {
    let language = present.get(op.language)
    if (language === undefined) present.set(op.language, language = new Map())
    if (op.op === 'delete') {
      const lineage = lineages.get(op.language)
      const there = language.get(op.pk) ?? (lineage !== undefined && slotOfPk(lineage, op.pk) >= 0)
      if (!there) absent++
    }
    language.set(op.pk, op.op === 'upsert')
  }
  return absent
}

/** The first of `count` places (`slotAt` in served order) whose slot is not before `slot`: where it is or would go. */
function firstNotBefore (
  count: number, slotAt: (index: number) => number, slot: number, before: (a: number, b: number) => boolean
): number {
  let lo = 0
  let hi = count
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (before(slotAt(mid), slot)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * A company's list with `gone` cut out and `come` (in served order) put in, each found by a binary search.
 * Pieces, not a copy: the bench's change file would copy 3.3 MB of lists at 1M (ADR 026).
 */
function * editedList (
  old: CompanyList, gone: ReadonlySet<number>, come: readonly number[], before: (a: number, b: number) => boolean
): Generator<void, RankOrder> {
  const list = old instanceof RankOrder ? old : RankOrder.list(old)
  const at = (slot: number): number => firstNotBefore(list.size, index => list.slotAt(index), slot, before)
  const cuts: number[] = []
  for (const slot of gone) {
    const index = at(slot)
    if (index < list.size && list.slotAt(index) === slot) cuts.push(index)
    yield
  }
  cuts.sort((a, b) => a - b)
  const comeAt: number[] = []
  for (const slot of come) {
    comeAt.push(at(slot))
    yield
  }
  return yield * list.edit(cuts, uint32ArrayOf(come), comeAt)
}

/**
 * A language's next version: its items' slots removed and added, a new order of pieces cut around them, and
 * new lists for the companies of the items removed or added. `listing` null: a language the change creates.
 */
function * deriveListing (
  code: string,
  listing: LanguageListing | null,
  lineage: ListingLineage,
  changed: ReadonlyMap<number, UpsertOp | null>,
  chunkBase: number,
  chunks: readonly Buffer[],
  memory: ItemMemory
): Generator<void, { listing: LanguageListing, garbageBytes: number }> {
  const { space } = lineage
  let companies = 0
  for (const op of changed.values()) companies += op?.companies.length ?? 0
  yield * space.reserve(changed.size, companies)
  const pks = new Map(lineage.pks)
  const removed: number[] = []
  const added: number[] = []
  let garbageBytes = 0
  for (const [pk, op] of changed) {
    const old = slotOfPk(lineage, pk)
    if (old >= 0) {
      removed.push(old)
      garbageBytes += (space.lengthOf[old] as number) + 1
    }
    if (op === null) {
      if (old >= 0) pks.set(pk, -1)
      continue
    }
    const slot = space.append(chunkBase + op.chunk, op.start, op.length, op.date, pk, op.companies)
    added.push(slot)
    pks.set(pk, slot)
    // Every 64: with 512, the derive's first step ran 6.5–7.5 ms under load at 1M.
    if ((added.length & 0x3f) === 0) yield
  }
  const { before } = space
  const oldOrder = listing?.order ?? RankOrder.identity(listing?.size ?? 0)
  const oldCount = oldOrder.size
  const rankOf = (slot: number): number => firstNotBefore(oldCount, rank => oldOrder.slotAt(rank), slot, before)
  // A yield after each binary search, here and in `editedList`: one costs up to ~50 µs under load at 1M
  // (cache misses), so 256 to a step overran the slice by 10–14 ms (ADR 026).
  const removedRanks: number[] = []
  for (const slot of removed) {
    removedRanks.push(rankOf(slot))
    yield
  }
  removedRanks.sort((a, b) => a - b)
  added.sort((a, b) => before(a, b) ? -1 : 1)
  const addedAt: number[] = []
  for (const slot of added) {
    addedAt.push(rankOf(slot))
    yield
  }
  const order = yield * oldOrder.edit(removedRanks, uint32ArrayOf(added), addedAt)
  yield

  // The companies of every item removed or added get new lists; the others are shared.
  const concerned = new Map<number, { gone: Set<number>, come: number[] }>()
  const concern = (company: number) => {
    let change = concerned.get(company)
    if (change === undefined) concerned.set(company, change = { gone: new Set(), come: [] })
    return change
  }
  for (const slot of removed) for (const company of space.companiesOf(slot)) concern(company).gone.add(slot)
  for (const slot of added) for (const company of space.companiesOf(slot)) concern(company).come.push(slot)
  const base = listing === null
    ? new CompanyRanks(IdSlots.sized(0), new Uint32Array(1), EMPTY)
    : listing.byCompany instanceof ChangedCompanies ? listing.byCompany.base : listing.byCompany as CompanyRanks
  const lists = new Map(listing?.byCompany instanceof ChangedCompanies ? listing.byCompany.changed : [])
  yield
  for (const [company, { gone, come }] of concerned) {
    const old = listing?.byCompany.get(company) ?? EMPTY
    // `added` is in served order, so each company's share of it is too; costs by the change, not the list.
    lists.set(company, yield * editedList(old, gone, come, before))
  }

  const store: ItemStore = { chunks, chunkOf: space.chunkOf, startOf: space.startOf, lengthOf: space.lengthOf, memory }
  const derived = new LanguageListing(
    code, store, new ChangedCompanies(base, lists), order, { dateOf: space.dateOf, pkOf: space.pkOf }
  )
  derivedLineages.set(derived, { space, pks })
  return { listing: derived, garbageBytes }
}
