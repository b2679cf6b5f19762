// file → validate → index → immutable model. Reads a snapshot file (format v1, one JSON document; a JSON
// Lines file goes to load-json-lines.ts) and either returns a SnapshotModel or throws a SnapshotError naming
// the file, the JSON path and the rule.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { isUtf8 } from 'node:buffer'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../schemas/formats.js'
import { LANGUAGE, SnapshotSchema, type Snapshot, type SnapshotItem } from '../schemas/snapshot.js'
import { SnapshotError } from '../errors.js'
import { SnapshotModelBuilder, type LanguagePart } from './build-model.js'
import { addItems, type ItemPlaces } from './add-items.js'
import { WorkerHalf } from './worker-half.js'
import { scanSteps } from './scan-snapshot.js'
import { runInSlices, runToEnd } from './slices.js'
import type { SnapshotInfo, SnapshotModel } from './snapshot-model.js'
import { isJsonLinesPath, loadJsonLinesFile } from './load-json-lines.js'
import { describeReadError, describeSyntaxError, SLICE_MS, startsWithBom, type LoadOptions } from './load-options.js'
import { ValidationReport, jsonPath } from './validation-report.js'

// Compiled once: checking 200k items is then a tight loop, not an interpretation of the schema. The item
// and top-level checks are parts of the one snapshot schema, not rules of their own.
const snapshotCheck = TypeCompiler.Compile(SnapshotSchema)
const generatedAtCheck = TypeCompiler.Compile(Type.Pick(SnapshotSchema, ['generated_at']))

/**
 * From this size on, a worker thread adds half the items. Starting one costs ~0.1 s (its own copy of
 * the schema code), which a file this size repays several times over; below it, one thread is quicker.
 */
export const PARALLEL_BYTES = 32 * 1024 * 1024

/**
 * Reads and validates a snapshot file. Throws SnapshotError, never anything else, for a bad file.
 * Items are processed in slices that give the event loop a turn, so a service reloading a large
 * snapshot keeps answering from the one it serves.
 */
export async function loadSnapshotFile (file: string, options: LoadOptions = {}): Promise<SnapshotModel> {
  if (isJsonLinesPath(file)) return await loadJsonLinesFile(file, options)
  let raw: Buffer
  try {
    raw = await readFile(file)
  } catch (error) {
    throw new SnapshotError('SNAPSHOT_ERR_UNREADABLE', file, [describeReadError(error)])
  }
  return await loadSnapshotBytes(raw, file, options)
}

/**
 * parseSnapshot, with a turn of the event loop every SLICE_MS of work, and, for a large file, a worker
 * thread adding the second half of the items while this thread adds the first (item-worker.ts).
 */
export async function loadSnapshotBytes (raw: Buffer, file: string, options: LoadOptions = {}): Promise<SnapshotModel> {
  // Started first, so that the worker loads its modules while this thread scans the document.
  const worker = options.whole !== true && raw.length >= (options.parallelBytes ?? PARALLEL_BYTES) ? new WorkerHalf() : null
  try {
    const { start, info } = await runInSlices(begin(raw, file, options))
    const scanned = options.whole === true ? null : await runInSlices(scanDocumentSteps(raw, start))
    if (scanned !== null) {
      const builder = newBuilder(scanned)
      const half = worker === null ? scanned.itemCount : scanned.itemCount >>> 1
      const rest = worker?.add(raw, scanned, half)
      let valid = await addInSlices(raw, scanned, builder, 0, half)
      if (valid && rest !== undefined) {
        const parts = await rest
        // A worker that could not run leaves its half to this thread.
        if (parts === 'invalid') valid = false
        else if (parts === 'unavailable') valid = await addInSlices(raw, scanned, builder, half, scanned.itemCount)
        else valid = absorbParts(builder, parts)
      }
      if (valid) return await builder.buildInSlices({ ...info, generatedAt: scanned.generatedAt })
    }
    return loadWhole(raw, start, file, info, options)
  } finally {
    worker?.stop()
  }
}

/** addItems from `from` up to `to`, a slice of SLICE_MS at a time with a turn of the event loop after each. */
async function addInSlices (raw: Buffer, scanned: ScannedDocument, builder: SnapshotModelBuilder, from: number, to: number): Promise<boolean> {
  for (let at = from; at < to; at = scanned.next) {
    if (!addItems(raw, scanned, builder, at, to, SLICE_MS)) return false
    await new Promise(resolve => setImmediate(resolve))
  }
  return true
}

/** The worker's items, after this thread's; false when one repeats the pk of an earlier item. */
function absorbParts (builder: SnapshotModelBuilder, parts: Map<string, LanguagePart>): boolean {
  for (const [code, part] of parts) {
    if (!builder.absorb(code, part)) return false
  }
  return true
}

/** Parses and validates snapshot bytes in one go; `file` names the source in the report. */
export function parseSnapshot (raw: Buffer, file: string, options: LoadOptions = {}): SnapshotModel {
  const { start, info } = runToEnd(begin(raw, file, options))
  const scanned = options.whole === true ? null : scanDocument(raw, start)
  if (scanned !== null) {
    const builder = newBuilder(scanned)
    if (addItems(raw, scanned, builder, 0, scanned.itemCount, Infinity)) return builder.build({ ...info, generatedAt: scanned.generatedAt })
  }
  return loadWhole(raw, start, file, info, options)
}

/** Bytes digested per step: a few milliseconds' worth. */
const DIGEST_STEP = 8 * 1024 * 1024

