// Runs long snapshot work, written as generators that yield often, in one go or in slices with a turn of the
// event loop between them, so a loading service keeps answering (ADR 006). A step between yields can overrun.

/** Items (or merged elements) between two points where a generator may pause: a few milliseconds of work. */
export const STEP_MASK = 0x3fff

/** Work between two turns of the event loop while a snapshot loads. */
const SLICE_MS = 8

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
  // A pause first: from an I/O callback, it comes back in the same turn's check phase, so the first two
  // slices ran back to back; from the check phase it waits a whole turn (ADR 026).
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
