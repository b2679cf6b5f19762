// A loaded version as a file read back without a parse (ADR 033); nothing read back is trusted before a page.
import { open, type FileHandle } from 'node:fs/promises'
import { crc32 } from 'node:zlib'
import { setImmediate as turn } from 'node:timers/promises'
import { ImageError } from '../../errors.js'
import { VERSION } from '../../version.js'
import { modelOf, partsOf, swapArrays, type VersionParts } from '../model/version-parts.js'
import {
  COLUMN_NAMES, KINDS, PART_KINDS, arrayOver, columnList, kindOf, type Kind, type View
} from '../model/version-arrays.js'
import { roomFor, type SnapshotModel } from '../model/snapshot-model.js'
import { FINGERPRINT, IMAGE_FORMAT } from './image-fingerprint.js'

const MAGIC = Buffer.from('XRIMAGE\n', 'latin1')
/** Magic (8), format, header length, header crc32, reserved. */
export const PREFIX_BYTES = 24
const LARGEST_HEADER = 64 * 1024 * 1024
/** A turn of the event loop between pieces: requests go on. */
const PIECE_BYTES = 8 * 1024 * 1024
/** Two keep the pool's copying going while this thread checksums. */
const READS_AHEAD = 2

/** `room`: a listing's columns have room for change files. */
interface Section { kind: Kind, offset: number, length: number, room: number, crc: number }

interface SectionRef { section: number }
export interface ImageHeader {
  /** `fingerprint`: what renders items and lays out a version (image-fingerprint.ts); `by`, the release, for people. */
  made: { version: string, stamp: string | null, by: string, fingerprint: string }
  parts: VersionParts<SectionRef>
  sections: Section[]
  /** Room included: what reading the image holds in memory. */
  bytes: number
}

const isView = (value: unknown): value is View => ArrayBuffer.isView(value) && !(value instanceof DataView)
const align = (n: number): number => Math.ceil(n / 8) * 8

/**
 * Each view's CRC-32, a turn of the event loop given after each piece's worth of bytes across views: a
 * version's arrays are hundreds of views under a piece each, and checksummed back to back they held the loop
 * for seconds right after a reload (issue 57).
 */
export async function checksums (views: View[], signal?: AbortSignal): Promise<number[]> {
  const sums: number[] = []
  let sinceTurn = 0
  for (const view of views) {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
    let crc = 0
    for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
      const piece = bytes.subarray(at, at + PIECE_BYTES)
      crc = crc32(piece, crc)
      sinceTurn += piece.length
      if (sinceTurn >= PIECE_BYTES) {
        sinceTurn = 0
        await turn()
        signal?.throwIfAborted()
      }
    }
    sums.push(crc)
  }
  return sums
}

export interface WriteOptions {
  signal?: AbortSignal
  mode?: number
  /** Tests: an image as code that renders otherwise would make it. */
  fingerprint?: string
}

