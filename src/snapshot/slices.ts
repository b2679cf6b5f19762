// Long snapshot work as generators, run in slices so a loading service keeps answering (ADR 006).

/** Items between two points where a generator may pause: a few milliseconds of work. */
export const STEP_MASK = 0x3fff

const SLICE_MS = 8

export function runToEnd<T> (steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

export async function runInSlices<T> (steps: Generator<void, T>, sliceMs = SLICE_MS): Promise<T> {
  const pacer = new Pacer(sliceMs)
  // A pause first: from an I/O callback the first two slices ran back to back (ADR 026).
  await pacer.pause()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (pacer.due) await pacer.pause()
  }
}

/** For a loop that is not a generator: due, then pause. */
export class Pacer {
  private deadline: number

  constructor (private readonly sliceMs = SLICE_MS) {
    this.deadline = performance.now() + sliceMs
  }

  get due (): boolean {
    return performance.now() > this.deadline
  }

  async pause (): Promise<void> {
    await new Promise(resolve => setImmediate(resolve))
    this.deadline = performance.now() + this.sliceMs
  }
}
