// Questions sent over a thread's port, each under an id its answer carries back (ADR 029): the control asks a
// serving thread for its counts, a thread asks the control for an operator's page. The matching is done here.

/** One side's questions still waiting for their answers, by id. */
export class Requests<T> {
  private readonly waiting = new Map<number, (value: T) => void>()
  private lastId = 0

  /** Sends a question under a new id; resolves with its answer, or with undefined after `timeoutMs` when given. */
  ask (send: (id: number) => void): Promise<T>
  ask (send: (id: number) => void, timeoutMs: number): Promise<T | undefined>
  async ask (send: (id: number) => void, timeoutMs?: number): Promise<T | undefined> {
    return await new Promise<T | undefined>(resolve => {
      const id = ++this.lastId
      const timer = timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
          this.waiting.delete(id)
          resolve(undefined)
        }, timeoutMs)
      this.waiting.set(id, value => {
        clearTimeout(timer)
        this.waiting.delete(id)
        resolve(value)
      })
      send(id)
    })
  }

  /** The answer to the question asked under `id`; one no longer waited for (timed out) is dropped. */
  answer (id: number, value: T): void {
    this.waiting.get(id)?.(value)
  }
}
