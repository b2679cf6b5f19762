// Long snapshot work (scanning, digesting, sorting and indexing a large file) is written as generators of
// steps that yield every few milliseconds' worth; these run them, in one go or with a turn of the event
// loop after every slice, so that a service loading a snapshot beside the one it serves keeps answering.
import { SLICE_MS } from './load-options.js'

/** Runs the steps to the end at once (small files, tests, the converter). */
export function runToEnd<T> (steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}

/** Runs the steps with a turn of the event loop after every `sliceMs` of work. */
export async function runInSlices<T> (steps: Generator<void, T>, sliceMs = SLICE_MS): Promise<T> {
  let deadline = performance.now() + sliceMs
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
    if (performance.now() > deadline) {
      await new Promise(resolve => setImmediate(resolve))
      deadline = performance.now() + sliceMs
    }
  }
}
