// The pin, persisted in STATE_DIR to survive a restart; written through a temporary file, never half of one.
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { writeThroughTemporary } from '../../write-through-temporary.js'

export interface Pin {
  version: string
  /** ISO-8601. */
  pinnedAt: string
  from: string | null
}

export function pinPath (stateDir: string): string {
  return join(stateDir, 'pin.json')
}

/** Null when there is none. */
export async function readPin (file: string): Promise<Pin | null> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  const pin = JSON.parse(text) as Partial<Pin>
  if (typeof pin.version !== 'string') throw new Error(`${file} names no version`)
  return { version: pin.version, pinnedAt: pin.pinnedAt ?? new Date(0).toISOString(), from: pin.from ?? null }
}

export async function writePin (file: string, pin: Pin | null): Promise<void> {
  if (pin === null) {
    await rm(file, { force: true })
    return
  }
  await writeThroughTemporary(file, async emit => { await emit(`${JSON.stringify(pin, null, 2)}\n`) }, { ownerOnly: true })
}
