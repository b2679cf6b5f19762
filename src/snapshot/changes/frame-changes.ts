// A change file's framing: a snapshot's JSON Lines framing, with its own header rules.
import { TypeCompiler } from '@sinclair/typebox/compiler'
import '../../schemas/formats.js'
import { ChangesHeaderSchema } from '../../schemas/change-file.js'
import { LineFraming } from '../load/frame-lines.js'
import type { ParsedBatch } from '../load/parse-batch.js'

const headerCheck = TypeCompiler.Compile(ChangesHeaderSchema)

const HEADER_EXAMPLE = '{"changes": "explore", "version": 1, "id": "…"}'

export class ChangeFraming extends LineFraming {
  protected override readonly changes = true
  /** Null until merged, or when missing or bad (the file is refused). */
  id: string | null = null

  override header ({ header, firstValueAt }: ParsedBatch, problemsBefore: (at: number) => void): void {
    const { report } = this.parts.merge
    if (header === null) {
      // The file's first JSON value is in this batch and is no header.
      if (this.content || firstValueAt === 0) return
      problemsBefore(firstValueAt)
      report.add(
        `${this.where({ at: firstValueAt })}the header is missing: a change file starts with ${HEADER_EXAMPLE}`
      )
      return
    }
    problemsBefore(header.at)
    const where = this.where(header)
    const { value } = header
    if (this.content) {
      // A later file's header (files joined): only a batch's first value is taken for one.
      report.add(`${where}op: is required ("upsert" or "delete"); a header belongs on the first line only`)
    } else if (!headerCheck.Check(value)) {
      report.addSchemaErrors(headerCheck.Errors(value), where)
    } else {
      this.id = value.id
      this.generatedAt = value.generated_at ?? null
    }
  }

  override finish (): void {
    const { report } = this.parts.merge
    if (report.problems.length > 0) return
    if (!this.content) {
      report.add(this.lines === 0
        ? `${this.name}: the file is empty: a change file starts with ${HEADER_EXAMPLE}`
        : `${this.name}: the file has no line but blank ones`)
    }
  }
}
