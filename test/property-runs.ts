// How many cases a property or fuzz test tries: its own count times PROPERTY_RUNS (default 1), so that a run
// (`PROPERTY_RUNS=10 npx tap …`, or .ci/run with it set) can try more without a file edited.
const text = process.env.PROPERTY_RUNS ?? '1'
const factor = Number(text)
if (!/^[0-9]+(\.[0-9]+)?$/.test(text.trim()) || !(factor > 0)) {
  throw new Error(`PROPERTY_RUNS=${JSON.stringify(text)}: must be a number above 0 (a multiplier of each test's own count)`)
}

/** `count` cases scaled by PROPERTY_RUNS, at least one. */
export function runs (count: number): number {
  return Math.max(1, Math.round(count * factor))
}
