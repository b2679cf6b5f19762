// The thread of digest-behind.ts: reads the file as far as it is written, and digests it.
import { read, readlinkSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { open, type FileHandle } from 'node:fs/promises'
import { promisify } from 'node:util'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { DigestThreadData, ToDigestThread } from './digest-behind.js'

const { file, fd, algorithm, encoding, lowPriority } = workerData as DigestThreadData
const readFd = promisify(read)
const port = parentPort as NonNullable<typeof parentPort>
const PIECE_BYTES = 8 * 1024 * 1024

// Below the threads that answer requests (ADR 009): a background download's digest waits for them. Best effort.
if (lowPriority) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isSafeInteger(tid)) setPriority(tid, 10)
  } catch {}
}

let written = 0
let end: number | null = null
let wake: (() => void) | null = null
port.on('message', (message: ToDigestThread) => {
  if ('written' in message) written = Math.max(written, message.written)
  else end = message.end
  wake?.()
})

async function digest (): Promise<string> {
  const hash = createHash(algorithm)
  const buffer = Buffer.allocUnsafe(PIECE_BYTES)
  let handle: FileHandle | null = null
  let done = 0
  try {
    for (;;) {
      const upTo = end ?? written
      if (done >= upTo) {
        if (end !== null) return hash.digest(encoding)
        await new Promise<void>(resolve => { wake = resolve })
        continue
      }
      // The caller's descriptor, already checked (a regular file, its links), is its own to close; else ours.
      const from = fd ?? (handle ??= await open(file, 'r')).fd
      const { bytesRead } = await readFd(from, buffer, 0, Math.min(PIECE_BYTES, upTo - done), done)
      if (bytesRead === 0) throw new Error(`${file} ends at ${done} bytes, before the ${upTo} written`)
      hash.update(buffer.subarray(0, bytesRead))
      done += bytesRead
    }
  } finally {
    await handle?.close()
  }
}

digest().then(value => { port.postMessage({ digest: value }) }, (error: unknown) => {
  port.postMessage({ error: (error as Error).message })
})
