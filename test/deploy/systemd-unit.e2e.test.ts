// deploy/explore-replica.service checked by systemd itself (systemd-analyze, an outside tool, hence the
// end-to-end suite); deploy-kit.test.ts checks its keys in the default suite.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { tempDir } from '../helpers.js'
import { ROOT } from './deploy-rules.js'

const text = await readFile(join(ROOT, 'deploy', 'explore-replica.service'), 'utf8')
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find(path => existsSync(path))

/** systemd-analyze verify on a copy of the unit: its exit code and what it said (a bad key only warns). */
async function verify (unit: string, dir: string): Promise<{ code: number, output: string }> {
  const file = join(dir, 'explore-replica.service')
  await writeFile(file, unit)
  return await new Promise(resolve => {
    execFile(ANALYZE as string, ['verify', file], { env: { ...process.env, SYSTEMD_LOG_COLOR: '0' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, output: `${stdout}${stderr}`.trim() })
    })
  })
}

t.test('systemd-analyze verify: no error, no warning', { skip: ANALYZE === undefined ? 'systemd-analyze is not installed (Debian: apt-get install systemd); deploy-kit.test.ts checks the unit\'s keys' : false }, async t => {
  const dir = await tempDir(t)
  // verify checks that ExecStart's program exists: where Node is not /usr/bin/node, this machine's.
  const unit = existsSync('/usr/bin/node') ? text : text.replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${process.execPath} `)
  t.same(await verify(unit, dir), { code: 0, output: '' })
  const misspelt = await verify(unit.replace('ProtectSystem=strict', 'ProtectSytem=strict'), dir)
  t.match(misspelt.output, /Unknown key 'ProtectSytem'/, 'a misspelt key is reported')
})
