// Graceful close that lets replies to slow clients finish: Node's idle sweep would truncate them. For servers of
// http-server.ts, which count the requests each connection carried.
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { carriedARequest } from './http-server.js'

interface TrackedSocket extends Socket {
  _httpMessage?: ServerResponse | null
}

export function drainOnClose (server: Server): void {
  const sockets = new Set<TrackedSocket>()
  server.on('connection', (socket: TrackedSocket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })

  // Connections that never sent a request are left to Node's request timeout.
  server.closeIdleConnections = function closeBetweenRequests () {
    for (const socket of sockets) {
      // Cleared once handed to the OS (as on-finished relies on).
      const reply = socket._httpMessage
      if (reply != null) {
        if (reply.writableFinished) socket.end()
        else reply.once('finish', () => socket.end())
      } else if (carriedARequest(socket)) {
        socket.destroy()
      }
    }
  }
}
