// The benchmark's settings: command-line flags, then BENCH_* environment variables, then defaults (--quick
// changes the defaults, not explicit values).
import { parseArgs } from 'node:util'

export interface BenchOptions {
  /** Total items per snapshot (all languages), smallest first. */
  sizes: number[]
  /** Snapshot format: JSON (format v1) or JSON Lines; auto: JSON Lines from AUTO_JSONL_ITEMS items on. */
  format: 'auto' | 'json' | 'jsonl'
  /** Seconds of hot load on a fresh service during which its snapshot is replaced (0: no reload workload). */
  reloadWindowSeconds: number
  /** Seconds into that window at which the copy is renamed over the file. */
  reloadAtSeconds: number
  /** Reload workloads per size, each on a fresh service: the longest stall varies from run to run. */
  reloadRounds: number
  /** The baseline reloads too, its rounds alternating with the service's (it must watch its file). */
  reloadBaseline: boolean
  /** The fleet workload on the largest size (fleet-change.ts), and its replicas' poll interval. */
  fleet: boolean
  fleetPollSeconds: number
  /** Requests per second of the reload and change-file workloads' hot load; undefined: as fast as it goes. */
  loadRate: number | undefined
  warmupSeconds: number
  durationSeconds: number
  /** Measured runs per server and workload, alternating service, baseline (if any) and ceiling, pooled. */
  rounds: number
  connections: number
  /** The load client: wrk where it is installed (auto), or the one named. */
  client: 'auto' | 'wrk' | 'autocannon'
  /** Idle time after a load before the idle RSS is read and a full GC forced. */
  settleSeconds: number
  hotPaths: number
  coldPaths: number
  /** Distinct cold pages for the warm-up, drawn apart from the measured ones so none repeats in the measurement. */
  coldWarmupPaths: number
  seed: number
  /** Longest wait for other processes to go quiet before a measurement (0: do not wait). */
  quietWaitSeconds: number
  /** Tries of a round (one run of each server) when other processes disturb it; the least disturbed one is kept. */
  attempts: number
  quick: boolean
  /** Run the service (and the baseline) under --cpu-prof (their figures are then not comparable to a run without). */
  profile: boolean
  /** Another checkout of the service to measure (built there, run from its dist/); default: this one. */
  serviceDir: string | undefined
  /** Flags added after the bench's own to the service's command line (so they win over them). */
  serviceArgs: string[]
  /** Node's own flags for the service and the baseline, before the script (an `--import` recorder, `--v8-pool-size=1`). */
  nodeArgs: string[]
  /**
   * A second build measured in the same run, round for round with the service: another checkout, or the
   * service's own with other flags (`baselineArgs` alone). Undefined: no baseline.
   */
  baseline: { dir: string | undefined, args: string[] } | undefined
}

