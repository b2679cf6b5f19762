// src/copy-file.ts: a copy of a file an editor cuts short meanwhile ends, where libuv's copyfile spins for ever.
import t from 'tap'
import { readFile, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { copyToEnd } from '../src/copy-file.js'
import { tempDir } from './helpers.js'

t.test('a file copied whole is the same bytes', async t => {
  const dir = await tempDir(t)
  const bytes = Buffer.from(Array.from({ length: 3 * 1024 * 1024 + 17 }, (_, i) => i % 251))
  await writeFile(join(dir, 'from'), bytes)
  await copyToEnd(join(dir, 'from'), join(dir, 'to'))
  t.ok((await readFile(join(dir, 'to'))).equals(bytes))
})

t.test('a source cut short while it is copied: the copy ends, with no more than the source held', async t => {
  const dir = await tempDir(t)
  const from = join(dir, 'from')
  const size = 64 * 1024 * 1024
  await writeFile(from, Buffer.alloc(size, 1))
  // Queued beside the copy on libuv's pool: fs.copyFile never returned from this (nor let the process exit).
  const copied = copyToEnd(from, join(dir, 'to'))
  await truncate(from, 1000)
  await copied
  t.ok((await stat(join(dir, 'to'))).size <= size)
})
