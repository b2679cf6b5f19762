// What the request journal keeps of a target and a header value: the rule naming query fields that may carry a
// secret, user info, and values cut to their bound as strings of their own.
import t from 'tap'
import { bounded, redactTarget } from '../../src/http/redact-request.js'

const PAGE = '/en/api/internal/explore/'

t.test('query fields whose decoded name looks like a secret lose their value; the API\'s own and the steering fields never do', async t => {
  for (const name of ['token', 'access_token', 'API_KEY', 'apikey', 'key', 'signature', 'sig', 'X-Amz-Signature', 'password', 'passwd', 'pwd',
    'secret', 'client_secret', 'auth', 'authorization', 'session', 'sessionid', 'credential', 'jwt', 'bearer', 'cookie', '%74oken', 'a%5Fkey', 'pass%77ord']) {
    t.equal(redactTarget(`${PAGE}?companies=3&${name}=hunter2&limit=1`), `${PAGE}?companies=3&${name}=[redacted]&limit=1`, name)
  }
  for (const name of ['companies', 'limit', 'offset', 'format', '__delay', '__status', '__code', 'q', 'page', 'lang']) {
    t.equal(redactTarget(`${PAGE}?${name}=hunter2`), `${PAGE}?${name}=hunter2`, `${name}: kept`)
  }
  t.equal(redactTarget(`${PAGE}?token`), `${PAGE}?token`, 'a name alone has no value to keep')
  t.equal(redactTarget(`${PAGE}?token=a&token=b&x=%41`), `${PAGE}?token=[redacted]&token=[redacted]&x=%41`, 'every value of a repeated field')
  t.equal(redactTarget(PAGE), PAGE)
  t.equal(redactTarget('http://user:pw@host:3000/en/?token=1'), 'http://[redacted]@host:3000/en/?token=[redacted]', 'an absolute-form target\'s user info')
  t.equal(redactTarget('http://host/a@b'), 'http://host/a@b', 'an @ in the path is no user info')
  t.equal(redactTarget('*'), '*')
})

t.test('a value past its bound is cut there, never inside a surrogate pair, as a string of its own', async t => {
  t.equal(bounded('abc', 3), 'abc')
  t.equal(bounded('abcdef', 3), 'abc')
  t.equal(bounded(`ab${'😀'}`, 3), 'ab', 'not half an emoji')
  const long = 'x'.repeat(15_000)
  t.equal(bounded(long, 256).length, 256)
})
