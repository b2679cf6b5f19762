// `publish --to DIR`: a fleet's folder on disk. Objects are written once under their own names; the manifest is
// replaced in one rename, so a replica polling it reads the old one or the new one, never half of either.
import { createReadStream } from 'node:fs'
import { readFile, rename, rm, stat } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { MANIFEST_SUFFIX } from '../schemas/manifest.js'
import { digestOf, type PublishTarget, type ReadManifest } from './publish-target.js'
import { writeThroughTemporary } from '../write-through-temporary.js'
import { makeDirectory } from '../make-directory.js'
import { errnoText, PublishError } from '../errors.js'
import { copyToEnd } from '../copy-file.js'

export class DirectoryTarget implements PublishTarget {
  readonly shown: string
  readonly putVerb = 'Copied'
  private readonly manifestFile: string

  constructor (private readonly dir: string) {
    this.shown = `${resolve(dir)}${sep}`
    this.manifestFile = join(dir, MANIFEST_SUFFIX)
  }

  async readManifest (): Promise<ReadManifest | null> {
    try {
      const text = await readFile(this.manifestFile, 'utf8')
      return { text, version: text }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw new PublishError(`${this.manifestFile} cannot be read (${errnoText(error)})`)
    }
  }

  async putObject (name: string, file: string): Promise<'uploaded' | 'present'> {
    const target = join(this.dir, name)
    if ((await stat(target).catch(() => null)) !== null) {
      if (await digestOf(createReadStream(target), 'sha256') === await digestOf(createReadStream(file), 'sha256')) {
        return 'present'
      }
      throw new PublishError(
        `${name} is already published in ${this.shown} with other content: objects are immutable once published, so publish this one under another name`
      )
    }
    await makeDirectory(this.dir)
    // Whole or not at all under its name: a replica may ask for it as soon as a manifest names it.
    const temporary = join(this.dir, `.${name}.${process.pid}.tmp`)
    try {
      await copyToEnd(file, temporary)
      await rename(temporary, target)
    } catch (error) {
      await rm(temporary, { force: true })
      throw new PublishError(`${name} could not be written to ${this.shown} (${errnoText(error)})`)
    }
    return 'uploaded'
  }

  async writeManifest (text: string, expected: ReadManifest | null): Promise<void> {
    // Another publisher's manifest, written since this one was read, is not overwritten.
    const now = await this.readManifest()
    if ((now?.version ?? null) !== (expected?.version ?? null)) {
      throw new PublishError(
        `${this.manifestFile} changed while this was published (another publisher?): nothing replaced; run again`
      )
    }
    try {
      await writeThroughTemporary(this.manifestFile, async emit => { await emit(text) })
    } catch (error) {
      throw new PublishError(`${this.manifestFile} could not be written (${errnoText(error)})`)
    }
  }
}
