// Jobs run one after another, each after every job before it has ended, however it ended: the store's reloads, the
// kept versions' copies, the operator's actions. p-queue does this too, but its current major needs Node 22.

export class JobQueue {
  #tail: Promise<unknown> = Promise.resolve()

  /** Runs `job` once every job before it has ended; settles as the job does. */
  run<T> (job: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(job)
    this.#tail = run.catch(() => {})
    return run
  }

  /** Resolves once no job runs or waits, jobs queued meanwhile included. */
  async idle (): Promise<void> {
    let tail
    do {
      tail = this.#tail
      await tail
    } while (tail !== this.#tail)
  }
}
