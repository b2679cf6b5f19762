// Graceful close that lets replies to slow clients finish: Node's idle sweep would truncate them.
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

const used = Symbol('carried a request')

interface TrackedSocket extends Socket {
  [used]?: true
  _httpMessage?: ServerResponse | null
}

export function drainOnClose (server: Server): void {
  const sockets = new Set<TrackedSocket>()
  server.on('connection', (socket: TrackedSocket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  // A mark, not a listener per reply (a few percent of a cached answer).
  server.on('request', request => { (request.socket as TrackedSocket)[used] = true })

  // Connections that never sent a request are left to Node's request timeout.
  server.closeIdleConnections = function closeBetweenRequests () {
    for (const socket of sockets) {
      // Cleared once handed to the OS (as on-finished relies on).
      const reply = socket._httpMessage
      if (reply != null) {
        if (reply.writableFinished) socket.end()
        else reply.once('finish', () => socket.end())
      } else if (socket[used] === true) {
        socket.destroy()
      }
    }
  }
}
