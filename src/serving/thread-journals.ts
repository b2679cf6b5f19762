// The serving threads' request journals for GET and DELETE /-/requests (ADR 041): each asked, each answering its own.
import type { JournalPart } from '../http/request-journal.js'
import { Requests } from './requests-by-id.js'
import { send, type Slot } from './thread-slot.js'

const JOURNAL_TIMEOUT_MS = 2_000

export class ThreadJournals {
  private readonly asked = new Requests<JournalPart | null>()

  constructor (private readonly slots: readonly Slot[]) {}

  /** Every listening thread's part; one that does not answer in time is left out. `reset`: each forgets first. */
  async collect (reset: boolean): Promise<JournalPart[]> {
    const parts = await Promise.all(this.slots.filter(slot => slot.listening).map(async slot =>
      await this.asked.ask(id => { send(slot, { type: 'journal', id, reset }) }, JOURNAL_TIMEOUT_MS)))
    return parts.filter((part): part is JournalPart => part !== undefined && part !== null)
  }

  answer (id: number, part: JournalPart | null): void {
    this.asked.answer(id, part)
  }
}
