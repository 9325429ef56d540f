/**
 * Failover drill: PostgreSQL's primary dies under write load and its synchronous standby takes
 * over, behind PgBouncer, without the service being restarted and without losing a write it
 * acknowledged.
 *
 *   npm run drill:failover -w apps/server            (or, in apps/server: npx tsx scripts/failover-drill.ts [writes])
 *
 * What it does, on throwaway servers only (never the shared PostgreSQL on 5432):
 * 1. a primary (initdb, own free port, wal_level=replica, synchronous_commit=on,
 *    synchronous_standby_names=standby1) and a standby (`pg_basebackup -R`, own port),
 *    checked to be synchronous (pg_stat_replication.sync_state = 'sync');
 * 2. a private PgBouncer in front with two entries for the `wishlist` database: `wishlist`
 *    (transaction mode: DATABASE_URL, PG_POOL_MODE=transaction) and `wishlist_session`
 *    (session mode: DATABASE_DIRECT_URL, the change feed's LISTEN and migrations), so that
 *    re-pointing PgBouncer moves both and the page cache keeps its change feed;
 * 3. `wishlist serve` as a child process through it, a shop and an admin token;
 * 4. several concurrent clients adding distinct products, every request recorded with its answer;
 * 5. the primary killed (`pg_ctl stop -m immediate`), the standby promoted (`pg_ctl promote`),
 *    PgBouncer's ini rewritten to the standby and `RELOAD` sent to its admin console;
 * 6. the load kept on until writes succeed again and the history is long enough, then checks:
 *    every answer 2xx or 503 with Retry-After (a 500, any other status, a network error or a
 *    request hanging past 20 s fails), the same service process throughout, every
 *    acknowledged write on the new primary (at least `writes` of them), the change feed
 *    listening on the new primary and each customer's page agreeing with its rows.
 * Prints a summary and exits 1 when a check fails.
 */
import { pathToFileURL } from 'node:url'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createShopsService } from '../src/modules/shops/shops.service.js'
import { type PgBouncer, startPgBouncer } from '../test/helpers/pgbouncer.js'
import { type ReplicatedPair, STANDBY_NAME, startReplicatedPair } from '../test/helpers/pg-replication.js'
import { type ServerProcess, startServerProcess } from '../test/helpers/server-process.js'

/** The service's change feed sessions (db/connect.ts names them), wherever they are. */
const FEED_SESSIONS = "select count(*)::int as n from pg_stat_activity where application_name = 'wishlist change feed'"

/** A request still unanswered after this counts as hung (statement_timeout is 15 s). */
const HUNG_MS = 20_000
const DATABASE = 'wishlist'

/** PgBouncer's settings for a quick failover (docs/operations.md, "Failover"). */
export const FAILOVER_PGBOUNCER_SETTINGS = {
  // After a failed connect to the server, try again after 0.5 s instead of 15 s: once re-pointed,
  // PgBouncer reaches the new primary at once.
  server_login_retry: 0.5,
  // A server that is down answers nothing: give up connecting after 3 s (default 15 s).
  server_connect_timeout: 3,
  // A client waiting for a server connection gets an error after 5 s (default 120 s), which
  // the service answers as 503 with Retry-After instead of holding the request.
  query_wait_timeout: 5,
} as const

export interface DrillOptions {
  /** Acknowledged writes at least, in total (default 3,000). */
  writes?: number
  /** Concurrent writers, each on a wishlist of its own (default 8). */
  clients?: number
  /**
   * `promote-first` (default): PgBouncer is re-pointed once the standby accepts writes.
   * `repoint-first`: re-pointed while the standby is still read-only (an operator's wrong
   * order, or a promotion slower than the re-point): writes reach it and are refused (25006)
   * until it is promoted.
   */
  order?: 'promote-first' | 'repoint-first'
  /** Progress lines (default: none). */
  log?: (line: string) => void
}

