// The next version of a model from a change file, at the cost of what it changes; the rest shared (ADR 031).
import { createHash } from 'node:crypto'
import type { ChangeSet, UpsertOp } from '../changes/change-set.js'
import { STEP_MASK, runInSlices } from '../slices.js'
import { LanguageListing, SnapshotModel, roomFor, type AppliedChange, type ItemColumns } from './snapshot-model.js'
import type { ItemMemory } from './item-memory.js'
import { ChangeIndex } from './change-index.js'
import { Overlay, firstNotBefore } from './overlay.js'
import { companyRanks, writeColumns } from './build-model.js'
import { COLUMN_NAMES, WIDTH, columnList, holds, rowValue, type View } from './version-arrays.js'

/** So that the first change file pays only for itself. */
export async function prepareForChanges (model: SnapshotModel): Promise<void> {
  await runInSlices((function * () {
    for (const listing of model.listingsByLanguage.values()) yield * ChangeIndex.of(listing.columns)
  })())
}

/** `model` is unchanged and may go on being served. */
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
    // Only an upsert creates a language (an item deleted after it leaves it empty).
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
  const indexes = new Map<string, ChangeIndex>()
  for (const code of effects.keys()) {
    const listing = model.language(code)
    if (listing !== undefined) indexes.set(code, yield * ChangeIndex.of(listing.columns))
  }
  const absentDeletes = countAbsentDeletes(changes, model, indexes)

  const memory = model.memory.derive(changes.chunks)
  const chunks = memory.list
  const chunkBase = chunks.length - changes.chunks.length
  const listings = new Map<string, LanguageListing>()
  let garbageBytes = model.garbageBytes
  for (const [code, listing] of model.listingsByLanguage) {
    const changed = effects.get(code)
    if (changed === undefined) {
      listings.set(code, new LanguageListing(listing.columns, listing.changes, chunks, memory))
      continue
    }
    const derived = yield * deriveListing(listing, changed, chunkBase, chunks, memory)
    listings.set(code, derived.listing)
    garbageBytes += derived.garbageBytes
  }
  // New languages after the others (docs/reference/file-formats.md).
  for (const [code, changed] of effects) {
    if (listings.has(code)) continue
    const { listing: derived } = yield * deriveListing(null, changed, chunkBase, chunks, memory)
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

/** In file order: an upsert before a delete brings the item. */
function countAbsentDeletes (
  changes: ChangeSet, model: SnapshotModel, indexes: ReadonlyMap<string, ChangeIndex>
): number {
  const present = new Map<string, Map<number, boolean>>()
  let absent = 0
  for (const op of changes.ops) {
    let language = present.get(op.language)
    if (language === undefined) present.set(op.language, language = new Map())
    if (op.op === 'delete') {
      const listing = model.language(op.language)
      const there = language.get(op.pk) ??
        (listing !== undefined && (indexes.get(op.language) as ChangeIndex).slotOf(op.pk, listing.all) >= 0)
      if (!there) absent++
    }
    language.set(op.pk, op.op === 'upsert')
  }
  return absent
}

/** Where the slot goes in every list. */
function rankBefore (columns: ItemColumns, slot: number): number {
  return firstNotBefore(columns.size, rank => columns.before(rank, slot))
}

/** `removed`: ranks of the flat listing; `dropped`: added slots dropped again. */
interface ListEdit { removed: number[], dropped: Set<number>, added: number[] }

/** `listing` null: a language the change creates. */
function * deriveListing (
  listing: LanguageListing | null,
  changed: ReadonlyMap<number, UpsertOp | null>,
  chunkBase: number,
  chunks: readonly Buffer[],
  memory: ItemMemory
): Generator<void, { listing: LanguageListing, garbageBytes: number }> {
  let upserts = 0
  let companies = 0
  /** Each column's largest new number. */
  const largest = COLUMN_NAMES.map(() => 0)
  for (const op of changed.values()) {
    if (op === null) continue
    upserts++
    companies += op.companies.length
    for (let c = 0; c < WIDTH; c++) largest[c] = Math.max(largest[c] as number, rowValue(op.row, 0, c, chunkBase))
  }
  let current = listing ?? (yield * flatten(null, upserts, companies, largest, chunks, memory))
  let index = yield * ChangeIndex.of(current.columns)
  // Flat first when the new items have no room, or the columns are too narrow for their numbers (ADR 031).
  const fits = index.fits(upserts, companies) &&
    columnList(current.columns).every((column, c) => holds(column, largest[c] as number))
  if (!fits) {
    current = yield * flatten(current, upserts, companies, largest, chunks, memory)
    index = yield * ChangeIndex.of(current.columns)
  }
  const { columns } = current
  const all: ListEdit = { removed: [], dropped: new Set(), added: [] }
  const lists = new Map<number, ListEdit>()
  const edit = (company: number): ListEdit => {
    let list = lists.get(company)
    if (list === undefined) lists.set(company, list = { removed: [], dropped: new Set(), added: [] })
    return list
  }
  let garbageBytes = 0
  let done = 0
  for (const [pk, op] of changed) {
    // Every 64 items, deletes too: with 512, the derive's first step ran 6.5–7.5 ms under load at 1M (ADR 026).
    if ((++done & 0x3f) === 0) yield
    // Each pk comes once, before its new slot is given.
    const old = index.slotOf(pk, current.all)
    if (old >= 0) {
      garbageBytes += (columns.lengthOf[old] as number) + 1
      const loaded = old < columns.size
      const lose = (list: ListEdit): void => { if (loaded) list.removed.push(old); else list.dropped.add(old) }
      lose(all)
      index.eachCompany(old, company => lose(edit(company)))
    }
    if (op === null) continue
    const unique = [...new Set(op.companies)]
    const slot = index.add(op.row, chunkBase, unique)
    for (const company of unique) edit(company).added.push(slot)
    all.added.push(slot)
  }
  // A yield after each binary search: one costs up to ~50 µs under load at 1M (cache misses; ADR 026).
  const { before } = columns
  const at = new Map<number, number>()
  for (const slot of all.added) {
    at.set(slot, rankBefore(columns, slot))
    yield
  }
  const edited = (list: Overlay, { removed, dropped, added }: ListEdit): Overlay => {
    added.sort((a, b) => before(a, b) ? -1 : 1)
    return list.edit(removed.sort((a, b) => a - b), dropped, added, added.map(slot => at.get(slot) as number), before)
  }
  const whole = edited(current.all, all)
  yield
  const companyLists = new Map(current.changes?.companies)
  for (const [company, change] of lists) {
    const list = companyLists.get(company) ?? columns.byCompany.list(company)
    companyLists.set(company, edited(list, change))
    yield
  }
  const derived = new LanguageListing(columns, { all: whole, companies: companyLists }, chunks, memory)
  // Flat again once what changed outgrows the room: every later edit copies the whole list's overlay (ADR 031).
  const flat = whole.added.length + whole.removed.length > roomFor(columns.size)
  return { listing: flat ? yield * flatten(derived, 0, 0, [], chunks, memory) : derived, garbageBytes }
}

/** When the room is spent; `listing` null: no items. `largest`: each column's largest new number. */
function * flatten (
  listing: LanguageListing | null, upserts: number, companies: number, largest: readonly number[],
  chunks: readonly Buffer[], memory: ItemMemory
): Generator<void, LanguageListing> {
  const size = listing?.size ?? 0
  const old = listing?.columns
  const index = old === undefined ? null : yield * ChangeIndex.of(old)
  const slots = new Uint32Array(size)
  const all = listing?.all ?? new Overlay(null, size)
  for (let from = 0; from < size; from += STEP_MASK + 1) {
    slots.set(all.slots(from, Math.min(size, from + STEP_MASK + 1)), from)
    yield
  }
  const byCompany = yield * companyRanks(size, (rank, use) => index?.eachCompany(slots[rank] as number, use))
  const from = old === undefined ? [] : columnList(old)
  const columns = yield * writeColumns(
    size, largest, byCompany, rank => slots[rank] as number, (c, slot) => (from[c] as View)[slot] as number,
    upserts + roomFor(size + upserts), old
  )
  yield * ChangeIndex.of(columns, companies)
  return new LanguageListing(columns, null, chunks, memory)
}
