// What a reload does, decided before anything is read from what is served and what is wanted (ADR 030).

export interface ServedPart {
  /** The wanted chain's first `changes` change files are the served state's first. */
  changes: number
  /** From the `changes`-th on: the served state applied the same bytes (a kept copy). */
  laterApplied: readonly boolean[]
  /** The served state applied a file at that path (its bytes may have changed since). */
  pathApplied: readonly boolean[]
  /** The wanted snapshot is the served one by a digest its source took (a download, a kept copy): never read again. */
  known?: boolean
}

export interface ReloadPlan {
  base: 'read' | 'served' | 'root'
  from: number
  /** Each version served as it is made; else only the last, at once. */
  eachServed: boolean
  /** True when serving the chain short of that file would take back a change file served now. */
  keepServedIfRefused: readonly boolean[]
}

/**
 * A snapshot alone where one alone is served is read again, even unchanged: a SIGHUP reloads whatever it finds; not one
 * its source knows by digest to be the served one (ADR 042).
 */
export function planReload (wanted: number, servedChanges: number | null, part: ServedPart | null): ReloadPlan {
  if (servedChanges === null || part === null || (wanted === 0 && servedChanges === 0 && part.known !== true)) {
    return { base: 'read', from: 0, eachServed: false, keepServedIfRefused: new Array<boolean>(wanted).fill(false) }
  }
  const applied = (p: number): boolean => p < part.changes || part.laterApplied[p - part.changes] === true
  const keepServedIfRefused = Array.from({ length: wanted }, (_, p) => {
    if (part.pathApplied[p] === true) return true
    for (let later = p + 1; later < wanted; later++) if (applied(later)) return true
    return false
  })
  return part.changes === servedChanges
    ? { base: 'served', from: part.changes, eachServed: true, keepServedIfRefused }
    : { base: 'root', from: 0, eachServed: false, keepServedIfRefused }
}
