// A served version handed from the control thread to a serving thread as views of shared memory (ADR 029). Buffers
// are numbered so that a thread reuses those it holds: no version lets go of what its successor still reads.
import { ItemMemory } from '../snapshot/model/item-memory.js'
import { IdSlots } from '../snapshot/model/id-slots.js'
import { Overlay } from '../snapshot/model/overlay.js'
import {
  CompanyRanks, ItemColumns, LanguageListing, SnapshotModel, type SnapshotInfo
} from '../snapshot/model/snapshot-model.js'

type Kind = 'u8' | 'u16' | 'u32' | 'i32' | 'f64'
type View = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array

/** A view of a shared buffer, by the buffer's number; or a small array itself, copied with the message. */
export type ArrayRef = { buffer: number, kind: Kind, offset: number, length: number } | View

interface CompanyRanksMessage { keys: ArrayRef, slots: ArrayRef, starts: ArrayRef, ranks: ArrayRef }
interface OverlayMessage {
  base: ArrayRef | null
  baseSize: number
  removed: ArrayRef
  added: ArrayRef
  addedAt: ArrayRef
  addedPlace: ArrayRef
}

interface ListingMessage {
  code: string
  /** The columns by slot; the keys order a derived version's unions. */
  chunkOf: ArrayRef
  startOf: ArrayRef
  lengthOf: ArrayRef
  dateOf: ArrayRef
  pkOf: ArrayRef
  size: number
  companies: CompanyRanksMessage
  /** A derived version's lists: its whole list and those of the companies its change files concerned. */
  changes: { all: OverlayMessage, companies: Array<[number, OverlayMessage]> } | null
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
  const overlay = ({ base, baseSize, removed, added, addedAt, addedPlace }: Overlay): OverlayMessage => ({
    base: base === null ? null : ref(base),
    baseSize,
    removed: ref(removed),
    added: ref(added),
    addedAt: ref(addedAt),
    addedPlace: ref(addedPlace)
  })
  const listings: ListingMessage[] = []
  for (const [code, { columns, changes }] of model.listingsByLanguage) {
    const { slotOf, starts, ranks } = columns.byCompany
    listings.push({
      code,
      chunkOf: ref(columns.chunkOf),
      startOf: ref(columns.startOf),
      lengthOf: ref(columns.lengthOf),
      dateOf: ref(columns.dateOf),
      pkOf: ref(columns.pkOf),
      size: columns.size,
      companies: { keys: ref(slotOf.keys), slots: ref(slotOf.slots), starts: ref(starts), ranks: ref(ranks) },
      changes: changes === null
        ? null
        : { all: overlay(changes.all), companies: [...changes.companies].map(([id, list]) => [id, overlay(list)]) }
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
    const overlay = (list: OverlayMessage): Overlay => new Overlay(
      list.base === null ? null : array(list.base), list.baseSize, array(list.removed), array(list.added),
      array(list.addedAt), array(list.addedPlace)
    )
    const chunks = message.chunks.map(ref => {
      const view = array<Uint8Array>(ref)
      return Buffer.from(view.buffer as ArrayBuffer, view.byteOffset, view.length)
    })
    const memory = new ItemMemory(chunks, undefined, this.holders)
    const listings = new Map<string, LanguageListing>()
    for (const listing of message.listings) {
      const { keys: ids, slots, starts, ranks } = listing.companies
      const slotOf = IdSlots.of({ keys: array(ids), slots: array(slots) })
      const byCompany = new CompanyRanks(slotOf, array(starts), array(ranks))
      const columns = new ItemColumns(
        array(listing.chunkOf), array(listing.startOf), array(listing.lengthOf), array(listing.dateOf),
        array(listing.pkOf), listing.size, byCompany
      )
      const changes = listing.changes === null
        ? null
        : {
            all: overlay(listing.changes.all),
            companies: new Map(listing.changes.companies.map(([id, list]) => [id, overlay(list)]))
          }
      listings.set(listing.code, new LanguageListing(listing.code, columns, changes, chunks, memory))
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
