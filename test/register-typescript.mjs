// Loads the TypeScript of src/ and test/ in the tests (tap's node-arg), and in the parse threads they start
// (inherited through execArgv): @swc/core's transform, without a resolver or a tsconfig reader (ADR 044).
// In the thread itself where Node has registerHooks (22.15 and later): a module then loads in half the time of
// register's hooks, which answer each import from a thread of their own (Node 20).
import * as module from 'node:module'

if (typeof module.registerHooks === 'function') {
  const { load, resolve } = await import('./typescript-hooks.mjs')
  module.registerHooks({ resolve, load })
} else {
  module.register('./typescript-hooks.mjs', import.meta.url)
}
