// What the fleet tests download through: a directory served over HTTP with ETags and 304s (as nginx or a
// bucket's website would serve a publisher's folder), and a proxy in front of moto's S3; each counts the
// body bytes it sends per path, so a test can tell which objects a replica downloaded.
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Test } from 'tap'

export interface ByteCounts {
  /** Path → body bytes sent for it (200s only: a 304 sends none). */
  readonly bytes: Map<string, number>
  /** Body bytes sent for paths ending in `suffix`. */
  sent: (suffix: string) => number
  reset: () => void
}

function counts (): ByteCounts {
  const bytes = new Map<string, number>()
  return {
    bytes,
    sent: suffix => [...bytes].filter(([path]) => path.endsWith(suffix)).reduce((sum, [, n]) => sum + n, 0),
    reset: () => bytes.clear()
  }
}

/** Listening on a free port of 127.0.0.1 until the test ends (or `close`): its origin. */
async function listen (t: Test, server: Server): Promise<{ origin: string, close: () => Promise<void> }> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const close = () => new Promise<void>(resolve => {
    server.closeAllConnections()
    if (server.listening) server.close(() => resolve())
    else resolve()
  })
  t.teardown(close)
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close }
}

/**
 * `dir` over HTTP at the returned origin: GET and HEAD, strong ETags, If-None-Match answered with 304. `before`: waited
 * for before a GET's answer (a slow origin, held as long as a test needs).
 */
export async function serveDirectory (
  t: Test, dir: string, before: (path: string) => Promise<void> = async () => {}
): Promise<ByteCounts & { origin: string, close: () => Promise<void> }> {
  const counted = counts()
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)
    const held = request.method === 'GET' ? before(path) : Promise.resolve()
    held.then(async () => await readFile(join(dir, path))).then(body => {
      const etag = `"${createHash('sha1').update(body).digest('hex')}"`
      if (request.headers['if-none-match'] === etag) return response.writeHead(304, { etag }).end()
      response.writeHead(200, { etag, 'content-length': body.length })
      if (request.method === 'HEAD') return response.end()
      counted.bytes.set(path, (counted.bytes.get(path) ?? 0) + body.length)
      response.end(body)
    }, () => { response.writeHead(404).end() })
  })
  return { ...counted, ...await listen(t, server) }
}

/** A proxy to `target` (moto) that counts the body bytes of every answer to a GET, by path. */
export async function countingProxy (t: Test, target: string): Promise<ByteCounts & { origin: string, close: () => Promise<void> }> {
  const counted = counts()
  const upstream = new URL(target)
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: request.headers }, answer => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.on('data', (chunk: Buffer) => {
        if (request.method === 'GET' && answer.statusCode === 200) counted.bytes.set(path, (counted.bytes.get(path) ?? 0) + chunk.length)
      })
      answer.pipe(response)
    })
    forward.on('error', () => { response.destroy() })
    request.pipe(forward)
  })
  return { ...counted, ...await listen(t, server) }
}
