import t from 'tap'
import { ConfigError } from '../../src/errors.js'
import { hasReusePort, servingThreads } from '../../src/serving/serving-mode.js'

t.test('reusePort is there from Node 22.12 in 22 and from 23.1', async t => {
  for (const version of ['20.19.5', '22.11.0', '23.0.0', '18.20.0']) t.notOk(hasReusePort(version), version)
  for (const version of ['22.12.0', '22.20.1', '23.1.0', '24.21.0', '25.0.0']) t.ok(hasReusePort(version), version)
})

t.test('WORKERS=1 serves from the one thread; more starts serving threads where Node can share the port', async t => {
  t.equal(servingThreads(1, '20.19.5'), 0)
  t.equal(servingThreads(1, '24.21.0'), 0)
  t.equal(servingThreads(3, '24.21.0'), 3)
  t.throws(() => servingThreads(2, '20.19.5'), new ConfigError('WORKERS=2 needs Node 22.12 or later (Node 24 is recommended): serving threads share the port with reusePort, which Node 20.19.5 lacks. Set WORKERS=1 here.'))
})
