// Questions over a thread's port matched to their answers by id (ADR 029).

export class Requests<T> {
  private readonly waiting = new Map<number, (value: T) => void>()
  private lastId = 0

  /** Resolves with undefined after `timeoutMs`, when given. */
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

  /** One timed out is dropped. */
  answer (id: number, value: T): void {
    this.waiting.get(id)?.(value)
  }
}