export const USAGE = `Usage: npm run bench -- [options]   (or: npx tsx bench/run.ts [options])
  --quick              smoke run: sizes 10k,50k, 1 s warm-up, 1 round of 3 s, 2 s settle, 6 s reload window  (BENCH_QUICK=1)
  --sizes LIST         total items per snapshot, default 10k,50k,200k; 10k,50k,200k,1m adds a
                       million items (JSON Lines, 1.4 GB, generated once in about 40 s)     (BENCH_SIZES)
  --format F           auto (default: JSON up to 999,999 items, JSON Lines from 1m on), json or jsonl
                       for every size; the bare floor follows it: readFile + JSON.parse for JSON,
                       line by line + JSON.parse per line for JSON Lines                    (BENCH_FORMAT)
  --reload-window S    reload under load: S seconds of hot load on a fresh service (--watch true) during
                       which a copy of its snapshot (one byte longer) is renamed over it (default 20,
                       --quick 6; 0: skip this workload)                                    (BENCH_RELOAD_WINDOW)
  --reload-at S        seconds into that window at which the rename happens (default 5, --quick 2)  (BENCH_RELOAD_AT)
  --reload-rounds N    reload workloads per size, each on a fresh service (default 1): the longest
                       stall varies from run to run, and the report gives every run's  (BENCH_RELOAD_ROUNDS)
  --reload-baseline    the baseline's reloads too, round by round after the service's (the baseline
                       must have --watch and the format)                                   (BENCH_RELOAD_BASELINE)
  --fleet              a change file published to two replicas behind nginx that follow a manifest in
                       moto's S3, on the largest size (JSON Lines): how long until each serves it, and
                       what each downloads (needs moto_server and nginx)                   (BENCH_FLEET)
  --fleet-poll S       the fleet replicas' SNAPSHOT_POLL_SECONDS (default 5)              (BENCH_FLEET_POLL)
  --load-rate R        the reload and change-file workloads' hot load capped at R requests per second
                       (autocannon's overallRate: each connection sends its share of a second as fast as
                       it can, then waits for the next second: bursts, not a steady rate; latencies
                       corrected for coordinated omission). Default: as fast as the connections go  (BENCH_LOAD_RATE)
  --warmup S           warm-up seconds per server and workload (default 3)                  (BENCH_WARMUP)
  --duration S         measured seconds per run (default 10)                                (BENCH_DURATION)
  --rounds N           measured runs per server and workload, service, baseline and ceiling alternating (default 2)  (BENCH_ROUNDS)
  --connections N      concurrent connections (default 32)                                  (BENCH_CONNECTIONS)
  --client NAME        the load client: wrk (one thread, its own process; Debian's \`wrk\`) or autocannon
                       (in the bench's process); default auto: wrk where installed. A --load-rate is
                       autocannon's whatever this says (wrk has no fixed rate)              (BENCH_CLIENT)
  --settle S           idle seconds after load before the idle RSS is read (default 5; the settled
                       figure comes from a forced GC after that)                            (BENCH_SETTLE)
  --hot-paths N        hot requests cycled through (default 2000, drawn with repeats)       (BENCH_HOT_PATHS)
  --cold-paths N       distinct cold pages measured (default 100000)                        (BENCH_COLD_PATHS)
  --seed S             seed for the snapshots and the paths (default 1)                     (BENCH_SEED)
  --quiet-wait S       wait up to S seconds for other processes to go idle before measuring (default 60, 0: never)  (BENCH_QUIET_WAIT)
  --attempts N         repeat a round (service, baseline, ceiling) other processes disturbed, up to N tries (default 3)  (BENCH_ATTEMPTS)
  --profile            run the service (and the baseline) with --cpu-prof into bench/results/profiles/
  --service DIR        measure the service in another checkout (e.g. a git archive of an older commit,
                       with node_modules linked in): built there if stale, run from DIR/dist/server.js  (BENCH_SERVICE)
  --service-args "…"   extra flags for the service, split on spaces, e.g. "--page-cache-mb 0"  (BENCH_SERVICE_ARGS)
  --node-args "…"      node's flags for the service and the baseline, before the script, e.g.
                       "--import $PWD/bench/.data/gap-recorder.mjs" (bench/plain-script.ts writes it) or "--v8-pool-size=1"  (BENCH_NODE_ARGS)
  --baseline DIR       also measure a second checkout in the same run, built there if stale, its rounds
                       alternating with the service's and the ceiling's; the report adds its req/s,
                       p50 / p99, load cost and service ÷ baseline. A worktree of another commit:
                         git worktree add --detach /tmp/base COMMIT && ln -s $PWD/node_modules /tmp/base/
                       (then: rm /tmp/base/node_modules && git worktree remove /tmp/base)  (BENCH_BASELINE)
  --baseline-args "…"  extra flags for the baseline; without --baseline the baseline is the service's
                       own checkout, so one build is compared under two settings            (BENCH_BASELINE_ARGS)
  -h, --help           this text`

// Flags the bench sets itself, on which it depends (it polls its own port and checks the snapshot's items).
const RESERVED_FLAGS = ['--port', '--snapshot-path']

