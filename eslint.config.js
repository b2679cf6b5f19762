import neostandard from 'neostandard'

export default neostandard({
  ts: true,
  ignores: ['dist/**', 'coverage/**', '.tap/**', '.scratch/**', 'node_modules/**', 'test/drf-reference/**']
})