/** The caller names `file` temporary and renames it. Checksums first: the header precedes the arrays. */
export async function writeImage (
  file: string, model: SnapshotModel, stamp: string | null,
  { signal, mode = 0o666, fingerprint = FINGERPRINT }: WriteOptions = {}
): Promise<number> {
  if (model.info.changes !== undefined) throw new Error('an image holds a loaded version, not a derived one')
  const whole = partsOf(model)
  // The reader sets its own: the same snapshot's image is the same bytes.
  whole.info = { ...whole.info, source: '', loadedAt: new Date(0) }
  const rooms = new Map<View, number>()
  for (const listing of whole.listings) {
    // Their room is written by change files (ADR 031), so it is not kept.
    for (const name of COLUMN_NAMES) {
      const used = listing[name].subarray(0, listing.size)
      rooms.set(used, listing[name].length)
      listing[name] = used
    }
  }
  const views: View[] = []
  const parts = swapArrays(whole, isView, (view): SectionRef => ({ section: views.push(view) - 1 }))
  signal?.throwIfAborted()
  const sums = await checksums(views, signal)
  const sections: Section[] = views.map((view, n) => (
    { kind: kindOf(view), offset: 0, length: view.length, room: rooms.get(view) ?? view.length, crc: sums[n] as number }
  ))
  const header = (): Buffer => Buffer.from(JSON.stringify({
    made: { version: model.info.version, stamp, by: VERSION, fingerprint },
    parts,
    sections,
    bytes: sections.reduce((sum, { kind, room }) => sum + room * KINDS[kind].BYTES_PER_ELEMENT, 0)
  } satisfies ImageHeader))
  // The header holds the offsets: laid out for 16-digit ones, padding what is shorter.
  let at = align(PREFIX_BYTES + header().length + sections.length * 16)
  for (const [n, section] of sections.entries()) {
    section.offset = at
    at = align(at + (views[n] as View).byteLength)
  }
  const text = header()
  const prefix = Buffer.alloc(PREFIX_BYTES)
  MAGIC.copy(prefix)
  prefix.writeUInt32LE(IMAGE_FORMAT, 8)
  prefix.writeUInt32LE(text.length, 12)
  prefix.writeUInt32LE(crc32(text), 16)
  const handle = await open(file, 'wx', mode)
  try {
    await handle.write(prefix, 0, PREFIX_BYTES, 0)
    await handle.write(text, 0, text.length, PREFIX_BYTES)
    for (const [n, view] of views.entries()) {
      const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
      for (let done = 0; done < bytes.length; done += PIECE_BYTES) {
        signal?.throwIfAborted()
        const piece = bytes.subarray(done, done + PIECE_BYTES)
        await handle.write(piece, 0, piece.length, (sections[n] as Section).offset + done)
      }
    }
    await handle.truncate(at)
    // Before the caller's rename: after a power cut the image is whole or absent.
    await handle.datasync()
  } finally {
    await handle.close()
  }
  return at
}

async function readExactly (handle: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < into.length;) {
    const { bytesRead } = await handle.read(into, done, Math.min(PIECE_BYTES, into.length - done), position + done)
    if (bytesRead === 0) throw new ImageError('the file ends inside a section')
    done += bytesRead
  }
}

/** `fingerprint`: the reader's own (tests give another). */
export async function readImageHeader (handle: FileHandle, fingerprint = FINGERPRINT): Promise<ImageHeader> {
  const { size } = await handle.stat()
  const prefix = Buffer.alloc(PREFIX_BYTES)
  if (size < PREFIX_BYTES) throw new ImageError('the file is shorter than an image\'s prefix')
  await readExactly(handle, prefix, 0)
  const text = Buffer.alloc(headerLength(prefix, size))
  await readExactly(handle, text, PREFIX_BYTES)
  return parseHeader(prefix, text, size, fingerprint)
}

/** The header's length, from the prefix of an image of `size` bytes. */
export function headerLength (prefix: Buffer, size: number): number {
  if (!prefix.subarray(0, 8).equals(MAGIC)) throw new ImageError('not a version image (its magic is wrong)')
  const format = prefix.readUInt32LE(8)
  if (format !== IMAGE_FORMAT) throw new ImageError(`image format ${format}; this replica reads format ${IMAGE_FORMAT}`)
  const length = prefix.readUInt32LE(12)
  if (length > LARGEST_HEADER || PREFIX_BYTES + length > size) throw new ImageError('its header runs past the file')
  return length
}

/** Checked, before any section is read: where each lies, and what made it. */
export function parseHeader (prefix: Buffer, text: Buffer, size: number, fingerprint: string): ImageHeader {
  if (crc32(text) !== prefix.readUInt32LE(16)) throw new ImageError('its header\'s checksum does not match')
  let header: ImageHeader
  try {
    header = JSON.parse(text.toString('utf8')) as ImageHeader
  } catch {
    throw new ImageError('its header is not JSON')
  }
  checkLayout(header, PREFIX_BYTES + text.length, size)
  if (header.made.fingerprint !== fingerprint) {
    throw new ImageError(
      `made by code that renders otherwise (fingerprint ${String(header.made.fingerprint)}, explore-replica ${String(header.made.by)}); this code's is ${fingerprint}`
    )
  }
  return header
}

