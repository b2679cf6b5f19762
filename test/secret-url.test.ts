import t from 'tap'
import { inspect } from 'node:util'
import { SecretUrl, shownSource, shownUrl, shownUrlsIn } from '../src/secret-url.js'

t.test('a URL is shown without its user info, its query as ?… and its fragment as #…', async t => {
  t.equal(shownUrl('https://reader:pw@exports.example:8443/a/manifest.json?sig=S3cr3t&se=2099#frag'), 'https://exports.example:8443/a/manifest.json?…#…')
  t.equal(shownUrl('https://exports.example/a/snapshot.jsonl'), 'https://exports.example/a/snapshot.jsonl', 'nothing to hide: as given')
  t.equal(shownUrl('s3://bucket/prefix/manifest.json'), 's3://bucket/prefix/manifest.json')
  t.equal(shownUrl('http://[::1]:3000/x.json?X-Amz-Signature=abc'), 'http://[::1]:3000/x.json?…')
  t.equal(shownUrl('https://u:p@ss@h.example/x.json'), 'https://h.example/x.json', 'a password with an @: up to the last one')
  t.equal(shownUrl('https://h.example/x.json?'), 'https://h.example/x.json?…')
})

t.test('a text no URL parser takes is cut all the same', async t => {
  t.equal(shownUrl('not a url://reader:s3cret@x/y?sig=1'), 'not a url://x/y?…')
  t.equal(shownUrl('reader:s3cret@exports.example/x.json?sig=1'), 'exports.example/x.json?…', 'a URL without its scheme')
})

t.test('a source that is a file\'s path is shown as it is', async t => {
  t.equal(shownSource('/srv/a@b/snapshot?.json'), '/srv/a@b/snapshot?.json')
  t.equal(shownSource('https://h.example/x.json?sig=1'), 'https://h.example/x.json?…')
})

t.test('every URL within a library\'s message is shown so', async t => {
  t.equal(
    shownUrlsIn('Request cannot be constructed from a URL that includes credentials: https://u:p@h.example/x.json?sig=S3cr3t, nor http://a:b@c/d'),
    'Request cannot be constructed from a URL that includes credentials: https://h.example/x.json?… nor http://c/d'
  )
  t.equal(shownUrlsIn('getaddrinfo ENOTFOUND h.example'), 'getaddrinfo ENOTFOUND h.example')
})

t.test('a SecretUrl prints, serializes and inspects as its shown form; only reveal() gives the URL', async t => {
  const url = new SecretUrl('https://reader:pw@h.example/x.json?sig=S3cr3t')
  const printed = [`${url}`, String(url), JSON.stringify({ url }), inspect({ url }), inspect(url, { showHidden: true })]
  for (const text of printed) {
    t.notMatch(text, /S3cr3t|reader|pw@/, text)
    t.match(text, 'https://h.example/x.json?…')
  }
  t.equal(url.reveal().href, 'https://reader:pw@h.example/x.json?sig=S3cr3t')
})
