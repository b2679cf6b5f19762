// Company ids as a person writes them (`1-5000,7000`, or a file with `#` comments), read into a sorted list without
// repeats, and written back as ranges.
import { readFile } from 'node:fs/promises'
import { CaptureUsageError, errnoText } from '../errors.js'

// Ten million ids is already weeks of walking at a sane rate; a larger set is a typo (`1-50000000`) exhausting memory.
const MAX_IDS = 10_000_000

const TOKEN = /^(\d+)(?:-(\d+))?$/

/** `where` names the source in errors: `--companies`, or the file (with the line). */
export function parseIdRanges (text: string, where = '--companies'): number[] {
  const ranges: Array<[number, number]> = []
  let total = 0
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const place = where.startsWith('--') ? where : `${where}:${index + 1}`
    for (const token of (line.split('#', 1)[0] ?? '').split(/[\s,]+/)) {
      if (token === '') continue
      const match = TOKEN.exec(token)
      if (match === null) {
        throw new CaptureUsageError(`${place}: ${JSON.stringify(token)} is not an id or a range of ids (like 1-5000)`)
      }
      const low = safeId(match[1] as string, token, place)
      const high = match[2] === undefined ? low : safeId(match[2], token, place)
      if (high < low) {
        throw new CaptureUsageError(`${place}: ${JSON.stringify(token)} is not a range: ${low} is above ${high}`)
      }
      total += high - low + 1
      if (total > MAX_IDS) throw new CaptureUsageError(`${place}: more than ${MAX_IDS} ids`)
      ranges.push([low, high])
    }
  }
  if (ranges.length === 0) throw new CaptureUsageError(`${where}: no ids`)
  return expand(ranges)
}

export async function readIdRanges (value: string): Promise<number[]> {
  if (!value.startsWith('@')) return parseIdRanges(value)
  const file = value.slice(1)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new CaptureUsageError(`--companies: cannot read ${file}: ${errnoText(error)}`)
  }
  return parseIdRanges(text, file)
}

/** Sorted ids as ranges again: `[1, 2, 3, 7]` → `1-3, 7`. */
export function formatIdRanges (ids: readonly number[]): string {
  const parts: string[] = []
  for (let i = 0; i < ids.length;) {
    let j = i
    while (j + 1 < ids.length && ids[j + 1] === (ids[j] as number) + 1) j++
    parts.push(j === i ? `${ids[i]}` : `${ids[i]}-${ids[j]}`)
    i = j + 1
  }
  return parts.join(', ')
}

function safeId (digits: string, token: string, place: string): number {
  const id = Number(digits)
  if (!Number.isSafeInteger(id)) {
    throw new CaptureUsageError(`${place}: ${JSON.stringify(token)}: ids stop at ${Number.MAX_SAFE_INTEGER}`)
  }
  return id
}

function expand (ranges: Array<[number, number]>): number[] {
  ranges.sort((a, b) => a[0] - b[0])
  const ids: number[] = []
  let last = -1
  for (const [low, high] of ranges) {
    for (let id = Math.max(low, last + 1); id <= high; id++) ids.push(id)
    last = Math.max(last, high)
  }
  return ids
}
