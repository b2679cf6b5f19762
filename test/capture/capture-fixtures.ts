// What the capture tests share: a real app listening on a port, a real HTTP server in front of it that can
// answer some requests itself (storms, held requests, other APIs), the capture as a child process, and
// the served answers of two servers compared byte for byte.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import { buildTestApp, BUILT_CLI as MAIN, childEnv } from '../helpers.js'

/** The app on a snapshot document, listening on 127.0.0.1; its base URL. */
export async function listeningApp (t: Test, doc: unknown, overrides: Partial<Config> = {}): Promise<{ app: FastifyInstance, url: string }> {
  const app = await buildTestApp(t, doc, overrides)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

/** Answers a request itself (true), or lets the app behind answer it (false). */
export type Hook = (request: IncomingMessage, response: ServerResponse, n: number) => boolean | Promise<boolean>

export interface Front {
  url: string
  /** Every request target received, in order of arrival. */
  seen: string[]
  server: Server
}

/** A real HTTP server in front of `app` (answering through app.inject, with this server's Host), or in front of nothing. */
export async function frontServer (t: Test, app: FastifyInstance | null, hook: Hook = () => false): Promise<Front> {
  const seen: string[] = []
  const server = createServer((request, response) => {
    const n = seen.push(request.url ?? '')
    ;(async () => {
      if (await hook(request, response, n)) return
      if (app === null) {
        response.writeHead(404).end()
        return
      }
      const answer = await app.inject({ method: 'GET', url: request.url ?? '/', headers: { host: request.headers.host ?? '' } })
      response.writeHead(answer.statusCode, answer.headers as Record<string, string>).end(answer.rawPayload)
    })().catch((error: unknown) => { response.destroy(error as Error) })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server }
}

export interface CaptureRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Starts the capture command as a child process; `done` resolves when it has exited. */
export function startCapture (args: string[]): { child: ChildProcess, done: Promise<CaptureRun> } {
  const child = spawn(process.execPath, [MAIN, 'capture', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', chunk => { stdout += chunk })
  child.stderr!.on('data', chunk => { stderr += chunk })
  const done = once(child, 'close').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null, stdout, stderr }))
  return { child, done }
}

export async function runCaptureCli (args: string[]): Promise<CaptureRun> {
  return await startCapture(args).done
}

/** GETs each path from a server: its status and body, with the server's own origin in links written ORIGIN. */
export async function fetchAnswers (base: string, paths: readonly string[]): Promise<string[]> {
  const answers: string[] = []
  for (const path of paths) {
    const response = await fetch(`${base}${path}`)
    answers.push(`${response.status} ${(await response.text()).replaceAll(base, 'ORIGIN')}`)
  }
  return answers
}

/** A line per path whose two answers differ, showing where they part. */
export function differences (paths: readonly string[], left: readonly string[], right: readonly string[]): string[] {
  const out: string[] = []
  for (const [i, path] of paths.entries()) {
    const [a = '', b = ''] = [left[i], right[i]]
    if (a === b) continue
    let at = 0
    while (a[at] === b[at]) at++
    const from = Math.max(0, at - 80)
    out.push(`${path} at byte ${at}:\n  ${a.slice(from, at + 120)}\n  ${b.slice(from, at + 120)}`)
  }
  return out
}

/** GETs every path from two servers and compares the answers byte for byte (origins aside). */
export async function compareAnswers (a: string, b: string, paths: Iterable<string>): Promise<{ compared: number, differences: string[] }> {
  const list = [...paths]
  const [left, right] = await Promise.all([fetchAnswers(a, list), fetchAnswers(b, list)])
  return { compared: list.length, differences: differences(list, left, right) }
}

/** Page targets over every language and company, with several limits and offsets. */
export function * pagePaths (languages: Record<string, number>, companies: readonly number[], limits: readonly number[]): Generator<string> {
  for (const [code, count] of Object.entries(languages)) {
    for (const company of [null, ...companies]) {
      for (const limit of limits) {
        for (const offset of new Set([0, 1, limit, limit + 2, Math.max(0, count - 2), count, count + 3])) {
          const query = [company === null ? '' : `companies=${company}&`, `limit=${limit}`, offset === 0 ? '' : `&offset=${offset}`].join('')
          yield `/${code}/api/internal/explore/?${query}`
        }
      }
    }
  }
}
