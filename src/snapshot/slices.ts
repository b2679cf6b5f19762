// Long snapshot work (scanning, digesting, sorting and indexing a large file, deriving a version) is written
// as generators that yield often, from every few µs to a ms or two of work; these run them, in one go or
// with a turn of the event loop once a slice's time is up, so that a service loading a snapshot beside the
// one it serves keeps answering. A step between two yields is what can overrun a slice: keep steps short.

/** Work between two turns of the event loop while a snapshot loads: a reloading service keeps answering. */
export const SLICE_MS = 8

/** Runs the steps to the end at once (small files, tests, the converter). */
export function runToEnd<T> (steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/** Runs the steps with a pause before the first and after every `sliceMs` of work. */
export async function runInSlices<T> (steps: Generator<void, T>, sliceMs = SLICE_MS): Promise<T> {
  const pacer = new Pacer(sliceMs)
  // A pause first, so that every slice runs in the check phase. Started from an I/O callback (a change
  // file's read ends in one), the first slice's pause came back in that same turn's check phase, before
  // any timer or request, and two slices ran back to back (docs/decisions/026). A pause from the check
  // phase waits a whole turn.
  await pacer.pause()
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (pacer.due) await pacer.pause()
  }
}

/** Slices of work for a loop that is not a generator (the readers of both formats): due, then pause. */
export class Pacer {
  private deadline: number

  constructor (private readonly sliceMs = SLICE_MS) {
    this.deadline = performance.now() + sliceMs
  }

  /** This slice's time is up. */
  get due (): boolean {
    return performance.now() > this.deadline
  }

  /** A turn of the event loop, then a new slice. */
  async pause (): Promise<void> {
    await new Promise(resolve => setImmediate(resolve))
    this.deadline = performance.now() + this.sliceMs
  }
}
