// A load's batch buffers, reused: each moves to its parse thread and back for a later batch (ADR 010).
import { memoryPolicy } from '../memory-policy.js'

export class BatchMemory {
  private readonly spare: ArrayBuffer[] = []
  /** Each buffer holds a batch and a carried line, so any spare one will do. */
  private readonly size: number

  constructor (batchBytes: number) {
    this.size = batchBytes + 64 * 1024
  }

  /** Memory of its own: it moves to the thread that parses it. */
  take (bytes: number): Buffer {
    const at = this.spare.findIndex(buffer => buffer.byteLength >= bytes)
    if (at === -1) return Buffer.allocUnsafeSlow(Math.max(bytes, this.size)).subarray(0, bytes)
    return Buffer.from(this.spare.splice(at, 1)[0] as ArrayBuffer, 0, bytes)
  }

  /** A parsed batch's `read`, or a buffer not sent. */
  give (bytes: Uint8Array): void {
    if (memoryPolicy().reusedBatchMemory) this.spare.push(bytes.buffer as ArrayBuffer)
  }
}