export interface Outcome {
  productId: string
  customer: string
  status: number | 'hung' | 'network-error'
  retryAfter: string | null
  code?: string
  start: number
  end: number
}

export interface DrillResult {
  ok: boolean
  checks: { name: string; ok: boolean; detail: string }[]
  figures: {
    requests: number
    acknowledged: number
    acknowledgedBeforeKill: number
    acknowledgedAfterRecovery: number
    unavailable: number
    /** First non-2xx answer to the first 2xx answer after it (0 when every answer was a 2xx). */
    outageMs: number
    /** The longest time without any write acknowledged (between consecutive 2xx answers). */
    noWriteMs: number
    /** The primary gone (`pg_ctl stop` returned) to the first 2xx answer of a request sent after that. */
    killToFirstWriteMs: number
    /** The steps: kill, promote (returns once the standby accepts writes), re-point + RELOAD. */
    killMs: number
    promoteMs: number
    reloadMs: number
    /** Longest request (ms). */
    longestRequestMs: number
    /** Answered 503 (or cut) but committed after all: in doubt for the client, which retries. */
    unacknowledgedButStored: number
    otherStatuses: Record<string, number>
    /** The database errors behind the 5xx answers, as the service logged them (unavailable/unhandled, code: message → count). */
    surfacedErrors: Record<string, number>
  }
}

const is2xx = (o: Outcome) => typeof o.status === 'number' && o.status >= 200 && o.status < 300

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number, pauseMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
}

