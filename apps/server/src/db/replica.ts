/**
 * The read replica (DATABASE_REPLICA_URL, docs/operations.md, "Read replica"): a PostgreSQL
 * streaming replica that serves the reads allowed to lag (shared lists, public review lists
 * and summaries, analytics, exports) while it is up and at most REPLICA_MAX_LAG_MS behind the
 * primary; otherwise they go to the primary. Every other read, and every read of a request
 * that writes, is the primary's (`Storage.db`): services ask `Reads` only for the reads above.
 *
 * The lag is measured on a timer, never per request: each check takes the primary's WAL
 * position, then the replica's replay position and the commit time of its last replayed
 * transaction. Two bounds on how stale the replica is follow, and the smaller is taken:
 * - by position: the replica has replayed everything the primary had written at the latest
 *   check whose primary position it has reached (now: when it has reached this check's);
 * - by time: the replica's clock minus the commit time of its last replayed transaction
 *   (what stands between is unreplayed, so it is no staler than that).
 * The second alone overstates an idle primary's replica (its last commit is old while nothing
 * is pending); the first alone a replica of a busy primary (its position never quite reaches
 * the moving one). A replica that stops replaying (paused, disconnected, crashed) grows both,
 * at the clock's pace, and an unanswered check counts as the time since the last answered one:
 * the replica serves reads only while `freshAsOf + REPLICA_MAX_LAG_MS >= now`.
 */
import { sql } from 'kysely'
import type { Db } from './types.js'

/** The Db a read goes to; `replica` says which one it is (the page cache treats the replica's reads apart). */
export interface Reader {
  db: Db
  replica: boolean
}

export interface ReplicaState {
  configured: boolean
  /** The last check reached the replica (and it is in recovery: a promoted replica is no replica). */
  up: boolean
  /** The staleness bound of the last check (ms), growing with the time since; null when unknown. */
  lagMs: number | null
  /** Reads that may lag go to the replica now. */
  serving: boolean
}

export interface Reads {
  /** For reads that may be stale by up to REPLICA_MAX_LAG_MS: the replica while it keeps up, else the primary. */
  reader(): Reader
  /**
   * For reads that must include everything the primary has committed so far (analytics and
   * exports, after applying the shop's pending facts on the primary): the replica only once it
   * has replayed up to the primary's current WAL position, else the primary.
   */
  caughtUp(): Promise<Reader>
  state(): ReplicaState
  /** Called with the new state when the replica starts or stops serving reads. */
  onChange(listener: (state: ReplicaState) => void): void
  close(): Promise<void>
}

/** No replica: every read is the primary's. */
export function primaryReads(db: Db): Reads {
  const primary: Reader = { db, replica: false }
  const state: ReplicaState = { configured: false, up: false, lagMs: null, serving: false }
  return {
    reader: () => primary,
    caughtUp: async () => primary,
    state: () => state,
    onChange() {},
    close: async () => {},
  }
}

/** A WAL position (`16/B374D848`) as one number. */
export function lsnValue(lsn: string): bigint {
  const [hi = '0', lo = '0'] = lsn.split('/')
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`)
}

const primaryPosition = async (db: Db): Promise<bigint> => {
  const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(db)
  return lsnValue(rows[0]?.lsn ?? '0/0')
}

interface ReplayRow {
  recovery: boolean
  replay: string | null
  /** ms since the last replayed commit by the replica's clock; null before the first. */
  since: number | null
}

const replayed = async (db: Db): Promise<ReplayRow | undefined> => {
  const { rows } = await sql<ReplayRow>`select pg_is_in_recovery() as recovery, pg_last_wal_replay_lsn()::text as replay,
    (extract(epoch from (clock_timestamp() - pg_last_xact_replay_timestamp())) * 1000)::float8 as since`.execute(db)
  return rows[0]
}

/** How often the lag is measured: a quarter of the limit, between 25 ms and 500 ms. */
export const checkIntervalMs = (maxLagMs: number): number => Math.min(500, Math.max(25, Math.floor(maxLagMs / 4)))

/** Primary positions taken by past checks, oldest first (enough to cover the limit). */
const SAMPLES = 64

export function replicaReads(opts: { primary: Db; replica: Db; maxLagMs: number; intervalMs?: number; clock?: () => number }): Reads {
  const { maxLagMs } = opts
  const clock = opts.clock ?? Date.now
  const intervalMs = opts.intervalMs ?? checkIntervalMs(maxLagMs)
  const primary: Reader = { db: opts.primary, replica: false }
  const replica: Reader = { db: opts.replica, replica: true }
  const samples: { at: number; lsn: bigint }[] = []
  const listeners: ((state: ReplicaState) => void)[] = []
  let up = false
  /** Everything the primary had committed before this time (local clock) is on the replica; undefined: unknown. */
  let freshAsOf: number | undefined
  let replayLsn = -1n
  let serving = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let closed = false

  const usable = () => up && freshAsOf !== undefined && clock() - freshAsOf <= maxLagMs
  const state = (): ReplicaState => ({
    configured: true,
    up,
    lagMs: freshAsOf === undefined ? null : Math.max(0, clock() - freshAsOf),
    serving: usable(),
  })
  const settle = () => {
    const now = usable()
    if (now === serving) return
    serving = now
    const s = state()
    for (const l of listeners) l(s)
  }

  async function check(): Promise<void> {
    const at = clock()
    try {
      const lsn = await primaryPosition(opts.primary)
      samples.push({ at, lsn })
      if (samples.length > SAMPLES) samples.shift()
    } catch {
      // The primary's position is unknown this time: the bound by time, and older positions, still hold.
    }
    try {
      const row = await replayed(opts.replica)
      const now = clock()
      up = row?.recovery === true && row.replay !== null
      if (!up || row === undefined || row.replay === null) {
        freshAsOf = undefined
      } else {
        replayLsn = lsnValue(row.replay)
        let asOf = row.since === null ? undefined : now - row.since
        for (let i = samples.length - 1; i >= 0; i--) {
          const s = samples[i] as { at: number; lsn: bigint }
          if (s.lsn <= replayLsn) {
            asOf = asOf === undefined ? s.at : Math.max(asOf, s.at)
            break
          }
        }
        // Replay only moves forward: what it held at an earlier check it still holds. Never later than now (clock skew).
        if (asOf !== undefined) freshAsOf = Math.min(now, Math.max(asOf, freshAsOf ?? asOf))
      }
    } catch {
      up = false
      freshAsOf = undefined
    }
    settle()
  }

  function tick() {
    if (closed || running !== undefined) return
    running = check().finally(() => {
      running = undefined
    })
  }

  function start() {
    if (timer !== undefined || closed) return
    timer = setInterval(() => {
      tick()
      // A check that does not come back must still let the bound grow past the limit.
      settle()
    }, intervalMs)
    timer.unref()
    tick()
  }

  return {
    reader() {
      start()
      return usable() ? replica : primary
    },
    async caughtUp() {
      start()
      if (!usable()) return primary
      try {
        const target = await primaryPosition(opts.primary)
        if (replayLsn >= target) return replica
        const row = await replayed(opts.replica)
        return row?.recovery === true && row.replay !== null && lsnValue(row.replay) >= target ? replica : primary
      } catch {
        return primary
      }
    },
    state() {
      start()
      return state()
    },
    onChange(listener) {
      listeners.push(listener)
    },
    async close() {
      closed = true
      clearInterval(timer)
      await running
    },
  }
}
