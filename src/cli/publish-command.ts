// `explore-replica publish`: a file checked as a replica would, uploaded under its name, then the fleet's manifest
// replaced if unchanged since read: a replica never sees a manifest naming an object not yet there.
import { createReadStream } from 'node:fs'
import { mkdtemp, rename, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { parseArgs } from 'node:util'
import { SnapshotError, UsageError, ManifestError, PublishError } from '../errors.js'
import { MANIFEST_SUFFIX, type Manifest, type ManifestImage } from '../schemas/manifest.js'
import { readChangeFile } from '../snapshot/changes/read-change-file.js'
import { FINGERPRINT, IMAGE_FORMAT } from '../snapshot/images/image-fingerprint.js'
import { writeImage } from '../snapshot/images/version-image.js'
import { loadSnapshotFile } from '../snapshot/load/load-snapshot.js'
import type { SnapshotModel } from '../snapshot/model/snapshot-model.js'
import { VERSION } from '../version.js'
import { manifestText, parseManifest } from '../sources/read-manifest.js'
import { shownUrl } from '../secret-url.js'
import { digestOf, type PublishTarget, type ReadManifest } from './publish-target.js'

export const PUBLISH_USAGE = `Usage: explore-replica publish --to DEST (--snapshot FILE | --changes FILE | --step-back N)
Publishes to a fleet's manifest (DEST/${MANIFEST_SUFFIX}), which replicas follow with SNAPSHOT_URL. DEST is
s3://bucket/prefix/ (AWS's standard settings: AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_ENDPOINT_URL_S3, profiles, roles) or a directory (served by an HTTP server that sends ETags).
  --snapshot FILE       check FILE as a replica loads it, upload it under its name, then write a manifest
                        that names it alone: replicas load it whole
  --changes FILE        check the change file, upload it under its name, then append it to the manifest's
                        changes: replicas download and apply it alone
  --step-back N         rewrite the manifest without its last N changes: replicas step back to what they
                        hold, with no download (publish the change again to go forward)
  --max-change PERCENT  with --snapshot: refuse a snapshot whose items in a language differ from the snapshot
                        published now by more than PERCENT (default 10), or that empties a language
  --force               with --snapshot: publish even so (a language's count changed on purpose)
  --no-image            with --snapshot: publish no version image beside it (a replica that renders as this
                        code does joins from the image, then downloads the snapshot; it is about its size)
  --s3-force-path-style path-style S3 addressing (MinIO, moto, some Ceph)
A name already published with other bytes is refused (objects are immutable); the same bytes again are no
error. Objects go first, the manifest last, and the manifest is replaced only if no one replaced it meanwhile.
Exit 0 published; 1 refused (an invalid file, a count that changed too much, a name reused, a manifest missing
or changed meanwhile, a store that refuses or cannot be reached); 2 bad usage.
`

export async function publishCommand (argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      snapshot: { type: 'string' },
      changes: { type: 'string' },
      'step-back': { type: 'string' },
      'max-change': { type: 'string' },
      force: { type: 'boolean' },
      'no-image': { type: 'boolean' },
      's3-force-path-style': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) {
    process.stdout.write(PUBLISH_USAGE)
    return 0
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument ${JSON.stringify(positionals[0])}: name the file with --snapshot or --changes`
    )
  }
  if (values.to === undefined) throw new UsageError('--to s3://bucket/prefix/ or --to DIR is required')
  const actions = [values.snapshot, values.changes, values['step-back']].filter(value => value !== undefined)
  if (actions.length !== 1) throw new UsageError('give one of --snapshot FILE, --changes FILE, --step-back N')
  const stepBack = values['step-back'] === undefined ? null : Number(values['step-back'])
  if (stepBack !== null &&
      !(Number.isSafeInteger(stepBack) && stepBack >= 1 && /^\d+$/.test(values['step-back'] ?? ''))) {
    throw new UsageError(
      `--step-back must be a whole number of changes, 1 or more; got ${JSON.stringify(values['step-back'])}`
    )
  }
  const maxChange = values['max-change'] === undefined ? DEFAULT_MAX_CHANGE : Number(values['max-change'])
  if (!/^\d+(\.\d+)?$/.test(values['max-change'] ?? '0') || !(maxChange >= 0)) {
    throw new UsageError(`--max-change must be a percentage, 0 or more; got ${JSON.stringify(values['max-change'])}`)
  }
  if (values.snapshot === undefined &&
    (values['max-change'] !== undefined || values.force === true || values['no-image'] === true)) {
    throw new UsageError('--max-change, --force and --no-image go with --snapshot FILE')
  }
  const limit = values.force === true ? null : maxChange
  const target = await openTarget(values.to, values['s3-force-path-style'] === true)
  try {
    if (values.snapshot !== undefined) {
      return await publishFile(target, 'snapshot', values.snapshot, limit, values['no-image'] !== true)
    }
    if (values.changes !== undefined) return await publishFile(target, 'changes', values.changes)
    return await stepBackBy(target, stepBack as number)
  } catch (error) {
    if (!(error instanceof PublishError)) throw error
    process.stderr.write(`${error.message}\n`)
    return 1
  } finally {
    target.close?.()
  }
}

async function openTarget (to: string, forcePathStyle: boolean): Promise<PublishTarget> {
  if (/^s3:/i.test(to)) {
    const url = new URL(to)
    if (url.hostname === '') throw new UsageError(`--to ${shownUrl(to)}: an S3 destination is s3://bucket/prefix/`)
    const { S3Target } = await import('./publish-to-s3.js')
    return new S3Target(url, { forcePathStyle })
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(to)) {
    throw new UsageError(`--to ${shownUrl(to)}: a destination is s3://bucket/prefix/ or a directory`)
  }
  const { DirectoryTarget } = await import('./publish-to-directory.js')
  return new DirectoryTarget(to)
}

