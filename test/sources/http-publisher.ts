// A publisher of a snapshot over HTTP for the source tests: ETags, Last-Modified and 304s, every request
// recorded; and the app that follows it.
import type { Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { toJsonLines, versioned, type SnapshotDoc } from '../helpers.js'
import { SecretUrl } from '../../src/secret-url.js'

export type Handler = (request: IncomingMessage, response: ServerResponse) => void

/** A publisher: serves `body` at any path with an ETag and Last-Modified, 304 to a matching If-None-Match. */
export async function publisher (t: Test) {
  let body = Buffer.from(toJsonLines(versioned(1)))
  let modified = new Date('2026-01-01T00:00:00Z')
  let override: Handler | null = null
  const seen: Array<{ method: string, ifNoneMatch: string | null, status: number }> = []
  const etag = () => `"${createHash('sha1').update(body).digest('hex')}"`
  const server = createServer((request, response) => {
    response.on('finish', () => seen.push({ method: request.method as string, ifNoneMatch: request.headers['if-none-match'] ?? null, status: response.statusCode }))
    if (override !== null) return override(request, response)
    if (request.headers['if-none-match'] === etag()) {
      response.writeHead(304, { etag: etag() }).end()
      return
    }
    response.writeHead(200, { etag: etag(), 'last-modified': modified.toUTCString(), 'content-length': body.length, 'content-type': 'application/x-ndjson' })
    response.end(request.method === 'HEAD' ? undefined : body)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise(resolve => { server.closeAllConnections(); server.close(resolve) }))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/exports/snapshot.jsonl`,
    seen,
    etag,
    publish (doc: SnapshotDoc | string) {
      body = Buffer.from(typeof doc === 'string' ? doc : toJsonLines(doc))
      modified = new Date(modified.getTime() + 1000)
    },
    /** Answers every request with `handler` from now on (null: back to normal). */
    answer (handler: Handler | null) { override = handler }
  }
}

export async function followingApp (t: Test, url: string, cacheDir: string, overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildApp(loadConfig({ overrides: { logLevel: 'silent', snapshotUrl: new SecretUrl(url), snapshotCacheDir: cacheDir, snapshotPollSeconds: 3600, ...overrides } }))
  t.teardown(() => app.close())
  await app.ready()
  return app
}

export async function servedVersion (app: FastifyInstance): Promise<number | null> {
  const res = await app.inject('/en/api/internal/explore/?limit=1')
  if (res.statusCode !== 200) return null
  return Number(/^v(\d+) /.exec((JSON.parse(res.body) as { results: Array<{ translated_title: string }> }).results[0]!.translated_title)?.[1])
}

export async function sourceStatus (app: FastifyInstance) {
  return (await app.inject('/-/status')).json().source
}