export async function runFailoverDrill(opts: DrillOptions = {}): Promise<DrillResult> {
  const target = opts.writes ?? 3_000
  const clients = opts.clients ?? 8
  const log = opts.log ?? (() => {})
  let pair: ReplicatedPair | undefined
  let bouncer: PgBouncer | undefined
  let service: ServerProcess | undefined
  try {
    const t0 = Date.now()
    pair = await startReplicatedPair({ synchronous: true })
    const { primary, standby } = pair
    await primary.query(`create database ${DATABASE}`)
    await until(
      async () =>
        (
          await primary.query<{ sync_state: string }>('select sync_state from pg_stat_replication where application_name = $1', [
            STANDBY_NAME,
          ])
        )[0]?.sync_state === 'sync',
      'the standby to stream synchronously',
      30_000,
    )
    log(`primary :${primary.port}, standby :${standby.port} (sync) in ${Date.now() - t0} ms`)

    // The schema and a shop, straight on the primary (the service then finds nothing to migrate).
    const storage = openStorage({ kind: 'postgres', url: primary.url(DATABASE) })
    let created: Awaited<ReturnType<ReturnType<typeof createShopsService>['create']>>
    try {
      await migrateToLatest(storage)
      created = await createShopsService({ db: storage.db, cacheTtlMs: 0 }).create({
        domain: 'failover-drill.myshopify.com',
        plan: 'scale',
      })
    } finally {
      await storage.destroy()
    }

    bouncer = await startPgBouncer({
      port: primary.port,
      databases: { [DATABASE]: { dbname: DATABASE }, [`${DATABASE}_session`]: { dbname: DATABASE, poolMode: 'session' } },
      settings: FAILOVER_PGBOUNCER_SETTINGS,
    })
    service = await startServerProcess({
      DATABASE_URL: bouncer.url(DATABASE),
      PG_POOL_MODE: 'transaction',
      DATABASE_DIRECT_URL: bouncer.url(`${DATABASE}_session`),
      REDIS_URL: '',
      RATE_LIMIT_ADMIN_PER_MIN: '10000000',
      RATE_LIMIT_SHOP_PER_MIN: '10000000',
      LOG_LEVEL: 'error',
    })
    const pid = service.child.pid
    log(`service started in ${Date.now() - t0} ms`)
    const tokenRes = await fetch(`${service.url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: created.apiKey.keyId, api_secret: created.apiKey.secret }),
    })
    const token = ((await tokenRes.json()) as { data: { token: string } }).data.token
    log(`PgBouncer :${bouncer.port}, service ${service.url} (pid ${pid}) in ${Date.now() - t0} ms`)

    // The load: `clients` writers, each adding distinct products to its own customer's wishlist.
    const outcomes: Outcome[] = []
    let nextProduct = 1_000_000
    let running = true
    const server = service
    const add = async (customer: string): Promise<Outcome> => {
      const productId = String(nextProduct++)
      const start = Date.now()
      try {
        const res = await fetch(`${server.url}/v1/wishlists/${customer}/items`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ product_id: productId }),
          signal: AbortSignal.timeout(HUNG_MS),
        })
        const body = (await res.json()) as { error?: { code: string } }
        return {
          productId,
          customer,
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          ...(body.error ? { code: body.error.code } : {}),
          start,
          end: Date.now(),
        }
      } catch (err) {
        const status = err instanceof Error && err.name === 'TimeoutError' ? 'hung' : 'network-error'
        return { productId, customer, status, retryAfter: null, start, end: Date.now() }
      }
    }
    const customers = Array.from({ length: clients }, (_, i) => String(7_100_001 + i))
    const writers = customers.map(async (customer) => {
      while (running) outcomes.push(await add(customer))
    })
    const acknowledged = () => outcomes.filter(is2xx).length
    // A page read per customer fills the page cache; its change feed (over the session-mode entry) listens from the start.
    for (const c of customers) await fetch(`${server.url}/v1/wishlists/${c}`, { headers: { authorization: `Bearer ${token}` } })
    await until(async () => (await primary.query<{ n: number }>(FEED_SESSIONS))[0]?.n === 1, 'the change feed on the primary', 20_000)
    const loadStart = Date.now()

    try {
      // Before the kill every write must succeed: anything else is a broken setup, not the failover.
      await until(
        () => {
          const failure = outcomes.find((o) => !is2xx(o))
          if (failure) throw new Error(`a write failed before the kill: ${JSON.stringify(failure)}`)
          return acknowledged() >= Math.ceil(target / 3)
        },
        `${Math.ceil(target / 3)} acknowledged writes before the kill`,
        120_000,
        10,
      )
      const killAt = Date.now()
      await primary.stop('immediate')
      const killed = Date.now()
      let promoted: number
      let reloaded: number
      log(`${acknowledged()} writes acknowledged in ${killAt - loadStart} ms`)
      if (opts.order === 'repoint-first') {
        await bouncer.repoint({ port: standby.port })
        reloaded = Date.now()
        // Writes reach the read-only standby: wait until one was refused there (25006), not only by
        // PgBouncer's login retry after the dead primary, and for a few answers, before promoting.
        const refusedByStandby = () => Object.keys(surfacedErrors(server.output())).some((k) => k.startsWith('unavailable 25006'))
        await until(
          () => refusedByStandby() && outcomes.filter((o) => o.start > reloaded).length >= clients,
          'a write refused by the read-only standby',
          30_000,
          10,
        )
        await standby.promote()
        promoted = Date.now()
        log(
          `primary killed (${killed - killAt} ms), PgBouncer re-pointed to the standby (${reloaded - killed} ms), standby promoted (${promoted - reloaded} ms)`,
        )
      } else {
        await standby.promote()
        promoted = Date.now()
        await bouncer.repoint({ port: standby.port })
        reloaded = Date.now()
        log(
          `primary killed (${killed - killAt} ms), standby promoted (${promoted - killed} ms), PgBouncer re-pointed (${reloaded - promoted} ms)`,
        )
      }
      const recoveredAfterKill = () => outcomes.some((o) => is2xx(o) && o.start > killed)
      await until(recoveredAfterKill, 'a write to succeed after the failover', 60_000, 10)
      const recoveredAt = Math.min(...outcomes.filter((o) => is2xx(o) && o.start > killed).map((o) => o.end))
      const afterRecovery = () => outcomes.filter((o) => is2xx(o) && o.start >= recoveredAt).length
      await until(
        () => acknowledged() >= target && afterRecovery() >= Math.ceil(target / 3),
        `${target} acknowledged writes, a third of them after the recovery`,
        120_000,
        10,
      )
      running = false
      await Promise.all(writers)

      // The checks.
      const checks: DrillResult['checks'] = []
      const check = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail })

      const bad = outcomes.filter((o) => !is2xx(o) && !(o.status === 503 && o.retryAfter !== null && o.retryAfter !== ''))
      const otherStatuses: Record<string, number> = {}
      for (const o of bad) {
        const key = `${String(o.status)}${o.code ? ` ${o.code}` : ''}`
        otherStatuses[key] = (otherStatuses[key] ?? 0) + 1
      }
      check(
        'every answer 2xx or 503 with Retry-After',
        bad.length === 0,
        bad.length === 0 ? `${outcomes.length} answers` : `${bad.length} others: ${JSON.stringify(otherStatuses)}`,
      )

      const alive = server.child.exitCode === null && server.child.signalCode === null && server.child.pid === pid
      const ready = alive ? (await fetch(`${server.url}/readyz`)).status : 0
      check('the service was never restarted', alive && ready === 200, `pid ${pid} ${alive ? 'still running' : 'exited'}, /readyz ${ready}`)

      const stored = new Set(
        (await standby.query<{ product_id: string }>('select product_id from wishlist_items', [], DATABASE)).map((r) => r.product_id),
      )
      const acked = outcomes.filter(is2xx)
      const lost = acked.filter((o) => !stored.has(o.productId))
      check(
        'every acknowledged write is on the new primary',
        lost.length === 0 && acked.length >= target,
        `${acked.length - lost.length} of ${acked.length} acknowledged writes stored (${target} needed)${
          lost.length
            ? `; missing ${lost
                .slice(0, 5)
                .map((o) => o.productId)
                .join(', ')}…`
            : ''
        }`,
      )

      // The change feed (LISTEN over the session-mode entry) reconnected, to the new primary.
      let listening = 0
      await until(
        async () => {
          listening = (await standby.query<{ n: number }>(FEED_SESSIONS))[0]?.n ?? 0
          return listening > 0
        },
        'the change feed on the new primary',
        20_000,
        100,
      ).catch(() => {})
      check('the change feed listens on the new primary', listening > 0, `${listening} change feed session(s)`)

      // Each customer's page (served by the page cache where it can) agrees with the rows.
      const counts = new Map(
        (
          await standby.query<{ owner_id: string; n: number }>(
            'select owner_id, count(*)::int as n from wishlist_items group by owner_id',
            [],
            DATABASE,
          )
        ).map((r) => [r.owner_id, r.n]),
      )
      const disagreeing: string[] = []
      for (const c of customers) {
        const page = await fetch(`${server.url}/v1/wishlists/${c}?limit=1`, { headers: { authorization: `Bearer ${token}` } })
        const total = page.status === 200 ? ((await page.json()) as { data: { total: number } }).data.total : -page.status
        if (total !== (counts.get(c) ?? 0)) disagreeing.push(`${c}: page ${total}, rows ${counts.get(c) ?? 0}`)
      }
      check('every page agrees with the new primary', disagreeing.length === 0, disagreeing.join('; ') || `${customers.length} customers`)

      const failed = outcomes.filter((o) => !is2xx(o))
      const firstFailure = failed.length ? Math.min(...failed.map((o) => o.end)) : undefined
      const outageEnd = firstFailure === undefined ? undefined : Math.min(...acked.filter((o) => o.end > firstFailure).map((o) => o.end))
      const figures: DrillResult['figures'] = {
        requests: outcomes.length,
        acknowledged: acked.length,
        acknowledgedBeforeKill: acked.filter((o) => o.end < killAt).length,
        acknowledgedAfterRecovery: afterRecovery(),
        unavailable: outcomes.filter((o) => o.status === 503).length,
        outageMs: firstFailure === undefined || outageEnd === undefined ? 0 : outageEnd - firstFailure,
        noWriteMs: longestGap(acked.map((o) => o.end)),
        killToFirstWriteMs: recoveredAt - killed,
        killMs: killed - killAt,
        promoteMs: opts.order === 'repoint-first' ? promoted - reloaded : promoted - killed,
        reloadMs: opts.order === 'repoint-first' ? reloaded - killed : reloaded - promoted,
        longestRequestMs: Math.max(...outcomes.map((o) => o.end - o.start)),
        unacknowledgedButStored: failed.filter((o) => stored.has(o.productId)).length,
        otherStatuses,
        surfacedErrors: surfacedErrors(server.output()),
      }
      log(`${acknowledged()} writes acknowledged in ${Date.now() - loadStart} ms`)
      return { ok: checks.every((c) => c.ok), checks, figures }
    } finally {
      running = false
      await Promise.all(writers)
    }
  } catch (err) {
    const logs = [
      service ? `service:\n${service.output().slice(-3_000)}` : '',
      bouncer ? `pgbouncer:\n${bouncer.log().slice(-3_000)}` : '',
      pair ? `primary:\n${pair.primary.log().slice(-2_000)}\nstandby:\n${pair.standby.log().slice(-2_000)}` : '',
    ]
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs.filter(Boolean).join('\n')}`, { cause: err })
  } finally {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM')
      await service.exited
    }
    await bouncer?.stop()
    await pair?.destroy()
  }
}

