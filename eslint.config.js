import neostandard from 'neostandard'

export default neostandard({
  ts: true,
  ignores: ['dist/**', 'bench/.data/**', 'coverage/**', '.tap/**', '.scratch/**', 'node_modules/**', 'test/drf-reference/**']
})
