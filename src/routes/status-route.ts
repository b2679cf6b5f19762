// GET /-/status, for when an editor says "my file is not showing": what is served, since when, how reloads went.
import type { FastifyInstance } from 'fastify'
import type { DelaySpec } from '../config.js'
import type { SimulatedTrouble } from '../explore/simulated-trouble.js'
import { StatusSchema, type Status } from '../schemas/operations.js'
import type { ReloadFailure } from '../snapshot/store/snapshot-store.js'
import { VERSION } from '../version.js'

function failureJson ({ at, problems }: ReloadFailure): { at: string, problems: string[] } {
  return { at: at.toISOString(), problems: [...problems] }
}

function delayText (spec: DelaySpec): string {
  switch (spec.kind) {
    case 'fixed': return String(spec.ms)
    case 'uniform': return `${spec.min}-${spec.max}`
    case 'lognormal': return `~${spec.median}`
  }
}

/** As /-/status, the start-up log and the console say it. */
export function troubleStatus (troubles: SimulatedTrouble): NonNullable<Status['trouble']> {
  const { delayMs, failRate, failStatus, fault, faultRate, chaos } = troubles.settings
  return {
    delay: delayMs === null ? null : delayText(delayMs),
    failRate,
    failStatus,
    fault,
    faultRate: fault === null ? 0 : faultRate,
    chaos,
    seed: troubles.seed,
    replay: troubles.replay
  }
}

/** null for a store loading without a budget. */
function memoryStatus (app: FastifyInstance): Status['memory'] {
  const { budget } = app.snapshots
  if (budget === null) return null
  const tooBig = app.snapshots.record.lastTooBig()
  return {
    budget: budget.bytes,
    budgetSource: budget.source,
    lastTooBig: tooBig === null ? null : { ...tooBig, at: tooBig.at.toISOString() }
  }
}

export function pinStatus (app: FastifyInstance): Pick<Status, 'pin' | 'newest'> {
  const versions = app.snapshotVersions
  return { pin: versions.currentPin(), newest: versions.noticed() }
}

/** What /-/status answers, also rendered by the console (console/console-route.ts). */
export function currentStatus (app: FastifyInstance): Status {
  const store = app.snapshots
  const model = store.current()
  const reloads = store.status()
  return {
    version: VERSION,
    node: process.version,
    path: store.file,
    snapshot: model === null
      ? null
      : {
          version: model.info.version,
          generatedAt: model.info.generatedAt,
          loadedAt: model.info.loadedAt.toISOString(),
          items: model.itemCounts(),
          changes: (model.info.changes ?? []).map(({ id, source, generatedAt, upserts, deletes, absentDeletes }) => ({
            id, file: source, generatedAt, upserts, deletes, absentDeletes
          })),
          garbageBytes: model.garbageBytes,
          imageMs: model.info.fromImage?.ms ?? null
        },
    reloads: {
      ...reloads,
      lastFailure: reloads.lastFailure === null ? null : failureJson(reloads.lastFailure),
      staleSince: reloads.staleSince?.toISOString() ?? null,
      refusals: store.record.refusals(),
      recentFailures: store.record.recentFailures()
        .map(refused => ({ ...failureJson(refused), file: refused.file, reason: refused.reason })),
      changeFiles: store.record.changeFiles(),
      ...(store.images === null ? {} : { images: store.images.status() })
    },
    memory: memoryStatus(app),
    source: app.snapshotSource.status(),
    servingThreads: app.servingPool?.rows() ?? null,
    ...pinStatus(app),
    trouble: app.trouble === null ? null : troubleStatus(app.trouble)
  }
}

export async function statusRoute (app: FastifyInstance): Promise<void> {
  app.get('/-/status', {
    schema: { summary: 'The served snapshot and the history of reloads', response: { 200: StatusSchema } }
  }, async (): Promise<Status> => currentStatus(app))
}
