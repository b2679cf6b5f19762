// The generator's API: a whole snapshot in memory, or streamed item by item to a file replaced in one rename.
import type { Snapshot } from '../schemas/snapshot.js'
import { formatFor, writeSnapshotFile, type SnapshotFormat } from '../snapshot/write-snapshot-file.js'
import { planSnapshot, type Context, type GenerateOptions, type LanguagePlan } from './plan-snapshot.js'
import { itemsOf } from './write-items.js'

export interface WriteOptions extends GenerateOptions {
  /** Default: formatFor(path, items). */
  format?: SnapshotFormat
}

export interface CompanySummary {
  id: number
  name: string
  /** Per language. */
  items: Record<string, number>
}

interface WriteResult {
  path: string
  bytes: number
  format: SnapshotFormat
  items: Record<string, number>
  /** Every company id, most linked in the first language first. */
  companies: CompanySummary[]
}

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

/** generateSnapshot() streamed to `path` and renamed into place; 'pretty' is JSON.stringify(snapshot, null, 2) + \n. */
export async function writeSnapshot (path: string, options: WriteOptions = {}): Promise<WriteResult> {
  const ctx = planSnapshot(options)
  const total = ctx.plans.reduce((n, p) => n + p.count, 0)
  const format = options.format ?? formatFor(path, total)
  const plans = new Map(ctx.plans.map(plan => [plan.code, plan]))
  const written = await writeSnapshotFile(path, {
    generatedAt: ctx.generatedAt,
    languages: ctx.plans.map(plan => plan.code),
    items: async (code, each) => {
      for (const item of itemsOf(ctx, plans.get(code) as LanguagePlan)) await each(item)
    }
  }, { format })
  const items: Record<string, number> = {}
  for (const plan of ctx.plans) items[plan.code] = plan.count
  return { path: written.path, bytes: written.bytes, format, items, companies: summarize(ctx) }
}
