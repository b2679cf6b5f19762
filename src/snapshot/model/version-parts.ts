// A served version as plain parts, the one description a serving thread is handed; modelOf(partsOf(m)) is m again.
import { IdSlots } from './id-slots.js'
import { ItemMemory } from './item-memory.js'
import { Overlay } from './overlay.js'
import {
  CompanyRanks, ItemColumns, LanguageListing, SnapshotModel, type SnapshotInfo
} from './snapshot-model.js'
import { columnList, columnsOf, type ColumnArrays, type ColumnName, type View } from './version-arrays.js'

interface OverlayParts<A> {
  base: A | null, baseSize: number, removed: A, added: A, addedAt: A, addedPlace: A, baseFrom: number
}

/** Its columns by name (version-arrays.ts), between its code and its size: the order of an image's sections. */
export type ListingParts<A> = { code: string } & Record<ColumnName, A> & {
  size: number
  companies: { keys: A, slots: A, starts: A, ranks: A }
  changes: { all: OverlayParts<A>, companies: Array<[number, OverlayParts<A>]> } | null
}

/** No change list: a version's pages do not need it. */
export type InfoParts =
  Pick<SnapshotInfo, 'source' | 'version' | 'generatedAt' | 'loadedAt' | 'snapshotVersion' | 'contentVersion'>

/** `A`: the model's own views, or what stands for them in a message. */
export interface VersionParts<A = View> {
  info: InfoParts
  chunks: A[]
  listings: Array<ListingParts<A>>
  garbageBytes: number
}

export function partsOf (model: SnapshotModel): VersionParts {
  const overlay = ({ base, baseSize, removed, added, addedAt, addedPlace, baseFrom }: Overlay): OverlayParts<View> =>
    ({ base, baseSize, removed, added, addedAt, addedPlace, baseFrom })
  const listings = [...model.listingsByLanguage].map(([code, { columns, changes }]): ListingParts<View> => {
    const { size, byCompany: { slotOf, starts, ranks } } = columns
    return {
      code,
      ...columnsOf(columnList(columns)),
      size,
      companies: { keys: slotOf.keys, slots: slotOf.slots, starts, ranks },
      changes: changes === null
        ? null
        : { all: overlay(changes.all), companies: [...changes.companies].map(([id, list]) => [id, overlay(list)]) }
    }
  })
  const { source, version, generatedAt, loadedAt, snapshotVersion, contentVersion } = model.info
  return {
    info: { source, version, generatedAt, loadedAt, snapshotVersion, contentVersion },
    chunks: [...model.memory.list],
    listings,
    garbageBytes: model.garbageBytes
  }
}

/** Reads the arrays where they are; `holders` shared by the versions of one thread (item-memory.ts). */
export function modelOf (parts: VersionParts, holders?: Map<ArrayBufferLike, number>): SnapshotModel {
  const chunks = parts.chunks.map(view => Buffer.from(view.buffer as ArrayBuffer, view.byteOffset, view.length))
  const memory = new ItemMemory(chunks, undefined, holders)
  const overlay = (list: OverlayParts<View>): Overlay => new Overlay(
    list.base as Uint32Array | null, list.baseSize, list.removed as Uint32Array, list.added as Uint32Array,
    list.addedAt as Uint32Array, list.addedPlace as Uint32Array, list.baseFrom
  )
  const listings = new Map<string, LanguageListing>()
  for (const listing of parts.listings) {
    const { keys, slots, starts, ranks } = listing.companies
    const slotOf = IdSlots.of({ keys: keys as Float64Array, slots: slots as Uint32Array })
    const byCompany = new CompanyRanks(slotOf, starts as Uint32Array, ranks as Uint32Array)
    const columns = new ItemColumns(listing as Record<ColumnName, View> as ColumnArrays, listing.size, byCompany)
    const changes = listing.changes === null
      ? null
      : {
          all: overlay(listing.changes.all),
          companies: new Map(listing.changes.companies.map(([id, list]) => [id, overlay(list)]))
        }
    listings.set(listing.code, new LanguageListing(columns, changes, chunks, memory))
  }
  return new SnapshotModel({ ...parts.info }, listings, memory, parts.garbageBytes)
}

/** The one walk over a version's parts, whatever stands for its arrays. */
export function swapArrays<A, B> (
  parts: VersionParts<A>, isArray: (value: unknown) => value is A, swap: (array: A) => B
): VersionParts<B> {
  const walk = (value: unknown): unknown => {
    if (isArray(value)) return swap(value)
    if (Array.isArray(value)) return value.map(walk)
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, walk(each)]))
    }
    return value // numbers, names, null, the info's Date
  }
  return walk(parts) as VersionParts<B>
}
