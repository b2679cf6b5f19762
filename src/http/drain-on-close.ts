// Graceful close that finishes what is in flight, including replies still flushing to slow clients.
// Node's idle sweep (run by http.Server#close, and by Fastify's forceCloseConnections: 'idle') destroys
// a connection once its reply is *ended*, even with most of a large page still unsent: the client gets
// a truncated body. This sweep closes only connections sitting between requests, and ends the others
// once their replies have been handed to the OS.
//
// Nothing is done per request while the server runs (a listener per reply cost a few percent of a
// cached answer): a connection is marked when it carries its first request, and at close the reply in
// progress on it, if any, is Node's `socket._httpMessage` (set while a reply owns the socket, cleared
// when the reply has been handed to the OS: what `on-finished` and Node's own http client rely on).
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
  server.on('request', request => { (request.socket as TrackedSocket)[used] = true })

  // Connections that never sent a request are left to Node's request timeout, as Node leaves them.
  server.closeIdleConnections = function closeBetweenRequests () {
    for (const socket of sockets) {
      const reply = socket._httpMessage
      if (reply != null) {
        // The last reply on this connection: let the client have it, then say goodbye.
        if (reply.writableFinished) socket.end()
        else reply.once('finish', () => socket.end())
      } else if (socket[used] === true) {
        socket.destroy()
      }
    }
  }
}
