// The service's read model behind a bare Node HTTP server: query parsed, page gathered, links built and
// the answer rendered by the service's own code (dist/), with nothing else (no Fastify, no Host check, no
// cache, no metrics). What the model costs without a framework. Run `npm run build` first.
// Usage: node bench/experiments/raw-model-server.mjs SNAPSHOT.json PORT
import { createServer } from 'node:http'
import { loadSnapshotFile } from '../../src/snapshot/load/load-snapshot.js'
import { parseRequestQuery } from '../../dist/explore/query-string.js'
import { readPageParams } from '../../dist/explore/explore-query.js'
import { pageBody } from '../../dist/explore/explore-route.js'

const [file, port = '3444'] = process.argv.slice(2)
const model = await loadSnapshotFile(file)

createServer((request, response) => {
  const url = request.url
  const mark = url.indexOf('?')
  const path = mark < 0 ? url : url.slice(0, mark)
  const query = parseRequestQuery(mark < 0 ? '' : url.slice(mark + 1))
  const listing = model.language(path.split('/')[1])
  const body = pageBody(listing, query, `http://${request.headers.host}${path}`, readPageParams(query, 1000), null)
  response.writeHead(200, ['content-type', 'application/json', 'allow', 'GET, HEAD, OPTIONS', 'vary', 'Accept', 'etag', '"x"', 'access-control-allow-origin', '*', 'content-length', String(body.length)])
  response.end(body)
}).listen(Number(port), '127.0.0.1')
process.on('SIGINT', () => process.exit(0))