function checkLayout (header: ImageHeader, headerEnd: number, size: number): void {
  const { sections, made, parts } = header
  if (typeof made?.version !== 'string' || !Array.isArray(sections) || typeof parts !== 'object' || parts === null) {
    throw new ImageError('its header lacks what an image holds')
  }
  let end = headerEnd
  let bytes = 0
  for (const [n, section] of sections.entries()) {
    const Kind = KINDS[section.kind]
    if (Kind === undefined || !Number.isSafeInteger(section.offset) || !Number.isSafeInteger(section.length) ||
      section.length < 0 || !Number.isSafeInteger(section.room) || section.room < section.length ||
      section.room > roomFor(section.length) + section.length || section.offset % 8 !== 0 || section.offset < end) {
      throw new ImageError(`section ${n} is not where an image puts one`)
    }
    end = section.offset + section.length * Kind.BYTES_PER_ELEMENT
    if (end > size) throw new ImageError(`section ${n} runs past the end of the file`)
    bytes += section.room * Kind.BYTES_PER_ELEMENT
  }
  if (bytes !== header.bytes) throw new ImageError('its header\'s size is not its sections\' sum')
}

/**
 * Nothing of it is served before all of it is read and checked. A section is checked as soon as it is read: a damaged
 * one ends the read there (ADR 043).
 */
export async function readImage (
  handle: FileHandle, header: ImageHeader, source: string, views = allocate(header)
): Promise<SnapshotModel> {
  const pieces: Array<{ bytes: Uint8Array, at: number, section: number, last: boolean }> = []
  for (const [n, { offset }] of header.sections.entries()) {
    const bytes = written(header, views, n)
    for (let done = 0; done < bytes.length; done += PIECE_BYTES) {
      const piece = bytes.subarray(done, done + PIECE_BYTES)
      pieces.push({ bytes: piece, at: offset + done, section: n, last: done + piece.length === bytes.length })
    }
  }
  // Read ahead on libuv's pool while this thread checksums: the read is the floor.
  const sums = header.sections.map(() => 0)
  const reads = pieces.slice(0, READS_AHEAD).map(({ bytes, at }) => readExactly(handle, bytes, at))
  for (const read of reads) read.catch(() => {})
  try {
    for (const [p, { bytes, section, last }] of pieces.entries()) {
      await reads[p]
      const next = pieces[p + READS_AHEAD]
      if (next !== undefined) {
        reads[p + READS_AHEAD] = readExactly(handle, next.bytes, next.at)
        reads[p + READS_AHEAD]?.catch(() => {})
      }
      sums[section] = crc32(bytes, sums[section] as number)
      if (last) checkSum(header, sums, section)
    }
  } catch (error) {
    // No read left writing into arrays let go.
    await Promise.allSettled(reads)
    throw error
  }
  // Empty sections have no piece.
  for (const n of header.sections.keys()) checkSum(header, sums, n)
  return assemble(header, views, source)
}

/** The header's arrays, empty, each with its room: a serving thread is handed them, not a copy (ADR 029). */
export function allocate (header: ImageHeader): View[] {
  return header.sections.map(({ kind, room }) =>
    arrayOver(kind, new SharedArrayBuffer(room * KINDS[kind].BYTES_PER_ELEMENT), room))
}

/** Section `n`'s bytes in its array: what the file holds of it. */
export function written (header: ImageHeader, views: readonly View[], n: number): Uint8Array {
  const { kind, length } = header.sections[n] as Section
  return new Uint8Array((views[n] as View).buffer, 0, length * KINDS[kind].BYTES_PER_ELEMENT)
}