/** Extra server flags, split on spaces (no quoting: no flag of the service takes a value with spaces). */
function serverArgs (name: string, text: string | undefined): string[] {
  const args = (text ?? '').split(/\s+/).filter(arg => arg !== '')
  const reserved = args.map(arg => arg.split('=')[0] ?? '').find(flag => RESERVED_FLAGS.includes(flag))
  if (reserved !== undefined) throw new TypeError(`${name}: the bench sets ${reserved} itself`)
  return args
}

function positive (name: string, text: string, allowFraction = false): number {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0 || (!allowFraction && !Number.isInteger(value))) {
    throw new TypeError(`${name} must be a positive ${allowFraction ? 'number' : 'whole number'}, got ${JSON.stringify(text)}`)
  }
  return value
}

/** `10k`, `200k`, `1m` or a plain number. */
function size (text: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim())
  if (match === null) throw new TypeError(`a size must look like 10000, 10k or 1m, got ${JSON.stringify(text)}`)
  const scale = { '': 1, k: 1e3, m: 1e6 }[(match[2] ?? '').toLowerCase() as '' | 'k' | 'm']
  return positive('a size', String(Math.round(Number(match[1]) * scale)))
}

/**
 * `--service-args --page-cache-mb 0` as `--service-args=--page-cache-mb 0`: parseArgs refuses a separate
 * value that starts with a dash, and every value of these flags does.
 */
function joinServerArgs (argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? ''
    const value = argv[i + 1]
    if ((arg === '--service-args' || arg === '--baseline-args' || arg === '--node-args') && value !== undefined) {
      out.push(`${arg}=${value}`)
      i++
    } else {
      out.push(arg)
    }
  }
  return out
}

