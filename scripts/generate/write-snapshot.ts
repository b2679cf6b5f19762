// The generator's API: a whole snapshot in memory, or streamed item by item to a file replaced in one rename.
import { createWriteStream } from 'node:fs'
import { mkdir, realpath, rename, rm, stat } from 'node:fs/promises'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { Snapshot } from '../../src/schemas/snapshot.js'
import { planSnapshot, type Context, type GenerateOptions } from './plan-snapshot.js'
import { itemsOf } from './write-items.js'

/**
 * 'pretty' matches JSON.stringify(snapshot, null, 2); 'lines' is the same JSON document with each item on
 * one line; 'jsonl' is a JSON Lines snapshot (contract §1): a header line, then one item per line.
 */
export type SnapshotFormat = 'pretty' | 'lines' | 'jsonl'

export interface WriteOptions extends GenerateOptions {
  /** Default: 'jsonl' for a `.jsonl` or `.ndjson` path, else 'pretty' up to PRETTY_MAX_ITEMS items, else 'lines'. */
  format?: SnapshotFormat
}

export interface CompanySummary {
  id: number
  name: string
  /** Items per language linked to this company. */
  items: Record<string, number>
}

export interface WriteResult {
  path: string
  bytes: number
  format: SnapshotFormat
  items: Record<string, number>
  /** Every company id, most linked in the first language first. */
  companies: CompanySummary[]
}

// Pretty-printing triples the whitespace; past this many items a human no longer reads the file anyway.
export const PRETTY_MAX_ITEMS = 5000

export function generateSnapshot (options: GenerateOptions = {}): Snapshot {
  const ctx = planSnapshot(options)
  const languages: Snapshot['languages'] = {}
  for (const plan of ctx.plans) languages[plan.code] = Array.from(itemsOf(ctx, plan))
  return { generated_at: ctx.generatedAt, languages }
}

function summarize (ctx: Context): CompanySummary[] {
  const byId = new Map<number, CompanySummary>()
  for (let id = 1; id <= ctx.companies.count; id++) {
    const items: Record<string, number> = {}
    for (const plan of ctx.plans) items[plan.code] = 0
    byId.set(id, { id, name: ctx.companies.names[id] ?? '', items })
  }
  for (const plan of ctx.plans) {
    for (const ids of plan.links) {
      for (const id of ids) {
        const entry = byId.get(id)
        if (entry !== undefined) entry.items[plan.code] = (entry.items[plan.code] ?? 0) + 1
      }
    }
  }
  const first = ctx.plans[0]?.code ?? ''
  return [...byId.values()].sort((a, b) => (b.items[first] ?? 0) - (a.items[first] ?? 0) || a.id - b.id)
}

/**
 * Streams the snapshot to `path` item by item (never one giant string), to a temporary file that is renamed
 * into place so a watching service never sees a half-written snapshot (devices and pipes such as /dev/stdout
 * are written directly). Same content as generateSnapshot();
 * 'pretty' output is byte-identical to JSON.stringify(snapshot, null, 2) plus a newline.
 */
export async function writeSnapshot (path: string, options: WriteOptions = {}): Promise<WriteResult> {
  const ctx = planSnapshot(options)
  const total = ctx.plans.reduce((n, p) => n + p.count, 0)
  const format = options.format ?? (/\.(jsonl|ndjson)$/i.test(path) ? 'jsonl' : total <= PRETTY_MAX_ITEMS ? 'pretty' : 'lines')
  let target = resolve(path)
  let direct = false
  try {
    // Follow symlinks so the rename replaces the real file, not the link; never rename over a device or pipe.
    target = await realpath(target)
    direct = !(await stat(target)).isFile()
  } catch {
    await mkdir(dirname(target), { recursive: true })
  }
  const temporary = direct ? target : join(dirname(target), `.${basename(target)}.${process.pid}.tmp`)

  const out = createWriteStream(temporary, { encoding: 'utf8' })
  const failed = new Promise<never>((_resolve, reject) => { out.once('error', reject) })
  failed.catch(() => {})
  let bytes = 0
  let pending: string[] = []
  let pendingLength = 0

  const flush = async (): Promise<void> => {
    if (pending.length === 0) return
    const chunk = pending.join('')
    pending = []
    pendingLength = 0
    bytes += Buffer.byteLength(chunk, 'utf8')
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed])
  }
  // Batching small pieces into ~256 KB writes keeps per-write overhead negligible.
  const emit = async (piece: string): Promise<void> => {
    pending.push(piece)
    pendingLength += piece.length
    if (pendingLength >= 1 << 18) await flush()
  }

  try {
    if (format === 'jsonl') {
      await emit(`${JSON.stringify({ snapshot: 'explore', version: 1, generated_at: ctx.generatedAt, languages: ctx.plans.map(plan => plan.code) })}\n`)
      for (const plan of ctx.plans) {
        for (const item of itemsOf(ctx, plan)) await emit(`${JSON.stringify({ language: plan.code, ...item })}\n`)
      }
    } else {
      await writeDocument(ctx, format, emit)
    }
    await flush()
    out.end()
    await Promise.race([finished(out), failed])
    if (!direct) await rename(temporary, target)
  } catch (err) {
    out.destroy()
    // Cleanup must not mask the error that matters.
    if (!direct) await rm(temporary, { force: true }).catch(() => {})
    throw err
  }

  const items: Record<string, number> = {}
  for (const plan of ctx.plans) items[plan.code] = plan.count
  return { path: target, bytes, format, items, companies: summarize(ctx) }
}

/** A JSON document (format v1), item by item. */
async function writeDocument (ctx: Context, format: 'pretty' | 'lines', emit: (piece: string) => Promise<void>): Promise<void> {
  await emit(`{\n  "generated_at": ${JSON.stringify(ctx.generatedAt)},\n  "languages": {`)
  for (const [l, plan] of ctx.plans.entries()) {
    await emit(`${l === 0 ? '' : ','}\n    ${JSON.stringify(plan.code)}: [`)
    let first = true
    for (const item of itemsOf(ctx, plan)) {
      const json = format === 'pretty'
        ? JSON.stringify(item, null, 2).replaceAll('\n', '\n      ')
        : JSON.stringify(item)
      await emit(`${first ? '' : ','}\n      ${json}`)
      first = false
    }
    await emit(first ? ']' : '\n    ]')
  }
  await emit(ctx.plans.length === 0 ? '}\n}\n' : '\n  }\n}\n')
}
