// Loads the TypeScript of src/ and test/ in the tests (tap's node-arg), and in the parse threads they start
// (inherited through execArgv): @swc/core's transform, without a resolver or a tsconfig reader (ADR 044).
import { register } from 'node:module'

register('./typescript-hooks.mjs', import.meta.url)
