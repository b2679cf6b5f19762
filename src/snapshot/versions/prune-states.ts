// The default layout's states (one per snapshot path or URL, ADR 025), pruned after STATE_PRUNE_DAYS unused.
import { rmSync } from 'node:fs'
import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { StoreLogger } from '../store/store-logger.js'
import { isAlive } from '../../write-through-temporary.js'
import { OWNER_FILE } from '../../owner-only.js'

/** config.ts, defaultStateDir. */
const DEFAULT_STATE = /^state-[0-9a-f]{12}$/
/** kept-versions.ts passes over names that begin with a dot. */
const IN_USE = /^\.in-use-(\d+)$/
const DAY_MS = 24 * 60 * 60 * 1000

/** The returned function is synchronous: it runs at exit too. A state made and never served goes with it. */
export async function claimState (own: string, made: boolean, served: () => boolean): Promise<() => void> {
  const mark = join(own, `.in-use-${process.pid}`)
  await writeFile(mark, '', { mode: OWNER_FILE })
  const now = new Date()
  await utimes(own, now, now)
  return () => {
    // At exit a write may still be adding files: left as it is rather than throw in an exit handler.
    try {
      if (made && !served()) rmSync(own, { recursive: true, force: true, maxRetries: 2 })
      else rmSync(mark, { force: true })
    } catch {}
  }
}

/** `days` 0: none. */
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
      // Another start pruning it at the same moment, or unreadable: left as it is.
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
