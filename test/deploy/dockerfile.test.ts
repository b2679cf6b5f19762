// deploy/Dockerfile and .dockerignore, as far as a machine without a Docker engine can check them: the
// Dockerfile linted by dockerfile-utils (the Docker language server's validator; hadolint is in neither
// Debian nor npm), its instructions held to the image's rules and to every deploy file's (deploy-rules.ts),
// and the build command its comment gives tagging the one image. dockerfile.e2e.test.ts runs its
// HEALTHCHECK command against real servers.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { validate } from 'dockerfile-utils'
import { assignments, execForm, flag, readInstructions, readStages, withoutFlags, words, type Instruction, type Stage } from './dockerfile-instructions.js'
import { checkSettings, CONFIG_NAMES, IMAGE, OPERATOR_PORT, PACKAGE as pkg, PUBLIC_PORT, ROOT } from './deploy-rules.js'

const dockerfile = await readFile(join(ROOT, 'deploy', 'Dockerfile'), 'utf8')
const stages = readStages(dockerfile)
const runtime = stages.at(-1) as Stage

function all (stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter(instruction => instruction.keyword === keyword)
}

function last (stage: Stage, keyword: string): Instruction | undefined {
  return all(stage, keyword).at(-1)
}

/** The stage's ENV settings, later ones winning. */
function environment (stage: Stage): Map<string, string | undefined> {
  return new Map(all(stage, 'ENV').flatMap(env => [...assignments(env.args)]))
}

/** Where a COPY puts things, made absolute against the stage's WORKDIR at that point. */
function copies (stage: Stage): Array<{ from: string | undefined, sources: string[], dest: string }> {
  let workdir = '/'
  const result: Array<{ from: string | undefined, sources: string[], dest: string }> = []
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = instruction.args
    if (instruction.keyword !== 'COPY') continue
    const parts = words(withoutFlags(instruction.args))
    const dest = parts.at(-1) as string
    result.push({ from: flag(instruction.args, 'from'), sources: parts.slice(0, -1), dest: dest.startsWith('/') ? dest : join(workdir, dest) })
  }
  return result
}

t.test('the Dockerfile has no problem the Docker language server\'s validator finds', async t => {
  t.same(validate(dockerfile).map(problem => `line ${problem.range.start.line + 1}: ${problem.message}`), [])
  t.not(validate('FROM node:24\nHEALTHCHECK --intervall=3s CMD ["node"]\n').length, 0, 'and it does find problems')
})

