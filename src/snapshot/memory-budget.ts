// The memory budget: a file that cannot fit is refused like a bad one, never killed by the kernel (ADR 024).
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { TooBigError, type MemoryShortfall } from '../errors.js'
import { THREADS_FROM_BYTES } from './load/parse-pool.js'
import { memoryGoing } from './model/item-memory.js'

const MiB = 1024 * 1024

export type BudgetSource = 'MEMORY_LIMIT_MB' | 'cgroup v2' | 'cgroup v1' | 'machine'

export interface MemoryBudget {
  bytes: number
  source: BudgetSource
}

/** `root`: where /proc and /sys are (tests give their own). */
export function resolveBudget (
  limitMb: number | null, { root = '/', machineBytes = totalmem() }: { root?: string, machineBytes?: number } = {}
): MemoryBudget {
  if (limitMb !== null) return { bytes: limitMb * MiB, source: 'MEMORY_LIMIT_MB' }
  const cgroup = cgroupLimit(root)
  // A limit above the machine's memory limits nothing (v1 writes "no limit" as a huge number).
  if (cgroup !== null && cgroup.bytes < machineBytes) return cgroup
  return { bytes: machineBytes, source: 'machine' }
}

export function cgroupLimit (root: string): MemoryBudget | null {
  const memberships = readText(join(root, 'proc/self/cgroup'))
  const mounts = readText(join(root, 'proc/self/mountinfo'))
  if (memberships === null || mounts === null) return null
  const v2 = limitOf(root, memberships, mounts, 'cgroup2', '', 'memory.max')
  if (v2 !== null) return { bytes: v2, source: 'cgroup v2' }
  const v1 = limitOf(root, memberships, mounts, 'cgroup', 'memory', 'memory.limit_in_bytes')
  return v1 === null ? null : { bytes: v1, source: 'cgroup v1' }
}

/** The lowest up to the mount: a parent's limit binds too. `controller` '' is v2 (`0::/path`). */
function limitOf (
  root: string, memberships: string, mounts: string, fsType: string, controller: string, file: string
): number | null {
  const membership = memberships.split('\n').map(line => line.split(':')).find(([id, controllers]) =>
    controller === '' ? id === '0' && controllers === '' : (controllers ?? '').split(',').includes(controller))
  if (membership === undefined) return null
  const path = membership.slice(2).join(':')
  // mountinfo: id parent major:minor root mountpoint options [optional fields] - fstype source superoptions
  const mount = mounts.split('\n').map(line => line.split(' - ')).find(([, after]) => {
    const [type, , options] = (after ?? '').split(' ')
    return type === fsType && (controller === '' || (options ?? '').split(',').includes(controller))
  })
  if (mount === undefined) return null
  const [, mountRoot, mountPoint] = (mount[0] as string).split(' ').slice(2)
  // Inside a cgroup namespace the path is already relative to the mount.
  const inside = mountRoot !== undefined && mountRoot !== '/' && path.startsWith(mountRoot)
    ? path.slice(mountRoot.length)
    : path
  const top = join(root, mountPoint as string)
  let lowest: number | null = null
  for (let dir = join(top, inside); ; dir = dirname(dir)) {
    const text = readText(join(dir, file))?.trim()
    const value = text === undefined || text === 'max' ? NaN : Number(text)
    if (Number.isSafeInteger(value) && value > 0 && (lowest === null || value < lowest)) lowest = value
    if (relative(top, dir) === '' || dir === dirname(dir)) break
  }
  return lowest
}

function readText (file: string): string | null {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return null
  }
}

/** Not write-snapshot-file.ts's layouts. */
export type ParsedFormat = 'json' | 'jsonl'

/**
 * A load's peak above the RSS before it (first loads' VmHWM less that RSS), rounded up; a reload measured less (ADR
 * 024, docs/guides/capacity.md).
 */
export const PEAK_ESTIMATE: Record<
  'inline' | 'pool', Record<ParsedFormat, { fixedBytes: number, perFileByte: number }>
> = {
  inline: {
    json: { fixedBytes: 8e6, perFileByte: 2.9 },
    jsonl: { fixedBytes: 8e6, perFileByte: 2.2 }
  },
  pool: {
    json: { fixedBytes: 160e6, perFileByte: 1.21 },
    jsonl: { fixedBytes: 150e6, perFileByte: 1.2 }
  }
}

/** Sections read into place, little beside them (ADR 033). */
const IMAGE_PEAK = { fixedBytes: 16e6, perFileByte: 1.02 }

/** `scale`: MEMORY_ESTIMATE_SCALE (1 but in tests). */
export function estimatePeak (bytes: number, format: ParsedFormat | 'image', scale = 1): number {
  const { fixedBytes, perFileByte } = format === 'image'
    ? IMAGE_PEAK
    : PEAK_ESTIMATE[bytes < THREADS_FROM_BYTES ? 'inline' : 'pool'][format]
  return Math.ceil((fixedBytes + bytes * perFileByte) * scale)
}

/** MiB, as MEMORY_LIMIT_MB counts them. */
export function megabytes (bytes: number): string {
  return `${Math.round(bytes / MiB).toLocaleString('en-US')} MB`
}

