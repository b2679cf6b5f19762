// What deploy/, docs/ and the README say of the kit as a whole: one version, package.json's, wherever an
// image tag, a tarball or a version is written (so bumping package.json alone fails here), and no compose
// file spoken of, since the kit ships none.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { PACKAGE, ROOT } from './deploy-rules.js'

/** Every text file of deploy/ and docs/, and the README. */
async function kitFiles (): Promise<string[]> {
  const files = [join(ROOT, 'README.md')]
  for (const dir of ['deploy', 'docs']) {
    const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })
    files.push(...entries.filter(entry => entry.isFile() && !/\.(png|jpe?g|gif|svg)$/.test(entry.name)).map(entry => join(entry.parentPath, entry.name)))
  }
  return files.sort()
}

/** The ways this package's version is written: an image tag, npm pack's tarball, --version, the image's ARG, /-/status. */
const VERSION_MENTIONS = [
  /\bexplore-replica:(\d[\w.-]*)/g,
  /\bexplore-replica-(\d+\.\d+\.\d+[\w.-]*?)\.tgz\b/g,
  /\bexplore-replica v?(\d+\.\d+\.\d+)\b/g,
  /\bARG VERSION=(\S+)/g,
  /"version":\s*"(\d+\.\d+\.\d+)"/g,
  /(?<!Node(?:\.js)? )\bversion[ =:]+v?(\d+\.\d+\.\d+)\b/gi
]

/** Each version written in `text`, once (at its offset) however many patterns find it, in order. */
function versionsIn (text: string): Array<{ line: number, version: string }> {
  const found = new Map<number, string>()
  for (const match of VERSION_MENTIONS.flatMap(pattern => [...text.matchAll(pattern)])) {
    found.set(match.index + match[0].lastIndexOf(match[1] as string), match[1] as string)
  }
  return [...found].sort(([a], [b]) => a - b).map(([at, version]) => ({ line: text.slice(0, at).split('\n').length, version }))
}

t.test('every version written in README.md, docs/ and deploy/ is package.json\'s', async t => {
  t.same(versionsIn('docker run explore-replica:9.9.9\nnode dist/server.js --version   # explore-replica 9.9.8\nARG VERSION=9.9.7\nNode version 22.12.0').map(found => found.version),
    ['9.9.9', '9.9.8', '9.9.7'], 'the patterns find a tag, --version and the ARG, and not Node\'s version')
  const found = new Map<string, number>()
  for (const file of await kitFiles()) {
    const where = relative(ROOT, file)
    for (const { line, version } of versionsIn(await readFile(file, 'utf8'))) {
      t.equal(version, PACKAGE.version, `${where}:${line}: ${version} is package.json's version`)
      found.set(where, (found.get(where) ?? 0) + 1)
    }
  }
  // Where the version is known to be written: a pattern that stopped matching would pass everything above.
  for (const where of ['README.md', 'deploy/Dockerfile', 'deploy/kubernetes/base/deployment.yaml', 'docs/guides/deploying.md', 'docs/guides/demo-server.md', 'docs/reference/http-api.md']) {
    t.ok((found.get(where) ?? 0) > 0, `${where}: its version mentions found (${found.get(where) ?? 0})`)
  }
})

t.test('no file in deploy/, docs/ or the README speaks of compose or depends_on: the kit ships no compose file', async t => {
  const files = await kitFiles()
  t.same(files.filter(file => /compose/i.test(relative(ROOT, file))), [], 'no compose file')
  for (const file of files) {
    const lines = (await readFile(file, 'utf8')).split('\n')
    const mentions = lines.flatMap((line, i) => /depends_on|\bcompose\b/i.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])
    t.same(mentions, [], `${relative(ROOT, file)}: no compose`)
  }
})