/** The version the header's parts describe over `views`, every index checked. */
export function assemble (header: ImageHeader, views: readonly View[], source: string): SnapshotModel {
  const isSection = (value: unknown): value is SectionRef =>
    typeof value === 'object' && value !== null && Object.keys(value).length === 1 && 'section' in value
  let parts: VersionParts
  try {
    parts = swapArrays(header.parts, isSection, ({ section: n }) => {
      const view = Number.isInteger(n) ? views[n] : undefined
      if (view === undefined) throw new ImageError(`it names section ${String(n)}, which it lacks`)
      return view
    })
  } catch (error) {
    if (error instanceof ImageError) throw error
    throw new ImageError('its parts do not describe a version')
  }
  checkParts(parts)
  return modelOf({ ...parts, info: { ...parts.info, source, loadedAt: new Date() } })
}

function checkSum (header: ImageHeader, sums: readonly number[], n: number): void {
  if (sums[n] !== header.sections[n]?.crc) throw new ImageError(`section ${n}'s checksum does not match`)
}

/** Whether `value` is an array of one of `kinds` (not a DataView, which is no kind). */
function isOf (value: unknown, kinds: readonly Kind[]): boolean {
  return kinds.some(kind => value instanceof KINDS[kind])
}

function ofKinds (part: object, declared: Readonly<Record<string, readonly Kind[]>>): boolean {
  return Object.entries(declared).every(([name, kinds]) => isOf((part as Record<string, unknown>)[name], kinds))
}

/** Every index within what it indexes. */
function checkParts (parts: VersionParts): void {
  const fail = (what: string): never => { throw new ImageError(`its parts do not describe a version: ${what}`) }
  const { info, chunks, listings } = parts
  if (typeof info?.version !== 'string' || !Array.isArray(chunks) || !Array.isArray(listings)) fail('no info')
  if (!chunks.every(chunk => isOf(chunk, PART_KINDS.chunks))) fail('a chunk is not bytes')
  for (const listing of listings) {
    const { chunkOf, startOf, lengthOf, size, companies, changes } = listing
    if (changes !== null) fail(`${listing.code}: change files' lists in an image of a loaded version`)
    if (!ofKinds(listing, PART_KINDS.columns)) fail(`${listing.code}: a column of the wrong kind`)
    if (!Number.isSafeInteger(size) || size < 0 || columnList(listing).some(column => column.length < size)) {
      fail(`${listing.code}: columns shorter than its ${size} items`)
    }
    for (let slot = 0; slot < size; slot++) {
      const chunk = chunks[chunkOf[slot] as number]
      const length = lengthOf[slot] as number
      if (chunk === undefined || (startOf[slot] as number) + length > chunk.length) {
        fail(`${listing.code}: item ${slot} lies outside its chunk`)
      }
      // An item is at least `{}` and its comma.
      if (length < 3) fail(`${listing.code}: item ${slot} is empty`)
    }
    const { keys, slots, starts, ranks } = companies
    if (!ofKinds(companies, PART_KINDS.companies)) fail(`${listing.code}: a company table of the wrong kind`)
    // Else a lookup of an absent id never ends.
    if (keys.length !== slots.length || keys.length === 0 || (keys.length & (keys.length - 1)) !== 0 ||
      !slots.includes(0)) fail(`${listing.code}: a company table of the wrong shape`)
    const companyCount = starts.length - 1
    for (const slot of slots) if (slot > companyCount) fail(`${listing.code}: a company with no list`)
    for (let n = 0; n < companyCount; n++) {
      if ((starts[n] as number) > (starts[n + 1] as number)) fail(`${listing.code}: company lists out of order`)
    }
    if (companyCount >= 0 && (starts[companyCount] as number) > ranks.length) fail(`${listing.code}: company lists past their ranks`)
    for (const rank of ranks) if (rank >= size) fail(`${listing.code}: a company lists an item it lacks`)
  }
}
