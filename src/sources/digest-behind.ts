// A large file's digest, taken on a thread of its own (a download's behind the bytes written): the thread that
// answers requests only says how far the file is written (ADR 042).
import { Worker } from 'node:worker_threads'

const THREAD = new URL(import.meta.url.endsWith('.ts') ? './digest-thread.ts' : './digest-thread.js', import.meta.url)

/** From this size a digest is taken on a thread of its own; below, starting one costs more. */
export const DIGEST_BEHIND_FROM_BYTES = 16 * 1024 * 1024

export interface DigestThreadData {
  file: string
  /** A descriptor open on it, read instead of the path. */
  fd?: number
  algorithm: 'sha1' | 'sha256'
  encoding: 'base64url' | 'hex'
  lowPriority: boolean
}

export type ToDigestThread = { written: number } | { end: number }
type FromDigestThread = { digest: string } | { error: string }

export class DigestBehind {
  private readonly thread: Worker
  private readonly result: Promise<string>

  constructor (data: DigestThreadData) {
    this.thread = new Worker(THREAD, { workerData: data })
    this.result = new Promise<string>((resolve, reject) => {
      this.thread.once('message', (message: FromDigestThread) => {
        if ('digest' in message) resolve(message.digest)
        else reject(new Error(`the digest of ${data.file} failed: ${message.error}`))
      })
      this.thread.once('error', reject)
      this.thread.once('exit', code => { reject(new Error(`the digest thread of ${data.file} exited (${code})`)) })
    })
    // A download abandoned never awaits it.
    this.result.catch(() => {})
  }

  /** The file holds at least `bytes` now. */
  written (bytes: number): void {
    this.thread.postMessage({ written: bytes } satisfies ToDigestThread)
  }

  /** The file is `bytes` long: its digest. */
  async end (bytes: number): Promise<string> {
    this.thread.postMessage({ end: bytes } satisfies ToDigestThread)
    try {
      return await this.result
    } finally {
      await this.thread.terminate()
    }
  }

  async stop (): Promise<void> {
    await this.thread.terminate()
  }
}
