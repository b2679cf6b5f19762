import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'bench/.data/**', 'coverage/**', '.tap/**', '.scratch/**', 'node_modules/**', 'test/drf-reference/**']
  }),
  {
    // Lines of at most 120 characters in the service's code; a string or template alone may run longer
    // (served text, messages and help that tests compare whole).
    files: ['src/**/*.ts'],
    rules: {
      '@stylistic/max-len': ['error', {
        code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true
      }]
    }
  }
]
