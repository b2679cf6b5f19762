// Jobs run one after another, however each ended; p-queue does this too, but its current major needs Node 22.

export class JobQueue {
  #tail: Promise<unknown> = Promise.resolve()

  run<T> (job: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(job)
    this.#tail = run.catch(() => {})
    return run
  }

  /** Jobs queued meanwhile included. */
  async idle (): Promise<void> {
    let tail
    do {
      tail = this.#tail
      await tail
    } while (tail !== this.#tail)
  }
}
