// A Dockerfile read as its instructions, grouped by build stage, as far as deploy/Dockerfile's tests need:
// continuation lines joined, comments dropped, JSON (exec) forms parsed, `KEY=value` words split.

export interface Instruction {
  /** Upper case: FROM, RUN, COPY… */
  keyword: string
  /** Everything after the keyword, continuation lines joined with a space. */
  args: string
  /** 1-based line of the keyword. */
  line: number
}

export interface Stage {
  /** The FROM's `AS name`, or its index. */
  name: string
  from: string
  instructions: Instruction[]
}

export function readInstructions (text: string): Instruction[] {
  const instructions: Instruction[] = []
  let pending: Instruction | null = null
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).replace(/\r$/, '')
    // A comment line inside a continued instruction is skipped, as Docker does.
    if (/^\s*#/.test(raw) || (pending === null && raw.trim() === '')) continue
    const continued = /\\\s*$/.test(raw)
    const body = continued ? raw.replace(/\\\s*$/, '') : raw
    if (pending === null) {
      const match = /^\s*(\S+)\s*(.*)$/.exec(body)
      if (match === null) continue
      pending = { keyword: (match[1] as string).toUpperCase(), args: (match[2] as string).trim(), line: i + 1 }
    } else {
      pending.args = `${pending.args} ${body.trim()}`.trim()
    }
    if (!continued) {
      instructions.push(pending)
      pending = null
    }
  }
  if (pending !== null) instructions.push(pending)
  return instructions
}

export function readStages (text: string): Stage[] {
  const stages: Stage[] = []
  for (const instruction of readInstructions(text)) {
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = words(instruction.args).filter(word => !word.startsWith('--'))
      stages.push({ name: as?.toUpperCase() === 'AS' && name !== undefined ? name : String(stages.length), from: image ?? '', instructions: [] })
    } else {
      stages.at(-1)?.instructions.push(instruction)
    }
  }
  return stages
}

/** Whitespace-separated words, a double-quoted stretch kept whole and unquoted: `a="b c" d` → [`a=b c`, `d`]. */
export function words (text: string): string[] {
  return (text.match(/(?:[^\s"]+|"(?:[^"\\]|\\.)*")+/g) ?? []).map(word => word.replace(/"((?:[^"\\]|\\.)*)"/g, (_, inner: string) => inner.replace(/\\(.)/g, '$1')))
}

/** ENV, LABEL and ARG's `KEY=value` words as a map (ARG without a default: undefined). */
export function assignments (args: string): Map<string, string | undefined> {
  const map = new Map<string, string | undefined>()
  for (const word of words(args)) {
    const eq = word.indexOf('=')
    map.set(eq < 0 ? word : word.slice(0, eq), eq < 0 ? undefined : word.slice(eq + 1))
  }
  return map
}

/** The JSON array of an exec-form instruction (CMD, ENTRYPOINT, HEALTHCHECK … CMD), or null for a shell form. */
export function execForm (args: string): string[] | null {
  if (!args.trimStart().startsWith('[')) return null
  const parsed: unknown = JSON.parse(args)
  if (!Array.isArray(parsed) || !parsed.every(part => typeof part === 'string')) throw new Error(`not an array of strings: ${args}`)
  return parsed as string[]
}

/** A flag's value among an instruction's leading `--name=value` words (COPY --from=build, HEALTHCHECK --interval=10s). */
export function flag (args: string, name: string): string | undefined {
  for (const word of words(args)) {
    if (!word.startsWith('--')) break
    if (word.startsWith(`--${name}=`)) return word.slice(name.length + 3)
  }
  return undefined
}

/** An instruction's arguments without its leading `--flags`. */
export function withoutFlags (args: string): string {
  return args.replace(/^(?:\s*--\S+)*\s*/, '')
}