t.test('multi-stage: the build stage has the dev dependencies and builds; the image only production ones', async t => {
  t.ok(stages.length >= 2, `${stages.length} stages`)
  const build = stages.find(stage => all(stage, 'RUN').some(run => /\bnpm run build\b/.test(run.args)))
  if (build === undefined) return t.fail('no stage runs npm run build')
  t.ok(all(build, 'RUN').some(run => /\bnpm ci\b/.test(run.args) && !/--omit=dev|--production/.test(run.args)), 'the build stage installs every dependency')
  t.not(build, runtime, 'the image is not the build stage')
  // What `npm run build` compiles must be in the build stage: tsconfig.build.json, what it extends, what it includes.
  const tsconfig = JSON.parse(await readFile(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { extends?: string, include: string[] }
  const copied = copies(build).flatMap(copy => copy.sources)
  for (const needed of ['package.json', 'package-lock.json', 'tsconfig.build.json', ...(tsconfig.extends === undefined ? [] : [tsconfig.extends.replace(/^\.\//, '')]), ...tsconfig.include]) {
    t.ok(copied.includes(needed), `the build stage copies ${needed}`)
  }

  // The image's node_modules: installed without dev dependencies, here or in the stage it is copied from.
  const modules = copies(runtime).find(copy => copy.dest === '/app/node_modules')
  const installer = modules?.from === undefined ? runtime : stages.find(stage => stage.name === modules.from)
  t.ok(installer !== undefined && all(installer, 'RUN').some(run => /\bnpm ci\b.*--omit=dev/.test(run.args)), 'node_modules from npm ci --omit=dev')
  t.not(installer, build, 'not the build stage\'s node_modules')
  const dist = copies(runtime).find(copy => copy.dest === '/app/dist')
  t.equal(dist?.from, build.name, 'dist/ from the build stage')
  // dist/ is ES modules only because package.json says "type": "module".
  t.ok(copies(runtime).some(copy => copy.from === undefined && copy.sources.includes('package.json') && copy.dest.startsWith('/app')), 'package.json beside dist/')
})

t.test('the image runs as node, under tini, with SIGTERM, the server directly', async t => {
  t.equal(last(runtime, 'USER')?.args, 'node', 'the node user, not root')
  t.same(execForm(last(runtime, 'ENTRYPOINT')?.args ?? ''), ['/usr/bin/tini', '--'], 'tini is PID 1')
  t.ok(all(runtime, 'RUN').some(run => /apt-get install\b.*\btini\b/.test(run.args)), 'tini installed in the image (Node\'s images have none)')
  t.equal(last(runtime, 'STOPSIGNAL')?.args, 'SIGTERM')
  t.same(execForm(last(runtime, 'CMD')?.args ?? ''), ['node', 'dist/server.js'], 'node itself, no npm or shell between it and the signals')
  t.equal(last(runtime, 'WORKDIR')?.args, '/app')
})

t.test('settings: every interface, /data for snapshots with the sample there until one is mounted', async t => {
  const env = environment(runtime)
  // Held to every deploy file's rules: settings the service knows, the defaults a client sees, the
  // operator's endpoints on OPS_PORT and loopback (the container's published ports are public).
  const config = checkSettings(t, {
    where: 'deploy/Dockerfile ENV',
    settings: Object.fromEntries([...env].map(([name, value]) => [name, value ?? ''])),
    sources: [{ where: 'deploy/Dockerfile', text: dockerfile }],
    proxyInFront: false,
    podNetwork: false
  })
  t.equal(env.get('HOST'), '0.0.0.0', 'HOST=0.0.0.0: the container\'s network is the boundary')
  t.equal(config?.opsPort, OPERATOR_PORT, `OPS_PORT=${OPERATOR_PORT}: /-/ is not on the published PORT`)
  t.equal(config?.opsHost, '127.0.0.1', 'OPS_HOST=127.0.0.1: the HEALTHCHECK reaches it; outside, only when OPS_HOST is set')
  t.equal(env.get('SNAPSHOT_PATH'), '/data/snapshot.json', 'SNAPSHOT_PATH=/data/snapshot.json')
  t.ok(all(runtime, 'VOLUME').some(volume => (execForm(volume.args) ?? words(volume.args)).includes('/data')), 'VOLUME /data')
  const sample = copies(runtime).filter(copy => copy.from === undefined && copy.sources.includes('data/snapshot.json')).map(copy => copy.dest)
  t.ok(sample.includes('/data/snapshot.json'), 'the bundled sample at SNAPSHOT_PATH')
  t.ok(sample.includes('/app/data/snapshot.json'), 'and where the package keeps it (the default with SNAPSHOT_PATH unset)')
  const exposed = all(runtime, 'EXPOSE').flatMap(expose => words(expose.args).map(port => port.replace(/\/tcp$/, '')))
  t.ok(exposed.includes(String(config?.port ?? PUBLIC_PORT)), `PORT ${config?.port ?? '?'} exposed`)
  t.ok(exposed.includes(String(config?.opsPort ?? '')), `OPS_PORT ${config?.opsPort ?? '?'} exposed`)
  t.same(exposed.filter(port => port !== String(config?.port) && port !== String(config?.opsPort)), [], 'and no other port')
  const cacheDir = env.get('SNAPSHOT_CACHE_DIR')
  t.ok(cacheDir !== undefined && all(runtime, 'RUN').some(run => run.args.includes(cacheDir) && /chown node/.test(run.args)), 'SNAPSHOT_CACHE_DIR is the node user\'s')
})

/** The comment lines before the first instruction: the Dockerfile's own usage. */
function headComment (): string[] {
  const first = readInstructions(dockerfile)[0]?.line ?? 1
  return dockerfile.split('\n').slice(0, first - 1).filter(line => /^#/.test(line) && !/^#\s*syntax=/.test(line)).map(line => line.replace(/^#\s?/, ''))
}

t.test('the one image: the comment at the top builds explore-replica:<package.json version>, and runs that', async t => {
  const commands = headComment().map(line => line.replace(/\s+#.*$/, '').trim()).filter(line => /^docker (build|run)\b/.test(line))
  const build = commands.find(command => command.startsWith('docker build'))
  if (build === undefined) return t.fail('the comment at the top gives the build command')
  const args = words(build).slice(2)
  const option = (name: string): string | undefined => args[args.indexOf(name) + 1]
  t.equal(option('-t'), IMAGE, `docker build … -t ${IMAGE}`)
  t.equal(option('-f'), 'deploy/Dockerfile', 'docker build -f deploy/Dockerfile')
  t.equal(args.at(-1), '.', 'from the checkout\'s root, the context .dockerignore describes')
  const env = environment(runtime)
  for (const run of commands.filter(command => command.startsWith('docker run'))) {
    const parts = words(run)
    t.same(parts.filter(word => /^explore-replica(:|$)/.test(word)), [IMAGE], `${run}: runs ${IMAGE}`)
    for (const name of parts.flatMap((word, i) => word === '-e' ? [(parts[i + 1] ?? '').split('=')[0]] : [])) {
      t.ok(CONFIG_NAMES.has(name ?? ''), `${run}: -e ${name ?? '?'} is one of the service's settings`)
    }
    // Published ports: the container's side is PORT or OPS_PORT, and OPS_PORT answers from outside only off loopback.
    const published = parts.flatMap((word, i) => word === '-p' ? [(parts[i + 1] ?? '').split(':')] : [])
    for (const mapping of published) t.ok([env.get('PORT'), env.get('OPS_PORT')].includes(mapping.at(-1)), `${run}: publishes PORT or OPS_PORT (${mapping.at(-1) ?? '?'})`)
    for (const mapping of published.filter(mapping => mapping.at(-1) === env.get('OPS_PORT'))) {
      t.ok(parts.includes('OPS_HOST=0.0.0.0'), `${run}: OPS_PORT published with OPS_HOST=0.0.0.0, or nothing answers there`)
      t.ok(mapping.length === 3 && mapping[0] === '127.0.0.1', `${run}: OPS_PORT published on the host's loopback only`)
    }
  }
})

t.test('OCI labels: title, description, the package\'s version and licence', async t => {
  const labels = new Map(all(runtime, 'LABEL').flatMap(label => [...assignments(label.args)]))
  const args = new Map(stages.flatMap(stage => all(stage, 'ARG')).flatMap(arg => [...assignments(arg.args)]))
  for (const name of ['title', 'description', 'version', 'revision', 'licenses']) {
    t.ok((labels.get(`org.opencontainers.image.${name}`) ?? '') !== '', `org.opencontainers.image.${name}`)
  }
  t.equal(labels.get('org.opencontainers.image.version'), '$' + '{VERSION}', 'the version is the build argument')
  t.equal(args.get('VERSION'), pkg.version, 'ARG VERSION defaults to package.json\'s version')
  t.equal(labels.get('org.opencontainers.image.licenses'), pkg.license)
})

t.test('.dockerignore sends what the Dockerfile copies and nothing else', async t => {
  const patterns = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').map(line => line.trim()).filter(line => line !== '' && !line.startsWith('#'))
  // The allowlist form only ("*", then "!path" lines): the matcher below is exact for it.
  t.equal(patterns[0], '*', 'everything is excluded first')
  t.ok(patterns.slice(1).every(pattern => /^![^*?[\]]+$/.test(pattern)), 'then plain paths let in')
  const allowed = patterns.slice(1).map(pattern => pattern.slice(1).replace(/\/$/, ''))
  const sent = (path: string): boolean => allowed.some(allow => path === allow || path.startsWith(`${allow}/`))
  const fromContext = stages.flatMap(stage => copies(stage)).filter(copy => copy.from === undefined).flatMap(copy => copy.sources)
  for (const source of fromContext) t.ok(sent(source), `${source} is in the build context`)
  for (const path of ['node_modules/fastify/package.json', 'dist/server.js', '.git/HEAD', 'test/helpers.ts', 'bench/run.ts', 'coverage/index.html', 'README.md']) {
    t.notOk(sent(path), `${path} is not`)
  }
})

t.test('HEALTHCHECK: its timing given, node (the image has no curl) asking /-/readyz on OPS_PORT or PORT', async t => {
  const healthcheck = last(runtime, 'HEALTHCHECK')?.args ?? ''
  for (const name of ['interval', 'timeout', 'start-period', 'retries']) t.ok(flag(healthcheck, name) !== undefined, `--${name} given`)
  t.match(healthcheck, /\/-\/(readyz|healthz)/)
  const command = execForm(/^(?:--\S+\s+)*CMD\s+(.*)$/s.exec(healthcheck)?.[1] ?? '')
  t.equal(command?.[0], 'node', 'an exec form running node (dockerfile.e2e.test.ts runs it against a server)')
  t.match(command?.at(-1), /process\.env\.OPS_PORT \|\| process\.env\.PORT/, 'OPS_PORT when it is set, else PORT')
})
