#!/usr/bin/env node
// `npm run snapshot:convert -- IN OUT`: a snapshot from one format to the other (format v1 `.json`, JSON Lines
// `.jsonl`/`.ndjson`, by extension). IN is checked by the service's own loader first, so only a snapshot
// the service would serve is converted; OUT is written through a temporary file and a rename, so a watching
// service never sees half of it. Every field of every item is kept, `companies` and unknown ones included.
import { createWriteStream } from 'node:fs'
import { readFile, rename, rm } from 'node:fs/promises'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { SnapshotError } from '../errors.js'
import { isJsonLinesPath } from '../snapshot/load-json-lines.js'
import { loadSnapshotFile, scanDocument } from '../snapshot/load-snapshot.js'
import { readLines } from '../snapshot/read-lines.js'

const USAGE = `Usage: npm run snapshot:convert -- IN OUT
Converts a snapshot between format v1 (.json) and JSON Lines (.jsonl, .ndjson), by the files' extensions.
IN must be valid (it is checked as the service checks it); OUT is replaced in one rename.
`

type Emit = (piece: string) => Promise<void>

async function main (args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE)
    return 0
  }
  if (args.length !== 2) {
    process.stderr.write(USAGE)
    return 1
  }
  const [input, output] = args as [string, string]
  const toLines = isJsonLinesPath(output)
  if (isJsonLinesPath(input) === toLines) {
    process.stderr.write(`${input} and ${output} are both ${toLines ? 'JSON Lines' : 'JSON'}: nothing to convert\n`)
    return 1
  }
  const started = performance.now()
  let model
  try {
    model = await loadSnapshotFile(input)
  } catch (error) {
    process.stderr.write(`${error instanceof SnapshotError ? error.message : `${input}: ${(error as Error).message}`}\n`)
    return 1
  }
  const { generatedAt } = model.info
  const languages = model.languages
  await writeThroughRename(output, async emit => {
    if (toLines) {
      await emit(`${JSON.stringify({ snapshot: 'explore', version: 1, ...(generatedAt === null ? {} : { generated_at: generatedAt }), languages })}\n`)
      await forEachDocumentItem(input, async (language, item) => { await emit(`${JSON.stringify({ language, ...item })}\n`) })
    } else {
      await emit(`{\n  ${generatedAt === null ? '' : `"generated_at": ${JSON.stringify(generatedAt)},\n  `}"languages": {`)
      for (const [l, code] of languages.entries()) {
        await emit(`${l === 0 ? '' : ','}\n    ${JSON.stringify(code)}: [`)
        let first = true
        // One pass over the file per language: memory stays that of one line.
        await forEachLineItem(input, code, async item => {
          await emit(`${first ? '' : ','}\n      ${JSON.stringify(item)}`)
          first = false
        })
        await emit(first ? ']' : '\n    ]')
      }
      await emit('\n  }\n}\n')
    }
  })
  const counts = Object.entries(model.itemCounts()).map(([code, n]) => `${code}: ${n}`).join(', ')
  process.stdout.write(`Wrote ${output} (${counts} items) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  return 0
}

/** The items of a valid format v1 file, language by language, as they are in it. */
async function forEachDocumentItem (file: string, each: (language: string, item: object) => Promise<void>): Promise<void> {
  const raw = await readFile(file)
  const start = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0
  const scanned = scanDocument(raw, start)
  if (scanned === null) {
    // A valid document the scanner does not follow (a repeated key, say): JSON.parse decides, as the loader.
    const document = JSON.parse(raw.toString('utf8', start)) as { languages: Record<string, object[]> }
    for (const [language, items] of Object.entries(document.languages)) {
      for (const item of items) await each(language, item)
    }
    return
  }
  for (let i = 0; i < scanned.itemCount; i++) {
    const item = JSON.parse(raw.toString('utf8', scanned.itemStart[i], scanned.itemEnd[i])) as object
    await each(scanned.languages[scanned.itemLanguage[i] as number] as string, item)
  }
}

/** The items of one language in a valid JSON Lines file, without their `language`. */
async function forEachLineItem (file: string, code: string, each: (item: object) => Promise<void>): Promise<void> {
  let first = true
  await readLines(file, {
    line: async bytes => {
      const text = bytes.toString('utf8').replace(/^\ufeff/, '').trim()
      if (text === '') return true
      const value = JSON.parse(text) as Record<string, unknown>
      const header = first && 'snapshot' in value
      first = false
      if (header || value.language !== code) return true
      const { language: _language, ...item } = value
      await each(item)
      return true
    }
  })
}

/** Writes OUT through a temporary file beside it, renamed into place once whole. */
async function writeThroughRename (path: string, write: (emit: Emit) => Promise<void>): Promise<void> {
  const target = resolve(path)
  const temporary = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`)
  const out = createWriteStream(temporary)
  const failed = new Promise<never>((_resolve, reject) => { out.once('error', reject) })
  failed.catch(() => {})
  try {
    await write(async piece => {
      if (!out.write(piece)) await Promise.race([once(out, 'drain'), failed])
    })
    out.end()
    await Promise.race([finished(out), failed])
    await rename(temporary, target)
  } catch (error) {
    out.destroy()
    await rm(temporary, { force: true }).catch(() => {})
    throw error
  }
}

main(process.argv.slice(2)).then(code => { process.exitCode = code }, (error: unknown) => {
  process.stderr.write(`convert failed: ${(error as Error).message}\n`)
  process.exitCode = 1
})
