// The default layout's states (`state-<digest>` in the user's cache, one per snapshot path or URL, ADR 025): a
// demo of each file ever served leaves one, with copies of its snapshots. A state in use is marked; those not
// used for STATE_PRUNE_DAYS go at a start, and one a start made goes with it if nothing was ever served.
import { rmSync } from 'node:fs'
import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { StoreLogger } from '../store/snapshot-store.js'
import { isAlive } from '../../write-through-temporary.js'

/** A state of the default layout (config.ts, defaultStateDir). */
const DEFAULT_STATE = /^state-[0-9a-f]{12}$/
/** The mark of a process using a state; kept-versions.ts passes over names that begin with a dot. */
const IN_USE = /^\.in-use-(\d+)$/
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Marks `own` in use by this process and used now; `letGo` (synchronous: it runs at exit too) takes the mark
 * away, and the whole state when this start made it and `served` says nothing was ever served.
 */
export async function claimState (own: string, made: boolean, served: () => boolean): Promise<() => void> {
  const mark = join(own, `.in-use-${process.pid}`)
  await writeFile(mark, '')
  const now = new Date()
  await utimes(own, now, now)
  return () => {
    if (made && !served()) rmSync(own, { recursive: true, force: true })
    else rmSync(mark, { force: true })
  }
}

/** Removes the default layout's states beside `own` not used for `days` (0: none) and in use by no live process. */
export async function pruneStates (own: string, days: number, log: StoreLogger): Promise<void> {
  if (days === 0 || !DEFAULT_STATE.test(basename(own))) return
  const dir = dirname(own)
  for (const entry of await readdir(dir)) {
    const state = join(dir, entry)
    if (!DEFAULT_STATE.test(entry) || state === own) continue
    try {
      const unused = Date.now() - (await stat(state)).mtimeMs
      if (unused < days * DAY_MS || await inUse(state)) continue
      const bytes = await sizeOf(state)
      await rm(state, { recursive: true, force: true })
      log.info({ state, unusedDays: Math.floor(unused / DAY_MS), bytes }, 'removed a state not used for STATE_PRUNE_DAYS')
    } catch (error) {
      // Another start pruning it at the same moment, or a state this user cannot read: left as it is.
      log.warn({ state, err: error }, 'a state not used for STATE_PRUNE_DAYS could not be removed')
    }
  }
}

async function inUse (state: string): Promise<boolean> {
  for (const entry of await readdir(state)) {
    const pid = IN_USE.exec(entry)?.[1]
    if (pid !== undefined && isAlive(Number(pid))) return true
  }
  return false
}

async function sizeOf (path: string): Promise<number> {
  const entry = await stat(path)
  if (!entry.isDirectory()) return entry.size
  let total = 0
  for (const name of await readdir(path)) total += await sizeOf(join(path, name))
  return total
}
