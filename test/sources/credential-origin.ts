// An HTTP origin for the credential tests: files with ETags and 304s, admitted by their headers, every
// request recorded.
import type { Test } from 'tap'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { readdir, readFile } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

export interface Seen { method: string, path: string, url: string, headers: IncomingHttpHeaders }
export type Handler = (request: IncomingMessage, response: ServerResponse) => void

/**
 * An origin serving `files` (path → text) with ETags and 304s, to requests `admit` lets in (401 to the
 * others); `answer` replaces all of it. Every request is recorded with its headers.
 */
export async function origin (t: Test, admit: (headers: IncomingHttpHeaders) => boolean = () => true) {
  const files = new Map<string, string>()
  const seen: Seen[] = []
  let override: Handler | null = null
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname
    seen.push({ method: request.method as string, path, url: request.url ?? '/', headers: request.headers })
    if (override !== null) return override(request, response)
    if (!admit(request.headers)) return response.writeHead(401, { 'www-authenticate': 'Basic realm="exports"' }).end()
    const body = files.get(path)
    if (body === undefined) return response.writeHead(404).end()
    const etag = `"${createHash('sha1').update(body).digest('hex')}"`
    if (request.headers['if-none-match'] === etag) return response.writeHead(304, { etag }).end()
    response.writeHead(200, { etag, 'content-length': Buffer.byteLength(body) })
    response.end(request.method === 'HEAD' ? undefined : body)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    files,
    seen,
    /** Answers every request with `handler` from now on (null: back to the files). */
    answer (handler: Handler | null) { override = handler }
  }
}

/** Every file under `dir`: its path and contents, to look for what must not be there. */
export async function everything (dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const parts = await Promise.all(entries.map(async entry => {
    const path = join(entry.parentPath, entry.name)
    return entry.isFile() ? `${path}\n${await readFile(path, 'utf8')}` : path
  }))
  return parts.join('\n')
}
