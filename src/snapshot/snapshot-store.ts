// Holds the model being served and swaps in a new one in a single assignment. Readers take the model
// once per request (`current()`), so a request never sees two snapshots.
import type { SnapshotModel } from './snapshot-model.js'

export class SnapshotStore {
  private model: SnapshotModel

  constructor (initial: SnapshotModel) {
    this.model = initial
  }

  current (): SnapshotModel {
    return this.model
  }

  replace (model: SnapshotModel): void {
    this.model = model
  }
}
