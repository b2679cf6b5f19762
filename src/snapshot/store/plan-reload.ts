// What a reload does, decided before anything is read: a pure function of what is served and what is
// wanted (ADR 030). The store (snapshot-store.ts) finds how much of the wanted chain is served, plans, then
// carries the plan out without deciding anything more.

/** What the served state has of a wanted chain whose snapshot it serves (same file or same content). */
export interface ServedPart {
  /** The wanted chain's first `changes` change files are the served state's first, in order. */
  changes: number
  /** Per wanted change file from the `changes`-th on: the served state applied the same bytes (a kept copy). */
  laterApplied: readonly boolean[]
  /** Per wanted change file: the served state applied a file at that path (its bytes may have changed since). */
  pathApplied: readonly boolean[]
}

export interface ReloadPlan {
  /** What the change files apply to: the snapshot read anew, the served state, or the served chain's root. */
  base: 'read' | 'served' | 'root'
  /** The first change file to apply: those before it are the served state's. */
  from: number
  /** Each change file's version served as soon as it is made (the served chain extended); else the last, at once. */
  eachServed: boolean
  /**
   * Per change file, when it is refused: true leaves the served state as it is, since serving the chain short of
   * it would take back a change file served now; false serves what was made before it, and the rest waits.
   */
  keepServedIfRefused: readonly boolean[]
}

/**
 * @param wanted change files in the wanted chain
 * @param servedChanges change files the served state applied; null when nothing is served yet
 * @param part what is served of the wanted chain; null: another snapshot, or no root kept to build on
 *
 * A snapshot alone where one alone is served is read again, even unchanged: a source hands a chain when its file
 * may be another (SIGHUP, the watcher, a download, a rollback), and a SIGHUP reloads whatever it finds.
 */
export function planReload (wanted: number, servedChanges: number | null, part: ServedPart | null): ReloadPlan {
  if (servedChanges === null || part === null || (wanted === 0 && servedChanges === 0)) {
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
