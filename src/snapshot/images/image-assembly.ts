// An image put together in memory as its bytes stream in: a fleet's join has its version when the download ends, not
// after a read of the file it wrote (ADR 042). The same header and parts checks as a read; its bytes are checked
// whole by the caller (a manifest's SHA-256), so no section's checksum is computed again.
import { ImageError } from '../../errors.js'
import type { SnapshotModel } from '../model/snapshot-model.js'
import type { View } from '../model/version-arrays.js'
import {
  allocate, assemble, headerLength, parseHeader, PREFIX_BYTES, written, type ImageHeader
} from './version-image.js'

export class ImageAssembly {
  /** Bytes of the image fed so far. */
  private fed = 0
  private readonly prefix = Buffer.alloc(PREFIX_BYTES)
  private text: Buffer | null = null
  private header: ImageHeader | null = null
  private views: View[] = []
  /** The first section not fed whole. */
  private section = 0

  /** `size`: what the manifest says the image is; `admitted`: the header checked, before its arrays are made. */
  constructor (
    private readonly size: number,
    private readonly fingerprint: string,
    private readonly admitted: (header: ImageHeader) => Promise<void>
  ) {}

  /** The image's next bytes; a promise once its header is whole, which the bytes after it wait for. */
  feed (chunk: Uint8Array): Promise<void> | undefined {
    if (this.fed + chunk.length > this.size) throw new ImageError('it is longer than its manifest says')
    let rest = chunk
    while (this.header === null && rest.length > 0) {
      const into = this.text ?? this.prefix
      const at = this.text === null ? this.fed : this.fed - PREFIX_BYTES
      const taken = Math.min(into.length - at, rest.length)
      into.set(rest.subarray(0, taken), at)
      this.fed += taken
      rest = rest.subarray(taken)
      if (at + taken < into.length) continue
      if (this.text === null) {
        this.text = Buffer.alloc(headerLength(this.prefix, this.size))
        continue
      }
      const header = parseHeader(this.prefix, this.text, this.size, this.fingerprint)
      const after = rest
      return this.admitted(header).then(() => {
        this.views = allocate(header)
        this.header = header
        this.place(after)
      })
    }
    if (this.header !== null) this.place(rest)
    return undefined
  }

  /** Each byte into its section's array; padding between sections goes. */
  private place (chunk: Uint8Array): void {
    const { sections } = this.header as ImageHeader
    let at = this.fed
    let rest = chunk
    this.fed += chunk.length
    while (rest.length > 0 && this.section < sections.length) {
      const n = this.section
      const bytes = written(this.header as ImageHeader, this.views, n)
      const { offset } = sections[n] as ImageHeader['sections'][number]
      if (at >= offset + bytes.length) {
        this.section++
        continue
      }
      const skipped = Math.max(0, offset - at)
      if (skipped >= rest.length) return
      const taken = Math.min(offset + bytes.length - (at + skipped), rest.length - skipped)
      bytes.set(rest.subarray(skipped, skipped + taken), at + skipped - offset)
      at += skipped + taken
      rest = rest.subarray(skipped + taken)
    }
  }

  /** Once the caller has checked its bytes whole: the version, every index checked. */
  finish (source: string): SnapshotModel {
    if (this.header === null || this.fed !== this.size) {
      throw new ImageError(`it ends at ${this.fed} of the ${this.size} bytes its manifest says`)
    }
    return assemble(this.header, this.views, source)
  }
}