/** `reservedBytes`: the caches' room, which is not free. */
export function shortfallText ({ neededBytes, freeBytes, budgetBytes }: MemoryShortfall, reservedBytes = 0): string {
  const reserved = reservedBytes > 0 ? ` (${megabytes(reservedBytes)} kept for the caches)` : ''
  return `needs ~${megabytes(neededBytes)} at its peak; ${megabytes(Math.max(0, freeBytes))} of the ${megabytes(budgetBytes)} budget are free${reserved}`
}

export interface LoadWatch {
  check: () => void
}

export interface MemoryGuard {
  readonly budget: MemoryBudget
  admit: (file: string, bytes: number, format: ParsedFormat | 'image') => Promise<LoadWatch>
}

export interface ProcessGuardOptions {
  scale?: number
  /**
   * What fills up as the service answers may still grow to (the caches, ADR 037; the journals, ADR 041): not free for
   * a load, though RSS may not hold it yet.
   */
  reservedBytes?: number
  rss?: () => number
  /** Whether memory let go may still be counted in `rss`. */
  going?: (ms: number) => boolean
  waitMs?: number
}

/**
 * The budget is the whole process's, serving threads included (`elsewhere`: ADR 034); `reservedBytes` are set aside
 * for what fills up as the service answers: the caches at their most (ADR 037), the request journals (ADR 041).
 */
export function memoryGuard (
  config: { memoryLimitMb: number | null, memoryEstimateScale: number }, elsewhere: () => boolean = () => false,
  reservedBytes = 0
): MemoryGuard {
  return new ProcessMemoryGuard(resolveBudget(config.memoryLimitMb), {
    scale: config.memoryEstimateScale,
    reservedBytes,
    going: ms => {
      // Both asked: memoryGoing also runs the collection that lets this thread's share go.
      const here = memoryGoing(ms)
      const there = elsewhere()
      return here || there
    }
  })
}

const RELEASE_WAIT_MS = 2000
/** RSS has no event for falling: read again this often meanwhile. */
const RELEASE_POLL_MS = 50
/** While RSS still falls below its lowest by this much, the wait goes on, up to RELEASE_WAIT_LONGEST × the wait. */
const STILL_FALLING_BYTES = MiB
const RELEASE_WAIT_LONGEST = 5

/**
 * A file fits when RSS now, the caches' reserve and its estimated peak are within the budget; its watch stops the load
 * at the budget.
 */
export class ProcessMemoryGuard implements MemoryGuard {
  private readonly scale: number
  private readonly reservedBytes: number
  private readonly rss: () => number
  private readonly going: (ms: number) => boolean
  private readonly waitMs: number

  constructor (readonly budget: MemoryBudget, options: ProcessGuardOptions = {}) {
    this.scale = options.scale ?? 1
    this.reservedBytes = options.reservedBytes ?? 0
    // One read of /proc on Linux: a load can ask often.
    this.rss = options.rss ?? (() => process.memoryUsage.rss())
    this.going = options.going ?? memoryGoing
    this.waitMs = options.waitMs ?? RELEASE_WAIT_MS
  }

  async admit (file: string, bytes: number, format: ParsedFormat | 'image'): Promise<LoadWatch> {
    const neededBytes = estimatePeak(bytes, format, this.scale)
    // The caches may fill after the load as well as before it: counted full, as the estimate errs high.
    const free = (): number => this.budget.bytes - this.rss() - this.reservedBytes
    let freeBytes = free()
    // Memory let go may still be in RSS (over a 200 MB budget ~0.9 s after an abandoned load): waited for.
    // Beside other busy processes it took longer: a wait that ended while RSS still fell refused the editor's next
    // save (CI, 2026-12-02), so the wait lasts as long as RSS keeps falling.
    if (neededBytes > freeBytes && this.going(this.waitMs)) {
      const latest = Date.now() + RELEASE_WAIT_LONGEST * this.waitMs
      // Against the most seen free: RSS that goes up and down with the requests' garbage is not falling.
      let most = freeBytes
      for (let until = Date.now() + this.waitMs; neededBytes > freeBytes && Date.now() < until;) {
        await delay(RELEASE_POLL_MS)
        freeBytes = free()
        if (freeBytes - most >= STILL_FALLING_BYTES) until = Math.min(latest, Date.now() + this.waitMs)
        most = Math.max(most, freeBytes)
      }
    }
    const shortfall = { neededBytes, freeBytes, budgetBytes: this.budget.bytes }
    if (neededBytes > freeBytes) throw new TooBigError(file, shortfallText(shortfall, this.reservedBytes), shortfall)
    return watchLoad(file, neededBytes, this.budget.bytes, this.rss)
  }
}

export function watchLoad (file: string, neededBytes: number, budgetBytes: number, rss: () => number): LoadWatch {
  return {
    check () {
      const used = rss()
      if (used < budgetBytes) return
      const shortfall = { neededBytes, freeBytes: budgetBytes - used, budgetBytes }
      throw new TooBigError(
        file,
        `reached the ${megabytes(budgetBytes)} budget while loading (${megabytes(used)} in use; estimated to need ~${megabytes(neededBytes)} at its peak): the load was abandoned`,
        shortfall
      )
    }
  }
}