export function readOptions (argv: string[], env: Record<string, string | undefined>): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: joinServerArgs(argv),
    options: {
      quick: { type: 'boolean' },
      sizes: { type: 'string' },
      format: { type: 'string' },
      'reload-window': { type: 'string' },
      'reload-at': { type: 'string' },
      'reload-rounds': { type: 'string' },
      'reload-baseline': { type: 'boolean' },
      fleet: { type: 'boolean' },
      'fleet-poll': { type: 'string' },
      'load-rate': { type: 'string' },
      warmup: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      client: { type: 'string' },
      settle: { type: 'string' },
      'hot-paths': { type: 'string' },
      'cold-paths': { type: 'string' },
      seed: { type: 'string' },
      'quiet-wait': { type: 'string' },
      attempts: { type: 'string' },
      profile: { type: 'boolean' },
      service: { type: 'string' },
      'service-args': { type: 'string' },
      'node-args': { type: 'string' },
      baseline: { type: 'string' },
      'baseline-args': { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) return 'help'
  const quick = values.quick ?? ['1', 'true', 'yes'].includes((env.BENCH_QUICK ?? '').toLowerCase())
  const pick = (flag: string | undefined, variable: string): string | undefined => flag ?? env[variable]

  const sizesText = pick(values.sizes, 'BENCH_SIZES')
  const sizes = sizesText === undefined ? (quick ? [10_000, 50_000] : [10_000, 50_000, 200_000]) : sizesText.split(',').map(size)
  sizes.sort((a, b) => a - b)
  const number = (flag: string | undefined, variable: string, fallback: number, fraction = false): number => {
    const text = pick(flag, variable)
    return text === undefined ? fallback : positive(variable, text, fraction)
  }
  const format = pick(values.format, 'BENCH_FORMAT') ?? 'auto'
  if (format !== 'auto' && format !== 'json' && format !== 'jsonl') throw new TypeError(`--format must be auto, json or jsonl, got ${JSON.stringify(format)}`)
  // The bare floor of a JSON file is readFile + JSON.parse: past ~512 MB (about 370k items) V8 cannot hold
  // the file as one string ("Invalid string length"), so there is nothing to compare the service with.
  if (format === 'json' && sizes.some(items => items > 350_000)) {
    throw new TypeError('--format json is for sizes up to 350k: a larger JSON file is past V8\'s longest string, so its bare JSON.parse floor cannot run (the service streams it; load it by hand: docs/decisions/007-format-v1-streamed.md)')
  }
  // 0 is allowed here (no reload workload), which `number` refuses.
  const reloadWindowText = pick(values['reload-window'], 'BENCH_RELOAD_WINDOW')
  const reloadWindowSeconds = reloadWindowText === '0' ? 0 : number(values['reload-window'], 'BENCH_RELOAD_WINDOW', quick ? 6 : 20, true)
  const reloadAtSeconds = number(values['reload-at'], 'BENCH_RELOAD_AT', quick ? 2 : 5, true)
  if (reloadWindowSeconds > 0 && reloadAtSeconds >= reloadWindowSeconds) {
    throw new TypeError(`--reload-at (${reloadAtSeconds} s) must fall inside --reload-window (${reloadWindowSeconds} s)`)
  }
  const client = pick(values.client, 'BENCH_CLIENT') ?? 'auto'
  if (client !== 'auto' && client !== 'wrk' && client !== 'autocannon') throw new TypeError(`--client must be auto, wrk or autocannon, got ${JSON.stringify(client)}`)
  const coldPaths = number(values['cold-paths'], 'BENCH_COLD_PATHS', 100_000)
  const loadRateText = pick(values['load-rate'], 'BENCH_LOAD_RATE')
  const baselineDir = pick(values.baseline, 'BENCH_BASELINE')
  const baselineArgs = serverArgs('--baseline-args', pick(values['baseline-args'], 'BENCH_BASELINE_ARGS'))
  const reloadBaseline = values['reload-baseline'] ?? ['1', 'true', 'yes'].includes((env.BENCH_RELOAD_BASELINE ?? '').toLowerCase())
  if (reloadBaseline && baselineDir === undefined && baselineArgs.length === 0) throw new TypeError('--reload-baseline needs a baseline (--baseline DIR or --baseline-args)')
  return {
    sizes,
    format,
    reloadWindowSeconds,
    reloadAtSeconds,
    reloadRounds: number(values['reload-rounds'], 'BENCH_RELOAD_ROUNDS', 1),
    reloadBaseline,
    fleet: values.fleet ?? ['1', 'true', 'yes'].includes((env.BENCH_FLEET ?? '').toLowerCase()),
    fleetPollSeconds: number(values['fleet-poll'], 'BENCH_FLEET_POLL', 5),
    loadRate: loadRateText === undefined ? undefined : positive('--load-rate (BENCH_LOAD_RATE)', loadRateText),
    warmupSeconds: number(values.warmup, 'BENCH_WARMUP', quick ? 1 : 3, true),
    durationSeconds: number(values.duration, 'BENCH_DURATION', quick ? 3 : 10, true),
    rounds: number(values.rounds, 'BENCH_ROUNDS', quick ? 1 : 2),
    connections: number(values.connections, 'BENCH_CONNECTIONS', 32),
    client,
    settleSeconds: number(values.settle, 'BENCH_SETTLE', quick ? 2 : 5, true),
    hotPaths: number(values['hot-paths'], 'BENCH_HOT_PATHS', 2000),
    coldPaths,
    coldWarmupPaths: Math.max(1000, Math.round(coldPaths / 5)),
    seed: number(values.seed, 'BENCH_SEED', 1),
    quietWaitSeconds: pick(values['quiet-wait'], 'BENCH_QUIET_WAIT') === '0' ? 0 : number(values['quiet-wait'], 'BENCH_QUIET_WAIT', 60, true),
    attempts: number(values.attempts, 'BENCH_ATTEMPTS', 3),
    quick,
    profile: values.profile === true,
    serviceDir: pick(values.service, 'BENCH_SERVICE'),
    serviceArgs: serverArgs('--service-args', pick(values['service-args'], 'BENCH_SERVICE_ARGS')),
    nodeArgs: (pick(values['node-args'], 'BENCH_NODE_ARGS') ?? '').split(/\s+/).filter(arg => arg !== ''),
    baseline: baselineDir !== undefined || baselineArgs.length > 0 ? { dir: baselineDir, args: baselineArgs } : undefined
  }
}