const DEFAULT_MAX_CHANGE = 10

/** Why `after` may be a broken export (Hollow's record-count variance): a language emptied, or moved too far. */
function countProblems (
  before: Readonly<Record<string, number>>, after: Readonly<Record<string, number>>, maxChange: number
): string[] {
  const problems: string[] = []
  for (const [language, was] of Object.entries(before)) {
    const now = after[language] ?? 0
    if (was === 0 || now === was) continue
    const percent = Math.abs(now - was) / was * 100
    if (now === 0) problems.push(`${language} has no items, where ${was.toLocaleString('en-US')} are published`)
    else if (percent > maxChange) {
      problems.push(`${language} has ${now.toLocaleString('en-US')} items, ${Number(percent.toFixed(1))}% ${now < was ? 'fewer' : 'more'} than the ${was.toLocaleString('en-US')} published (--max-change ${maxChange}%)`)
    }
  }
  return problems
}

async function publishFile (
  target: PublishTarget, kind: 'snapshot' | 'changes', file: string, maxChange: number | null = null, withImage = false
): Promise<number> {
  const name = basename(file)
  const found = await target.readManifest()
  const current = found === null ? null : manifestOf(target, found)
  let next: Manifest
  if (kind === 'snapshot') {
    // Another snapshot's image goes with it.
    const { image: _image, ...kept } = current ?? {}
    next = { ...kept, manifest: 'explore', version: 1, snapshot: name, changes: [] }
  } else {
    if (current === null) {
      throw new PublishError(`${target.shown} has no ${MANIFEST_SUFFIX}: publish a snapshot first (--snapshot FILE)`)
    }
    if (current.changes.includes(name)) {
      throw new PublishError(`${name} is already in the manifest's changes: nothing to do`)
    }
    next = { ...current, changes: [...current.changes, name] }
  }
  // The name checked by the manifest's own rules before anything is read or sent.
  try {
    parseManifest(manifestText(next))
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error
    throw new PublishError(`${file} cannot be published under its name: ${error.problems.join('; ')}`)
  }
  const scratch = kind === 'snapshot' && withImage ? await mkdtemp(join(tmpdir(), 'explore-publish-')) : null
  try {
    let image: { file: string, image: ManifestImage } | null = null
    try {
      // Checked as a replica checks it: a fleet never downloads what it would refuse.
      if (kind === 'snapshot') {
        const model = await loadSnapshotFile(file)
        try {
          next.items = model.itemCounts()
          // Before the image is written (seconds at 1M): a broken export is told at once.
          const problems = maxChange === null || current?.items === undefined
            ? []
            : countProblems(current.items, next.items, maxChange)
          if (problems.length > 0) {
            throw new PublishError(`${file} may be a broken export: ${problems.join('; ')}\nnothing published (--force publishes it anyway)`)
          }
          if (scratch !== null) image = await writeImageFile(model, scratch)
        } finally {
          model.memory.retire()
        }
      } else {
        await readChangeFile(file)
      }
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error
      throw new PublishError(`${error.message}\nnothing published`)
    }
    const uploaded = await target.putObject(name, file)
    if (image !== null) {
      next.image = image.image
      await target.putObject(next.image.name, image.file)
    }
    await target.writeManifest(manifestText(next), found)
    process.stdout.write(
      `${uploaded === 'uploaded' ? target.putVerb : 'Already there, the same bytes:'} ${name}; ${target.shown}${MANIFEST_SUFFIX} now lists ${describe(next)}\n`
    )
    return 0
  } finally {
    if (scratch !== null) await rm(scratch, { recursive: true, force: true })
  }
}

