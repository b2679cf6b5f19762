// Graceful close that finishes what is in flight, including replies still flushing to slow clients.
// Node's idle sweep (run by http.Server#close, and by Fastify's forceCloseConnections: 'idle') destroys
// a connection once its reply is *ended*, even with most of a large page still unsent: the client gets
// a truncated body. This sweep closes only connections sitting between requests, and ends the others
// once their replies have been handed to the OS.
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

export function drainOnClose (server: Server): void {
  /** Sockets that have answered at least one request → replies still being written on them. */
  const pending = new Map<Socket, number>()
  let closing = false

  server.on('request', (request, response) => {
    const socket = request.socket
    pending.set(socket, (pending.get(socket) ?? 0) + 1)
    let done = false
    const finished = () => {
      if (done) return
      done = true
      const left = (pending.get(socket) ?? 1) - 1
      pending.set(socket, left)
      // The last reply on this connection is out: let the client have it, then say goodbye.
      if (closing && left === 0) socket.end()
    }
    // 'finish': the whole reply is handed to the OS; 'close': the connection went away first.
    response.once('finish', finished)
    response.once('close', finished)
  })
  server.on('connection', socket => socket.once('close', () => pending.delete(socket)))

  // Connections that never sent a request are left to Node's request timeout, as Node leaves them.
  server.closeIdleConnections = function closeBetweenRequests () {
    closing = true
    for (const [socket, replies] of pending) {
      if (replies === 0) socket.destroy()
    }
  }
}
