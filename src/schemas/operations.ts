// What the operational endpoints answer: /-/status, /-/healthz and /-/readyz.
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './content-item.js'
import { NewestSchema, PinSchema } from './versions.js'

export const StatusSchema = Type.Object({
  version: Type.String({
    description: 'The explore-replica package version this process runs (`explore-replica --version`).'
  }),
  node: Type.String({ description: 'The Node.js version it runs on (`process.version`, e.g. `v20.19.4`).' }),
  path: Type.String({ description: 'The snapshot file the service watches.' }),
  snapshot: Nullable(Type.Object({
    version: Type.String({
      description: 'A digest of the served file\'s bytes (ETags start with it); with change files `<it>+<id of the last change applied>` (ETags then start with the digest and a digest of the change files\' contents).'
    }),
    generatedAt: Nullable(Type.String(), { description: 'The served snapshot\'s `generated_at`.' }),
    loadedAt: Type.String({ description: 'When the served snapshot was loaded (ISO-8601).' }),
    items: Type.Record(Type.String(), Type.Integer(), { description: 'Items per language.' }),
    changes: Type.Optional(Type.Array(Type.Object({
      id: Type.String({ description: 'The change file\'s header `id`.' }),
      file: Type.String({ description: 'Where it was read from.' }),
      generatedAt: Nullable(Type.String()),
      upserts: Type.Integer(),
      deletes: Type.Integer(),
      absentDeletes: Type.Integer({ description: 'Deletes of items that were not there (no error).' })
    }), {
      description:
        'The change files applied to the snapshot, in order: `version` is then `<snapshot version>+<last id>`.'
    })),
    garbageBytes: Type.Optional(Type.Integer({
      description: 'Bytes of items replaced or deleted by change files, held until the next full load.'
    })),
    imageMs: Type.Optional(Nullable(Type.Integer(), {
      description: 'Milliseconds the snapshot took to read from its version image in STATE_DIR; null: it was parsed.'
    }))
  }), { description: 'The snapshot served; null while the first one is loading.' }),
  reloads: Type.Object({
    succeeded: Type.Integer(),
    failed: Type.Integer(),
    failedInARow: Type.Integer({ description: 'Failures since the last successful reload.' }),
    lastFailure: Nullable(Type.Object({
      at: Type.String(),
      problems: Type.Array(Type.String(), { description: 'The validation report, one line per problem.' })
    })),
    staleSince: Nullable(Type.String(), {
      description:
        'When the first of the failures in a row happened: since then the file is not the one served (null: it is).'
    }),
    refusals: Type.Object({
      invalid: Type.Integer({ description: 'Files refused for their contents (or that could not be read).' }),
      too_big: Type.Integer({ description: 'Files refused because loading them would pass the memory budget, or did.' })
    }, { description: 'Failed reloads by reason.' }),
    recentFailures: Type.Array(Type.Object({
      at: Type.String({ description: 'When the file was refused (ISO-8601).' }),
      file: Type.String({ description: 'The file refused: the snapshot path, or the download of SNAPSHOT_URL.' }),
      reason: Type.Union([Type.Literal('invalid'), Type.Literal('too_big')], {
        description: 'Why: its contents, or the memory budget.'
      }),
      problems: Type.Array(Type.String(), { description: 'The validation report, one line per problem.' })
    }), { description: 'The last 10 refused files, newest first (kept after a later success).' }),
    changeFiles: Type.Optional(Type.Object({
      applied: Type.Integer(),
      refused: Type.Integer()
    }, { description: 'Change files applied and refused since start.' })),
    images: Type.Optional(Type.Object({
      read: Type.Integer(),
      written: Type.Integer(),
      refused: Type.Integer({ description: 'Images that failed a check: each was removed and its snapshot parsed.' })
    }, { description: 'Version images read instead of a parse, written after one, and refused, since start.' }))
  }),
  memory: Nullable(Type.Object({
    budget: Type.Integer({
      description: 'Bytes the service may use, every worker together (MEMORY_LIMIT_MB, else the cgroup\'s limit, else the machine\'s memory).'
    }),
    budgetSource: Type.String({
      description: 'Where the budget comes from: MEMORY_LIMIT_MB, cgroup v2, cgroup v1 or machine.'
    }),
    lastTooBig: Nullable(Type.Object({
      at: Type.String(),
      file: Type.String(),
      neededBytes: Type.Integer({ description: 'Its estimated peak.' }),
      freeBytes: Type.Integer({
        description: 'What the budget had free when it was refused (negative: already passed).'
      }),
      budgetBytes: Type.Integer()
    }), { description: 'The last file refused for memory, with its numbers; null when none was.' })
  }), { description: 'The memory budget snapshots are loaded within.' }),
  source: Nullable(Type.Object({
    url: Type.String({ description: 'SNAPSHOT_URL, without credentials.' }),
    etag: Nullable(Type.String(), { description: 'The served version, as the source names it.' }),
    lastModified: Nullable(Type.String()),
    lastChecked: Nullable(Type.String(), { description: 'When the source was last asked (ISO-8601).' }),
    lastChanged: Nullable(Type.String(), { description: 'When a new object from it was last served.' }),
    lastError: Nullable(Type.Object({ at: Type.String(), message: Type.String() }), {
      description:
        'The last failed check: the source unreachable or refusing, a download cut short or too large, a bad object.'
    }),
    checks: Type.Integer(),
    errors: Type.Integer()
  }), { description: 'The published source followed (SNAPSHOT_URL); null when the snapshot is a file.' }),
  servingThreads: Nullable(Type.Array(Type.Object({
    id: Type.Integer({ description: 'Its place among the serving threads, from 0.' }),
    threadId: Type.Integer({ description: 'Its Node.js thread id (a thread started again gets a new one).' }),
    version: Nullable(Type.String(), {
      description: 'The version it serves; null while it has not yet served the current one.'
    }),
    since: Type.String({ description: 'When it was started (ISO-8601).' }),
    restarts: Type.Integer({ description: 'How often it was started again after it stopped.' }),
    lettingGo: Type.Array(Type.String(), {
      description: 'Versions it no longer serves whose memory the collector has not yet taken (an answer still sending from one holds it); the memory budget waits for them.'
    })
  })), {
    description: 'The serving threads (WORKERS > 1), each serving the one shared copy of the snapshot; null when one thread does everything.'
  }),
  pin: Nullable(PinSchema, {
    description: 'The pinned version (POST /-/rollback or /-/pin; GET /-/versions); null when the source is followed.'
  }),
  newest: Nullable(NewestSchema, {
    description: 'While pinned: the newer file or published object noticed and not loaded; null when none.'
  }),
  trouble: Nullable(Type.Object({
    delay: Nullable(Type.String(), {
      description: 'DELAY_MS: `200` (ms), `100-400` (uniform), `~150` (lognormal median); null for none.'
    }),
    failRate: Type.Number({ description: 'FAIL_RATE: the share of page requests answered with failStatus.' }),
    failStatus: Type.Integer(),
    fault: Nullable(Type.String(), { description: 'FAULT: reset, truncate or dribble; null for none.' }),
    faultRate: Type.Number({
      description: 'FAULT_RATE: the share of page requests the fault breaks (0 without a fault).'
    }),
    chaos: Type.Boolean({
      description: 'CHAOS: requests may ask for their own delay and status (Prefer, __delay, __status).'
    }),
    seed: Type.Integer({ description: 'The seed of the sequence drawn: CHAOS_SEED, or the one drawn at start.' }),
    replay: Type.Union([Type.Literal('request'), Type.Literal('order')], {
      description: 'CHAOS_REPLAY: whether the seed\'s draws follow each request (its key and how often it was asked for before) or the order requests arrive in.'
    })
  }), { description: 'Simulated trouble (a demo server): what every page request may get; null when there is none.' })
}, { title: 'Status' })

export type Status = Static<typeof StatusSchema>

export const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { title: 'Health' })

export const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unready')]),
  reason: Type.Optional(Type.String({
    description: 'Why not ready; or, when ready, that the served snapshot is stale.'
  }))
}, { title: 'Readiness' })
