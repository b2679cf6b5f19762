// A change file read and checked, each upsert's item rendered into shared chunks the next version reads in place.
import type { RenderedItems } from '../model/build-model.js'
import type { MergeTarget } from '../load/merge-batches.js'
import { AT, COLUMN_NAMES, WIDTH, rowValue } from '../model/version-arrays.js'

export interface UpsertOp {
  op: 'upsert'
  language: string
  pk: number
  /** Its row (version-arrays.ts), its chunk one of `chunks`: from `AT.startOf`, `AT.lengthOf` bytes and a comma. */
  row: number[]
  companies: readonly number[]
  line: number
}

/** One not there is no error (counted when applied). */
interface DeleteOp {
  op: 'delete'
  language: string
  pk: number
  line: number
}

export type ChangeOp = UpsertOp | DeleteOp

export interface ChangeSet {
  source: string
  /** The served version is named after the last change applied. */
  id: string
  generatedAt: string | null
  /** Of the file's bytes: the same file, the same change. */
  digest: string
  /** Shared memory. */
  chunks: readonly Buffer[]
  /** The last op for an item wins. */
  ops: readonly ChangeOp[]
}

export class ChangeSetBuilder implements MergeTarget {
  readonly chunks: Buffer[] = []
  readonly ops: ChangeOp[] = []
  private readonly languages = new Set<string>()

  language (code: string): void {
    this.languages.add(code)
  }

  get languageCount (): number {
    return this.languages.size
  }

  chunk (bytes: Buffer): number {
    return this.chunks.push(bytes) - 1
  }

  addRendered (language: string, index: number, items: RenderedItems, i: number, chunk: number): number {
    this.languages.add(language)
    const from = i === 0 ? 0 : items.companyEnd[i - 1] as number
    const row = COLUMN_NAMES.map((_, c) => rowValue(items.rows, i * WIDTH, c, chunk))
    this.ops.push({
      op: 'upsert',
      language,
      pk: row[AT.pkOf] as number,
      row,
      companies: items.companies.slice(from, items.companyEnd[i] as number),
      line: index
    })
    // A repeat is no problem: the last line wins.
    return -1
  }

  delete (language: string, pk: number, index: number): void {
    this.ops.push({ op: 'delete', language, pk, line: index })
  }
}
