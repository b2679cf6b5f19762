// A client that sends one request, waits for its answer, and sends the next, until SIGTERM: what a user
// waits for while something else holds the loop. Prints its longest waits, each with when it ended (epoch ms).
// `node --import tsx bench/experiments/one-at-a-time.ts PORT PATH`
import http from 'node:http'

const [port, path = '/en/api/internal/explore/?companies=7431&limit=5'] = process.argv.slice(2)
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const waits: Array<[number, number]> = []
const stop = { asked: false }
process.on('SIGTERM', () => { stop.asked = true })
while (!stop.asked) {
  const started = performance.now()
  await new Promise<void>(resolve => {
    http.get({ host: '127.0.0.1', port: Number(port), path, agent }, response => {
      response.resume()
      response.on('end', resolve)
    }).on('error', () => resolve())
  })
  waits.push([performance.now() - started, Date.now()])
}
waits.sort((a, b) => b[0] - a[0])
console.log(JSON.stringify({ requests: waits.length, longest: waits.slice(0, 3).map(([ms, at]) => [Math.round(ms), at]) }))
agent.destroy()
