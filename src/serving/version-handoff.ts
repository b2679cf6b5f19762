// A served version handed from the control thread to a serving thread as views of shared memory (ADR 029). Buffers
// are numbered so that a thread reuses those it holds: no version lets go of what its successor still reads.
import { ItemMemory } from '../snapshot/model/item-memory.js'
import { IdSlots } from '../snapshot/model/id-slots.js'
import { RankOrder, type OrderTables } from '../snapshot/model/rank-order.js'
import {
  ChangedCompanies, CompanyRanks, LanguageListing, SnapshotModel, type CompanyLists, type SnapshotInfo
} from '../snapshot/model/snapshot-model.js'

type Kind = 'u8' | 'u16' | 'u32' | 'i32' | 'f64'
type View = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array

/** A view of a shared buffer, by the buffer's number; or a small array itself, copied with the message. */
export type ArrayRef = { buffer: number, kind: Kind, offset: number, length: number } | View

interface CompanyRanksMessage { keys: ArrayRef, slots: ArrayRef, starts: ArrayRef, ranks: ArrayRef }
interface OrderMessage { sources: ArrayRef[], sourceOf: ArrayRef, starts: ArrayRef, ends: ArrayRef }

interface ListingMessage {
  code: string
  chunkOf: ArrayRef
  startOf: ArrayRef
  lengthOf: ArrayRef
  companies: CompanyRanksMessage
  /** A derived version's lists of the companies its change files concerned. */
  changed: Array<[number, OrderMessage]> | null
  order: OrderMessage | null
  /** The keys by slot: a derived version orders its unions by them. */
  keys: { dateOf: ArrayRef, pkOf: ArrayRef } | null
}

/** What a serving thread needs of a version's info: its name and the ETags' base (no change list). */
type InfoMessage =
  Pick<SnapshotInfo, 'source' | 'version' | 'generatedAt' | 'loadedAt' | 'snapshotVersion' | 'contentVersion'>

export interface VersionMessage {
  info: InfoMessage
  /** Every shared buffer the version reads, by number. */
  buffers: Array<[number, SharedArrayBuffer]>
  chunks: ArrayRef[]
  listings: ListingMessage[]
  garbageBytes: number
}

const numbers = new WeakMap<SharedArrayBuffer, number>()
let lastNumber = 0

/** The message that hands `model` to a serving thread. */
export function describe (model: SnapshotModel): VersionMessage {
  const buffers = new Map<number, SharedArrayBuffer>()
  const ref = (array: View): ArrayRef => {
    const { buffer } = array
    if (!(buffer instanceof SharedArrayBuffer)) return array
    let number = numbers.get(buffer)
    if (number === undefined) numbers.set(buffer, number = ++lastNumber)
    buffers.set(number, buffer)
    return { buffer: number, kind: kindOf(array), offset: array.byteOffset, length: array.length }
  }
  const order = ({ sources, sourceOf, starts, ends }: OrderTables): OrderMessage =>
    ({ sources: sources.map(ref), sourceOf: ref(sourceOf), starts: ref(starts), ends: ref(ends) })
  const ranks = ({ slotOf, starts, ranks }: CompanyRanks): CompanyRanksMessage =>
    ({ keys: ref(slotOf.keys), slots: ref(slotOf.slots), starts: ref(starts), ranks: ref(ranks) })
  const listings: ListingMessage[] = []
  for (const [code, listing] of model.listingsByLanguage) {
    const { byCompany, store, keys } = listing
    const base = byCompany instanceof ChangedCompanies ? byCompany.base : byCompany as CompanyRanks
    listings.push({
      code,
      chunkOf: ref(store.chunkOf),
      startOf: ref(store.startOf),
      lengthOf: ref(store.lengthOf),
      companies: ranks(base),
      changed: byCompany instanceof ChangedCompanies
        ? [...byCompany.changed].map(([company, list]) => [company, order(list.tables)])
        : null,
      order: listing.order === null ? null : order(listing.order.tables),
      keys: keys === null ? null : { dateOf: ref(keys.dateOf), pkOf: ref(keys.pkOf) }
    })
  }
  const { source, version, generatedAt, loadedAt, snapshotVersion, contentVersion } = model.info
  return {
    info: { source, version, generatedAt, loadedAt, snapshotVersion, contentVersion },
    chunks: model.memory.list.map(ref),
    listings,
    garbageBytes: model.garbageBytes,
    buffers: [...buffers]
  }
}

