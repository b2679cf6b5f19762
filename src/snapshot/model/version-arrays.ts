// A version's arrays declared once: their kinds, and a listing's per-item columns, each with what an item gives it.
import type { SnapshotItem } from '../../schemas/snapshot.js'
import { dateKey } from './item-bytes.js'

/** By the name an image's sections and a thread's message give a kind. */
export const KINDS = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array } as const
export type Kind = keyof typeof KINDS
export interface ArrayOf { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array }
export type View = ArrayOf[Kind]
const LARGEST = { u8: 0xff, u16: 0xffff, u32: 0xffffffff, i32: 0x7fffffff, f64: Number.MAX_SAFE_INTEGER }

/** `length` entries over `buffer` from byte `offset`. */
export function arrayOver<K extends Kind> (kind: K, buffer: ArrayBufferLike, length: number, offset = 0): ArrayOf[K] {
  const Over = KINDS[kind] as unknown as new (buffer: ArrayBufferLike, offset: number, length: number) => ArrayOf[K]
  return new Over(buffer, offset, length)
}

export function kindOf (view: View): Kind {
  for (const [kind, Kind] of Object.entries(KINDS)) if (view instanceof Kind) return kind as Kind
  throw new Error('not an array a version holds')
}

/** Where its bytes were written: `chunk` counted from its batch's or change file's first. */
export interface ItemPlace { chunk: number, start: number, length: number }

export interface ColumnDeclaration {
  /** Narrowest first: the first that holds its numbers is taken (ADR 016). */
  readonly kinds: readonly [Kind, ...Kind[]]
  readonly fill: (item: SnapshotItem, at: ItemPlace) => number
}

/**
 * A listing's per-item columns by slot, in the order of its parts and an image's sections; all shared with the threads
 * and written to an image (ADR 029, 033). An item goes from its parse to its slot as a row: its numbers in this order.
 */
export const COLUMNS = {
  chunkOf: { kinds: ['u16', 'u32'], fill: (_, at) => at.chunk },
  startOf: { kinds: ['u32'], fill: (_, at) => at.start },
  lengthOf: { kinds: ['u16', 'u32'], fill: (_, at) => at.length },
  /** With pkOf, the served order's keys. */
  dateOf: { kinds: ['u32'], fill: item => dateKey(item.backdate) },
  pkOf: { kinds: ['f64'], fill: item => item.pk }
} as const satisfies Record<string, ColumnDeclaration>

export type ColumnName = keyof typeof COLUMNS
export type ColumnArrays = { [N in ColumnName]: ArrayOf[(typeof COLUMNS)[N]['kinds'][number]] }

/** Their names; a column without its fill would be served as zeros, so none loads. */
export function columnNames (columns: Readonly<Record<string, Partial<ColumnDeclaration>>>): string[] {
  for (const [name, { kinds, fill }] of Object.entries(columns)) {
    if (!Array.isArray(kinds) || kinds.length === 0 || typeof fill !== 'function') {
      throw new Error(`the column ${name} is declared without its kinds and its fill`)
    }
  }
  return Object.keys(columns)
}

export const COLUMN_NAMES = columnNames(COLUMNS) as readonly ColumnName[]
export const WIDTH = COLUMN_NAMES.length
/** Each column's place in a row. */
export const AT = Object.fromEntries(COLUMN_NAMES.map((name, c) => [name, c])) as Record<ColumnName, number>
const FILLS = COLUMN_NAMES.map(name => COLUMNS[name].fill)

export function fillRow (rows: number[], item: SnapshotItem, at: ItemPlace): void {
  for (const fill of FILLS) rows.push(fill(item, at))
}

/** Column `c` of the row at `rows[from]`, its chunk counted from `chunkBase`. */
export function rowValue (rows: ArrayLike<number>, from: number, c: number, chunkBase: number): number {
  const value = rows[from + c] as number
  return c === AT.chunkOf ? value + chunkBase : value
}

export function columnList (columns: Readonly<Record<ColumnName, View>>): View[] {
  return COLUMN_NAMES.map(name => columns[name])
}

export function columnsOf<A> (list: readonly A[]): Record<ColumnName, A> {
  return Object.fromEntries(COLUMN_NAMES.map((name, c) => [name, list[c]])) as Record<ColumnName, A>
}

/** Column `c`'s kind for numbers up to `largest`, none narrower than `was`'s: a column once wide stays wide. */
export function kindFor (c: number, largest: number, was?: View): Kind {
  const kinds: readonly Kind[] = COLUMNS[COLUMN_NAMES[c] as ColumnName].kinds
  const from = was === undefined ? 0 : kinds.indexOf(kindOf(was))
  return kinds.find((kind, k) => k >= from && largest <= LARGEST[kind]) ?? kinds[kinds.length - 1] as Kind
}

export function holds (array: View, largest: number): boolean {
  return largest <= LARGEST[kindOf(array)]
}

/** A loaded version's arrays and the kinds an image's may be; a derived one's overlays (u32) are never imaged. */
export const PART_KINDS = {
  chunks: ['u8'],
  columns: columnsOf(COLUMN_NAMES.map((name): readonly Kind[] => COLUMNS[name].kinds)),
  companies: { keys: ['f64'], slots: ['u32'], starts: ['u32'], ranks: ['u32'] }
} as const satisfies Record<string, readonly Kind[] | Record<string, readonly Kind[]>>
