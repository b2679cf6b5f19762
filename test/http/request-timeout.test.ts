// REQUEST_TIMEOUT_MS as the docs give it: a request not whole within it is answered 408 in the service's JSON,
// checked often enough that the answer comes near the timeout, not at Node's default check every 30 s.
import t from 'tap'
import { connect } from 'node:net'
import { once } from 'node:events'
import { buildTestApp } from '../helpers.js'

t.test('a request still coming after REQUEST_TIMEOUT_MS is answered 408, near that time, and closed', async t => {
  const app = await buildTestApp(t, undefined, { requestTimeoutMs: 300 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const started = Date.now()
  // A header every 100 ms, as a slow client sends them: never the blank line that ends the request.
  socket.write('GET /en/api/internal/explore/ HTTP/1.1\r\nHost: localhost\r\n')
  const dribble = setInterval(() => { socket.write('X-a: b\r\n') }, 100)
  t.teardown(() => { clearInterval(dribble); socket.destroy() })
  let answer = ''
  socket.on('data', chunk => { answer += String(chunk) })
  socket.on('error', () => {})
  await once(socket, 'close')
  const took = Date.now() - started
  t.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*Connection: close\r\n\r\n\{"detail":/)
  // Node's own check, every 30 s, answered a 2 s timeout at 30 s; a 300 ms one is checked every 75 ms.
  t.ok(took < 10_000, `answered after ${took} ms, not at Node's 30 s check`)
})
