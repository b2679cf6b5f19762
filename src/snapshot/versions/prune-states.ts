// The default layout's states (`state-<digest>` in the user's cache, one per snapshot path or URL, ADR 025): a
// demo of each file ever served leaves one, with copies of its snapshots. Those not used for STATE_PRUNE_DAYS go.
import { readdir, rm, stat, utimes } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { StoreLogger } from '../store/snapshot-store.js'

/** A state of the default layout (config.ts, defaultStateDir). */
const DEFAULT_STATE = /^state-[0-9a-f]{12}$/
const DAY_MS = 24 * 60 * 60 * 1000

/** Marks `own` used now, then removes its siblings of the default layout not used for `days` (0: none). */
export async function pruneStates (own: string, days: number, log: StoreLogger): Promise<void> {
  if (!DEFAULT_STATE.test(basename(own))) return
  const now = new Date()
  await utimes(own, now, now)
  if (days === 0) return
  const dir = dirname(own)
  for (const entry of await readdir(dir)) {
    const state = join(dir, entry)
    if (!DEFAULT_STATE.test(entry) || state === own) continue
    const unused = now.getTime() - (await stat(state)).mtimeMs
    if (unused < days * DAY_MS) continue
    const bytes = await sizeOf(state)
    await rm(state, { recursive: true, force: true })
    log.info({ state, unusedDays: Math.floor(unused / DAY_MS), bytes }, 'removed a state not used for STATE_PRUNE_DAYS')
  }
}

async function sizeOf (path: string): Promise<number> {
  const entry = await stat(path)
  if (!entry.isDirectory()) return entry.size
  let total = 0
  for (const name of await readdir(path)) total += await sizeOf(join(path, name))
  return total
}