/** The text check and the digest, as steps (slices.ts): a 280 MB file takes ~150 ms to digest. */
function * begin (raw: Buffer, file: string, options: LoadOptions): Generator<void, { start: number, info: Omit<SnapshotInfo, 'generatedAt'> }> {
  const start = checkText(raw, file)
  // SHA-1 runs at memory speed on CPUs with SHA extensions; the digest only tells files apart.
  const hash = createHash('sha1')
  for (let at = 0; at < raw.length; at += DIGEST_STEP) {
    hash.update(raw.subarray(at, at + DIGEST_STEP))
    yield
  }
  return { start, info: { source: file, version: hash.digest('base64url'), loadedAt: (options.now ?? (() => new Date()))() } }
}

/** What the scan found: top-level members, checked; every item's place, not yet parsed. */
interface ScannedDocument extends ItemPlaces {
  generatedAt: string | null
  itemLanguage: number[]
  itemIndex: number[]
  itemStart: number[]
  itemEnd: number[]
}

const INVALID = new Error('invalid snapshot')

/**
 * The fast path's first step: the document's outline, without parsing any item. Returns null at the
 * first problem of any kind; the whole-document path then builds the report (or, for a valid document
 * the scanner did not follow, the model).
 */
export function scanDocument (raw: Buffer, start: number): ScannedDocument | null {
  return runToEnd(scanDocumentSteps(raw, start))
}

/** scanDocument as steps (slices.ts): a 280 MB document takes ~0.5 s to scan. */
function * scanDocumentSteps (raw: Buffer, start: number): Generator<void, ScannedDocument | null> {
  const scanned: ScannedDocument = { generatedAt: null, languages: [], itemCount: 0, itemLanguage: [], itemIndex: [], itemStart: [], itemEnd: [], next: 0 }
  try {
    const ok = yield * scanSteps(raw, start, {
      member (key, from, to) {
        // Any other member is allowed, but it must be JSON too.
        const value: unknown = JSON.parse(raw.toString('utf8', from, to))
        if (key !== 'generated_at') return
        if (!generatedAtCheck.Check({ generated_at: value })) throw INVALID
        scanned.generatedAt = value as string
      },
      language (code) {
        if (!LANGUAGE.test(code)) throw INVALID
        scanned.languages.push(code)
      },
      item (_language, index, from, to) {
        scanned.itemLanguage.push(scanned.languages.length - 1)
        scanned.itemIndex.push(index)
        scanned.itemStart.push(from)
        scanned.itemEnd.push(to)
      }
    })
    scanned.itemCount = scanned.itemStart.length
    return ok && scanned.languages.length > 0 ? scanned : null
  } catch (error) {
    if (error === INVALID || error instanceof SyntaxError) return null
    throw error
  }
}

function newBuilder (scanned: ScannedDocument): SnapshotModelBuilder {
  const builder = new SnapshotModelBuilder()
  for (const code of scanned.languages) builder.language(code)
  return builder
}

/** The whole document at once: the precise report for a bad file. */
function loadWhole (raw: Buffer, start: number, file: string, info: Omit<SnapshotInfo, 'generatedAt'>, options: LoadOptions): SnapshotModel {
  const document = parseJson(raw, start, file)
  const report = new ValidationReport(options.problemCap)
  if (!snapshotCheck.Check(document)) {
    report.addSchemaErrors(snapshotCheck.Errors(document))
    // Repeated pks too, so an editor gets every problem from one check, not one kind per attempt.
    reportRepeatedPks(document, report)
    throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, report.lines())
  }
  const snapshot = document as Snapshot
  const builder = new SnapshotModelBuilder()
  for (const [language, items] of Object.entries(snapshot.languages)) {
    builder.language(language)
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as SnapshotItem
      const first = builder.add(language, i, item)
      if (first >= 0) {
        report.add(`${jsonPath(`/languages/${language}/${i}/pk`)}: ${item.pk} repeats ${jsonPath(`/languages/${language}/${first}`)}`)
      }
    }
  }
  if (report.problems.length > 0) throw new SnapshotError('SNAPSHOT_ERR_INVALID', file, report.lines())
  return builder.build({ ...info, generatedAt: snapshot.generated_at ?? null })
}

/** Repeated pks in a document that failed the schema: only where the shape allows looking. */
function reportRepeatedPks (document: unknown, report: ValidationReport): void {
  const languages = (document as { languages?: unknown } | null)?.languages
  if (languages === null || typeof languages !== 'object') return
  for (const [language, items] of Object.entries(languages)) {
    if (!Array.isArray(items)) continue
    const first = new Map<number, number>()
    items.forEach((item: unknown, i) => {
      const pk = (item as { pk?: unknown } | null)?.pk
      if (!Number.isSafeInteger(pk)) return
      const seen = first.get(pk as number)
      if (seen === undefined) first.set(pk as number, i)
      else report.add(`${jsonPath(`/languages/${language}/${i}/pk`)}: ${pk as number} repeats ${jsonPath(`/languages/${language}/${seen}`)}`)
    })
  }
}

/** Refuses what is not text at all; returns where the JSON starts (after a byte order mark). */
function checkText (raw: Buffer, file: string): number {
  const invalid = (problem: string) => new SnapshotError('SNAPSHOT_ERR_INVALID', file, [problem])
  if (raw.length === 0) throw invalid('the file is empty')
  if (!isUtf8(raw)) throw invalid('the file is not valid UTF-8 text')
  return startsWithBom(raw) ? 3 : 0
}

function parseJson (raw: Buffer, start: number, file: string): unknown {
  const invalid = (problem: string) => new SnapshotError('SNAPSHOT_ERR_INVALID', file, [problem])
  let text: string
  try {
    text = raw.toString('utf8', start)
  } catch {
    throw invalid(`the file is too large to parse as one JSON document (${raw.length} bytes)`)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw invalid(`not valid JSON: ${describeSyntaxError(error as Error, text)}`)
  }
}