/** A serving thread's side: the models it is handed, each made of the shared buffers it already holds where it can. */
export class VersionAdopter {
  /** Buffer number → the buffer object this thread holds, while any version of it does. */
  private readonly held = new Map<number, WeakRef<SharedArrayBuffer>>()
  /** Buffer → how many of this thread's unreleased versions hold it (item-memory.ts). */
  private readonly holders = new Map<ArrayBufferLike, number>()

  adopt (message: VersionMessage): SnapshotModel {
    const buffers = new Map<number, SharedArrayBuffer>()
    for (const [number, buffer] of message.buffers) {
      const known = this.held.get(number)?.deref()
      buffers.set(number, known ?? buffer)
      if (known === undefined) this.held.set(number, new WeakRef(buffer))
    }
    // Buffers no version of this thread holds any more are forgotten (the control may send them again).
    for (const [number, held] of this.held) if (held.deref() === undefined) this.held.delete(number)
    const array = <T extends View>(ref: ArrayRef): T => {
      if (ArrayBuffer.isView(ref)) return ref as T
      const Kind = KINDS[ref.kind] as new (buffer: ArrayBufferLike, offset: number, length: number) => View
      return new Kind(buffers.get(ref.buffer) as SharedArrayBuffer, ref.offset, ref.length) as T
    }
    const order = (tables: OrderMessage): RankOrder => RankOrder.of({
      sources: tables.sources.map(source => array<Uint32Array>(source)),
      sourceOf: array(tables.sourceOf),
      starts: array(tables.starts),
      ends: array(tables.ends)
    })
    const chunks = message.chunks.map(ref => {
      const view = array<Uint8Array>(ref)
      return Buffer.from(view.buffer as ArrayBuffer, view.byteOffset, view.length)
    })
    const memory = new ItemMemory(chunks, undefined, this.holders)
    const listings = new Map<string, LanguageListing>()
    for (const listing of message.listings) {
      const { keys: ids, slots, starts, ranks } = listing.companies
      const base = new CompanyRanks(IdSlots.of({ keys: array(ids), slots: array(slots) }), array(starts), array(ranks))
      const byCompany: CompanyLists = listing.changed === null
        ? base
        : new ChangedCompanies(base, new Map(listing.changed.map(([company, list]) => [company, order(list)])))
      const store = {
        chunks,
        chunkOf: array<Uint16Array | Uint32Array>(listing.chunkOf),
        startOf: array<Uint32Array>(listing.startOf),
        lengthOf: array<Uint16Array | Uint32Array>(listing.lengthOf),
        memory
      }
      const keys = listing.keys === null
        ? null
        : { dateOf: array<Uint32Array>(listing.keys.dateOf), pkOf: array<Float64Array>(listing.keys.pkOf) }
      listings.set(listing.code, new LanguageListing(
        listing.code, store, byCompany, listing.order === null ? null : order(listing.order), keys
      ))
    }
    return new SnapshotModel({ ...message.info }, listings, memory, message.garbageBytes)
  }
}

const KINDS = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array }

function kindOf (array: View): Kind {
  if (array instanceof Uint8Array) return 'u8'
  if (array instanceof Uint16Array) return 'u16'
  if (array instanceof Uint32Array) return 'u32'
  if (array instanceof Int32Array) return 'i32'
  return 'f64'
}