/**
 * Named by a digest of its bytes: objects are never replaced, and code that renders otherwise makes other bytes. The
 * manifest's entry says what a replica checks before it trusts the image (ADR 042).
 */
export async function writeImageFile (
  model: SnapshotModel, dir: string
): Promise<{ file: string, image: ManifestImage }> {
  const made = join(dir, 'made.image')
  await writeImage(made, model, null)
  const digest = await digestOf(createReadStream(made), 'sha256')
  const file = join(dir, `${digest.slice(0, 32)}.image`)
  await rename(made, file)
  return {
    file,
    image: {
      name: basename(file),
      format: IMAGE_FORMAT,
      by: VERSION,
      fingerprint: FINGERPRINT,
      snapshot: model.info.version,
      digest,
      bytes: (await stat(file)).size
    }
  }
}

async function stepBackBy (target: PublishTarget, count: number): Promise<number> {
  const found = await target.readManifest()
  if (found === null) throw new PublishError(`${target.shown} has no ${MANIFEST_SUFFIX}: nothing to step back from`)
  const current = manifestOf(target, found)
  if (count > current.changes.length) {
    throw new PublishError(
      `the manifest lists ${current.changes.length} change${current.changes.length === 1 ? '' : 's'}: cannot step back ${count}`
    )
  }
  const next = { ...current, changes: current.changes.slice(0, current.changes.length - count) }
  await target.writeManifest(manifestText(next), found)
  process.stdout.write(
    `${target.shown}${MANIFEST_SUFFIX} now lists ${describe(next)} (stepped back from ${current.changes.at(-1) ?? ''})\n`
  )
  return 0
}

function manifestOf (target: PublishTarget, found: ReadManifest): Manifest {
  try {
    return parseManifest(found.text)
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error
    throw new PublishError(
      `${target.shown}${MANIFEST_SUFFIX} is not a manifest (${error.problems.join('; ')}): fix or remove it first`
    )
  }
}

function describe (manifest: Manifest): string {
  const changes = manifest.changes.length
  return `${manifest.snapshot}${manifest.image === undefined ? '' : ` (its image ${manifest.image.name})`} and ${changes === 0 ? 'no changes' : `${changes} change${changes === 1 ? '' : 's'} (the last ${manifest.changes.at(-1) ?? ''})`}`
}
