// The module hooks of register-typescript.mjs: a relative `./x.js` from TypeScript is `./x.ts` where that
// exists (NodeNext's rule), and a .ts file outside node_modules is transformed, its types stripped, with an
// inline source map for coverage and stack traces. What tsconfig.json says that matters here is repeated.
// Synchronous, so that one definition serves both of Node's ways to hook (register-typescript.mjs).
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { transformSync } from '@swc/core'

export function resolve (specifier, context, nextResolve) {
  // TypeBox's ESM build is ~250 modules, each a round trip to the hooks' thread on Node 20 (of 549 a test
  // process loads through them); its CommonJS build, the same code, loads by require, off the hooks (ADR 044).
  if (specifier === '@sinclair/typebox' || specifier.startsWith('@sinclair/typebox/')) {
    return nextResolve(specifier, { ...context, conditions: context.conditions.map(c => c === 'import' ? 'require' : c) })
  }
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const url = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL)
    if (existsSync(url)) return { url: url.href, format: 'module', shortCircuit: true }
  }
  return nextResolve(specifier, context)
}

export function load (url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) return nextLoad(url, context)
  const filename = fileURLToPath(url)
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    module: { type: 'es6' },
    jsc: {
      parser: { syntax: 'typescript' },
      target: 'es2023',
      keepClassNames: true,
      transform: { useDefineForClassFields: true, verbatimModuleSyntax: true }
    }
  })
  return { format: 'module', source: code, shortCircuit: true }
}
