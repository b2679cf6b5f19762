import t from 'tap'
import { hasReusePort, portSharing } from '../../src/cluster/port-sharing.js'

t.test('reusePort is there from Node 22.12 in 22 and from 23.1', async t => {
  for (const version of ['20.19.5', '22.11.0', '23.0.0', '18.20.0']) t.notOk(hasReusePort(version), version)
  for (const version of ['22.12.0', '22.20.1', '23.1.0', '24.21.0', '25.0.0']) t.ok(hasReusePort(version), version)
})

t.test('a worker binds the port itself only where it can and where the port is fixed', async t => {
  t.same(portSharing(3000, { worker: true, version: '24.21.0' }), { exclusive: true, reusePort: true })
  t.equal(portSharing(3000, { worker: false, version: '24.21.0' }), null, 'a single process has nobody to share with')
  t.equal(portSharing(3000, { worker: true, version: '20.19.5' }), null, 'Node 20: the primary shares the port')
  t.equal(portSharing(0, { worker: true, version: '24.21.0' }), null, 'port 0 would give each worker a port of its own')
})