function longestGap(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b)
  let gap = 0
  for (let i = 1; i < sorted.length; i++) gap = Math.max(gap, (sorted[i] as number) - (sorted[i - 1] as number))
  return gap
}

/** The service's error log lines (pino JSON: `unavailable: …` → 503, `unhandled error` → 500), counted by the error's code and message. */
function surfacedErrors(output: string): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const line of output.split('\n')) {
    if (!line.includes('"unavailable') && !line.includes('"unhandled error"')) continue
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { code?: string; message?: string } }
      const key = `${entry.msg?.startsWith('unavailable') ? 'unavailable' : 'unhandled'} ${entry.err?.code ?? '-'}: ${entry.err?.message ?? '?'}`
      counts[key] = (counts[key] ?? 0) + 1
    } catch {
      // not a log line
    }
  }
  return counts
}

export function formatDrill(result: DrillResult): string {
  const f = result.figures
  return [
    ...result.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
    `writes: ${f.requests} requests, ${f.acknowledged} acknowledged (${f.acknowledgedBeforeKill} before the kill, ${f.acknowledgedAfterRecovery} after the recovery), ${f.unavailable} answered 503`,
    `outage: ${f.outageMs} ms from the first non-2xx to the next 2xx, ${f.noWriteMs} ms without an acknowledged write; ${f.killToFirstWriteMs} ms from the kill to the first write sent after it acknowledged (kill ${f.killMs} ms, promote ${f.promoteMs} ms, re-point + RELOAD ${f.reloadMs} ms); longest request ${f.longestRequestMs} ms`,
    `errors behind the 5xx answers: ${JSON.stringify(f.surfacedErrors)}`,
    `in doubt: ${f.unacknowledgedButStored} writes answered 503 but committed (a retry finds them there)`,
    result.ok ? 'failover drill: passed' : 'failover drill: FAILED',
  ].join('\n')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2)
  const order = args.includes('--repoint-first') ? 'repoint-first' : 'promote-first'
  const writes = args.find((a) => /^\d+$/.test(a))
  try {
    const result = await runFailoverDrill({
      order,
      ...(writes === undefined ? {} : { writes: Number(writes) }),
      log: (line) => console.log(line),
    })
    console.log(formatDrill(result))
    process.exit(result.ok ? 0 : 1)
  } catch (err) {
    console.error(err)
    process.exit(1)
  }
}
