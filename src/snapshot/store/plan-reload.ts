// What a reload does, decided before anything is read: a pure function of what is served and what is
// wanted (ADR 030). The store (snapshot-store.ts) finds how much of the wanted chain is served, plans, then
// carries the plan out.

/** How much of a wanted chain is served: the same snapshot, and the first `changes` of its change files. */
export interface ServedPart {
  changes: number
}

export type ReloadPlan =
  /** Load the snapshot, apply every change file beside the served state, then swap once. */
  | { kind: 'load' }
  /** The served snapshot again, its change files another list: apply them all to it, then swap once. */
  | { kind: 'rebuild' }
  /** The served chain begins the wanted one: apply its change files from the `from`-th, each swapped alone. */
  | { kind: 'extend', from: number }

/**
 * @param servedChanges change files the served state applied; null when nothing is served yet.
 * @param part how much of the wanted chain is served (null: another snapshot, or none kept to build on).
 * @param reread the snapshot is read again whatever is served (SIGHUP, a download, a snapshot alone).
 */
export function planReload (servedChanges: number | null, part: ServedPart | null, reread = false): ReloadPlan {
  if (reread || servedChanges === null || part === null) return { kind: 'load' }
  if (part.changes === servedChanges) return { kind: 'extend', from: part.changes }
  return { kind: 'rebuild' }
}
