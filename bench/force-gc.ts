// A full garbage collection in another Node process, from outside: SIGUSR1 opens its inspector on
// 127.0.0.1:9229, then HeapProfiler.collectGarbage over the DevTools protocol (a minimal WebSocket client,
// so no dependency). Without it "settled" RSS depends on when V8 feels like giving memory back.
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

// Where SIGUSR1 opens the inspector unless the process was started with another --inspect-port.
const INSPECTOR_PORT = 9229

async function inspectorTargets (): Promise<Array<{ webSocketDebuggerUrl: string }> | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`, { signal: AbortSignal.timeout(1000) })
    return await response.json() as Array<{ webSocketDebuggerUrl: string }>
  } catch {
    return undefined
  }
}

async function upgrade (url: string): Promise<Socket> {
  const { pathname, port, hostname } = new URL(url)
  return await new Promise<Socket>((resolve, reject) => {
    const req = request({
      host: hostname,
      port,
      path: pathname,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64')
      }
    })
    req.once('upgrade', (_response, socket) => resolve(socket))
    req.once('response', response => reject(new Error(`inspector refused the WebSocket (${response.statusCode ?? '?'})`)))
    req.once('error', reject)
    req.end()
  })
}

/** One masked text frame, as a client must send. */
function frame (text: string): Buffer {
  const payload = Buffer.from(text, 'utf8')
  const mask = randomBytes(4)
  const header = payload.length < 126
    ? Buffer.from([0x81, 0x80 | payload.length])
    : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff])
  const masked = Buffer.alloc(payload.length)
  for (let i = 0; i < payload.length; i++) masked[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0)
  return Buffer.concat([header, mask, masked])
}

/** Sends DevTools commands one at a time and returns each `result`. */
class DevTools {
  private buffered = Buffer.alloc(0)
  private waiting: ((message: { id?: number, result?: unknown, error?: { message: string } }) => void) | undefined
  private nextId = 1

  constructor (private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk])
      this.drain()
    })
  }

  // Server frames are unmasked; lengths of 126 and 127 carry 2 and 8 more length bytes.
  private drain (): void {
    for (;;) {
      if (this.buffered.length < 2) return
      let length = (this.buffered[1] ?? 0) & 0x7f
      let offset = 2
      if (length === 126) {
        if (this.buffered.length < 4) return
        length = this.buffered.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (this.buffered.length < 10) return
        length = Number(this.buffered.readBigUInt64BE(2))
        offset = 10
      }
      if (this.buffered.length < offset + length) return
      const opcode = (this.buffered[0] ?? 0) & 0x0f
      const payload = this.buffered.subarray(offset, offset + length).toString('utf8')
      this.buffered = this.buffered.subarray(offset + length)
      if (opcode === 1) this.waiting?.(JSON.parse(payload) as { id?: number })
    }
  }

  async send (method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer`)), 30_000)
      this.waiting = message => {
        if (message.id !== id) return
        clearTimeout(timer)
        if (message.error !== undefined) reject(new Error(`${method}: ${message.error.message}`))
        else resolve(message.result)
      }
      this.socket.write(frame(JSON.stringify({ id, method, params })))
    })
  }
}

/**
 * Runs a full GC in process `pid` (a Node process that has not opened its inspector). Returns false, and
 * touches nothing, when port 9229 is taken by another process; the inspector stays open in the target,
 * so call this only on a process that is about to be stopped.
 */
export async function forceGc (pid: number): Promise<boolean> {
  if (await inspectorTargets() !== undefined) return false
  process.kill(pid, 'SIGUSR1')
  let targets: Array<{ webSocketDebuggerUrl: string }> | undefined
  for (let i = 0; i < 50 && targets === undefined; i++) {
    await sleep(100)
    targets = await inspectorTargets()
  }
  const url = targets?.[0]?.webSocketDebuggerUrl
  if (url === undefined) return false
  const socket = await upgrade(url)
  try {
    const devtools = new DevTools(socket)
    // Whoever opened 9229 in the meantime, only our process gets collected.
    const answer = await devtools.send('Runtime.evaluate', { expression: 'process.pid', returnByValue: true }) as { result?: { value?: unknown } }
    if (answer.result?.value !== pid) return false
    await devtools.send('HeapProfiler.collectGarbage')
    return true
  } finally {
    socket.destroy()
  }
}
