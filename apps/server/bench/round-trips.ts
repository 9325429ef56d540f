/**
 * `npm run bench -- --round-trips` (or `npm run bench:round-trips -w apps/server`): what a
 * wishlist write costs in round trips to PostgreSQL, and what a network hop to it costs.
 *
 * 1. Round trips, counted by PgBouncer (`SHOW STATS`: queries and transactions of the run's
 *    database). The service runs behind a private PgBouncer in transaction mode
 *    (PG_POOL_MODE=transaction, DATABASE_DIRECT_URL for its change feed) with the background
 *    work held back (the analytics applier and the webhook poll every 60 s), and one client
 *    sends each kind of request `--requests` times, one at a time: add, PATCH, move, remove,
 *    an uncached GET (a customer read for the first time) and a cached GET, then the cached
 *    GET again with a second instance serving the database (`get-cached-2`). Per request:
 *    the counters' movement over its stretch ÷ the requests.
 * 2. The deferred work: the service again with its default intervals under a concurrent
 *    add/remove load, then until the analytics inbox is empty; the queries beyond the request
 *    path's, per write.
 * 3. A 1 ms hop: the service reaches PostgreSQL through bench/http/delay-proxy.ts, which
 *    holds each chunk 1 ms in each direction, or passes it on at once; one client adds and
 *    removes `--latency-requests` times. Processes alternate (0, 1, 0, 1 … ms); the p50 of
 *    add and of remove are reported per delay at their median process, and the added time as
 *    the median over the pairs of their difference.
 *
 *   npm run bench -- --round-trips [--requests 300] [--latency-requests 1500] [--processes 2] [--out bench/results/round-trips.json]
 *   npm run bench:round-trips -w apps/server    # the same
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, openSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import type { RequestSpec } from 'autocannon'
import pg from 'pg'
import { startPgBouncer } from '../test/helpers/pgbouncer.js'
import { addRemoveRequests } from './http/add-remove.js'
import { BENCH_JWT_SECRET, BENCH_RATE_LIMITS, type DatasetInfo, prepareRunDatabase } from './http/dataset.js'
import { load } from './http/load.js'

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')

export interface RoundTripsOptions {
  /** Requests of each kind counted through PgBouncer. */
  requests: number
  /** Add/remove pairs per process through the delay proxy. */
  latencyRequests: number
  /** Service processes per delay (alternating). */
  processes: number
  pgUrl: string
  dataDir: string
  out: string
  log: (line: string) => void
}

let opts: RoundTripsOptions
const log = (line: string) => opts.log(line)

/** Starts a script as a child process; resolves with what it reports over IPC first. */
async function child<T>(script: string, env: Record<string, string>): Promise<{ proc: ChildProcess; message: T; stop(): Promise<void> }> {
  const args = [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), join(serverDir, script)]
  const devNull = openSync('/dev/null', 'w')
  const proc = spawn(process.execPath, args, {
    cwd: serverDir,
    env: { ...process.env, ...env },
    stdio: ['ignore', devNull, 'inherit', 'ipc'],
  })
  const message = await new Promise<T>((ok, fail) => {
    proc.once('message', (m) => ok(m as T))
    proc.once('exit', (code) => fail(new Error(`${script} exited with ${code} before it was ready`)))
  })
  const stop = () =>
    new Promise<void>((done) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return done()
      proc.once('exit', () => done())
      proc.kill('SIGTERM')
    })
  return { proc, message, stop }
}

const startService = async (env: Record<string, string>) => {
  const c = await child<{ listening: string }>('bench/http/service-server.mjs', {
    JWT_SECRET: BENCH_JWT_SECRET,
    LOG_LEVEL: 'warn',
    ...BENCH_RATE_LIMITS,
    ...env,
  })
  return { base: c.message.listening, stop: c.stop }
}

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text) as { data: Record<string, unknown> }
}

const bearer = async (base: string, info: DatasetInfo, customerId?: string) => ({
  authorization: `Bearer ${String((await call(base, 'POST', '/v1/auth/token', {}, { api_key: info.keyId, api_secret: info.secret, ...(customerId === undefined ? {} : { customer_id: customerId }) })).data.token)}`,
})

interface Counts {
  queries: number
  transactions: number
}

/** Sequential requests of each kind through PgBouncer: queries and transactions per request. */
async function countRoundTrips(runUrl: string, info: DatasetInfo): Promise<Record<string, Counts>> {
  const bouncer = await startPgBouncer()
  const database = new URL(runUrl).pathname.slice(1)
  const serviceEnv = {
    DATABASE_URL: bouncer.url(database),
    PG_POOL_MODE: 'transaction',
    DATABASE_DIRECT_URL: runUrl,
    ANALYTICS_APPLY_INTERVAL_MS: '60000',
    WEBHOOK_POLL_INTERVAL_MS: '60000',
  }
  const service = await startService(serviceEnv)
  let second: Awaited<ReturnType<typeof startService>> | undefined
  const counters = async (): Promise<Counts> => {
    const row = (await bouncer.admin('SHOW STATS')).find((r) => r.database === database)
    return { queries: Number(row?.total_query_count ?? 0), transactions: Number(row?.total_xact_count ?? 0) }
  }
  const n = opts.requests
  const out: Record<string, Counts> = {}
  const stretch = async (name: string, one: (i: number) => Promise<unknown>) => {
    await one(-1) // the first of its kind (statement compiled, pool warm) is not counted
    const before = await counters()
    for (let i = 0; i < n; i++) await one(i)
    const after = await counters()
    out[name] = { queries: (after.queries - before.queries) / n, transactions: (after.transactions - before.transactions) / n }
    log(`  ${name.padEnd(12)} ${out[name].queries.toFixed(2)} queries, ${out[name].transactions.toFixed(2)} transactions per request`)
  }
  try {
    const { base } = service
    await call(base, 'PATCH', '/v1/admin/settings', await bearer(base, info), { multi_wishlist_enabled: true })
    const me = await bearer(base, info, '4000001')
    const list = ((await call(base, 'POST', '/v1/wishlists/me/lists', me, { name: 'Round trips' })).data.wishlist as { wishlistId: string })
      .wishlistId
    const product = (i: number) => String(200_000 + i + 1)
    await stretch('add', (i) => call(base, 'POST', '/v1/wishlists/me/items', me, { product_id: product(i), variant_id: '42' }))
    await stretch('patch', (i) => call(base, 'PATCH', `/v1/wishlists/me/items/${product(i)}`, me, { quantity: 2 }))
    await stretch('move', (i) =>
      call(base, 'POST', '/v1/wishlists/me/items/move', me, { product_id: product(i), from: 'default', to: list }),
    )
    await stretch('remove', (i) => call(base, 'DELETE', `/v1/wishlists/me/items/${product(i)}?wishlist_id=${list}`, me))
    const readers: Record<string, string>[] = []
    for (let i = -1; i < n; i++) readers.push(await bearer(base, info, String(5_000_002 + i)))
    await stretch('get-uncached', (i) => call(base, 'GET', '/v1/wishlists/me?limit=50', readers[i + 1] as Record<string, string>))
    const reader = readers[0] as Record<string, string>
    await stretch('get-cached', () => call(base, 'GET', '/v1/wishlists/me?limit=50', reader))
    // A second instance on the database: each now checks the owner's version on every cached
    // read (db/connect.ts, changeFeed), and the body still comes from the cache.
    second = await startService(serviceEnv)
    await stretch('get-cached-2', () => call(base, 'GET', '/v1/wishlists/me?limit=50', reader))
  } finally {
    await second?.stop()
    await service.stop()
    await bouncer.stop()
  }
  return out
}

/** The add-remove scenario's load (bench/http/add-remove.ts) on 64 customers. */
async function addRemoveLoad(base: string, info: DatasetInfo): Promise<RequestSpec[]> {
  const authorizations: string[] = []
  for (let i = 0; i < 64; i++) authorizations.push((await bearer(base, info, String(3_000_001 + i))).authorization)
  return addRemoveRequests(authorizations)
}

/** Queries and transactions per write under load with the background work at its defaults, until it is done. */
async function countUnderLoad(runUrl: string, info: DatasetInfo): Promise<Counts & { writes: number }> {
  const bouncer = await startPgBouncer()
  const database = new URL(runUrl).pathname.slice(1)
  const service = await startService({ DATABASE_URL: bouncer.url(database), PG_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: runUrl })
  const direct = new pg.Client({ connectionString: runUrl })
  await direct.connect()
  try {
    const requests = await addRemoveLoad(service.base, info)
    const counters = async (): Promise<Counts> => {
      const row = (await bouncer.admin('SHOW STATS')).find((r) => r.database === database)
      return { queries: Number(row?.total_query_count ?? 0), transactions: Number(row?.total_xact_count ?? 0) }
    }
    await load({ url: service.base, connections: 16, durationSec: 2, requests })
    const before = await counters()
    const figures = await load({ url: service.base, connections: 16, durationSec: 5, requests })
    // Until the deferred work of those writes is done: the inbox empty, one more applier pass.
    for (let t = 0; t < 600; t++) {
      const { rows } = await direct.query<{ n: string }>('select count(*) as n from analytics_inbox')
      if (Number(rows[0]?.n) === 0) break
      await new Promise((r) => setTimeout(r, 50))
    }
    await new Promise((r) => setTimeout(r, 1_100)) // one webhook poll and applier pass of an idle service
    const after = await counters()
    const writes = figures.requests
    return { writes, queries: (after.queries - before.queries) / writes, transactions: (after.transactions - before.transactions) / writes }
  } finally {
    await direct.end()
    await service.stop()
    await bouncer.stop()
  }
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number

interface LatencyRun {
  add: number
  remove: number
  /** One prepared statement by a bare pg client through the same proxy: a round trip and nothing else. */
  floor: number
}

/** Sequential add + remove through the delay proxy, then the floor through it: p50 of each, in ms. */
async function latencyRun(runUrl: string, info: DatasetInfo, delayMs: number): Promise<LatencyRun> {
  const pgUrl = new URL(runUrl)
  const proxy = await child<{ port: number }>('bench/http/delay-proxy.ts', {
    UPSTREAM_HOST: pgUrl.hostname,
    UPSTREAM_PORT: pgUrl.port || '5432',
    DELAY_MS: String(delayMs),
  })
  const viaProxy = new URL(runUrl)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.message.port)
  const service = await startService({ DATABASE_URL: viaProxy.toString() })
  try {
    const me = await bearer(service.base, info, `4100${delayMs}${performance.now().toFixed(0).slice(-4)}`)
    const add: number[] = []
    const remove: number[] = []
    const warm = Math.min(300, opts.latencyRequests)
    for (let i = 0; i < warm + opts.latencyRequests; i++) {
      const product = String(300_000 + i)
      let t = performance.now()
      await call(service.base, 'POST', '/v1/wishlists/me/items', me, { product_id: product, variant_id: '42' })
      if (i >= warm) add.push(performance.now() - t)
      t = performance.now()
      await call(service.base, 'DELETE', `/v1/wishlists/me/items/${product}`, me)
      if (i >= warm) remove.push(performance.now() - t)
    }
    await service.stop()
    const bare = new pg.Client({ connectionString: viaProxy.toString() })
    await bare.connect()
    const floor: number[] = []
    try {
      for (let i = 0; i < warm + opts.latencyRequests; i++) {
        const t = performance.now()
        await bare.query({ name: 'floor', text: 'select $1::integer + 1 as n', values: [i] })
        if (i >= warm) floor.push(performance.now() - t)
      }
    } finally {
      await bare.end()
    }
    return { add: p50(add), remove: p50(remove), floor: p50(floor) }
  } finally {
    await service.stop()
    await proxy.stop()
  }
}

export async function runRoundTripsBench(options: RoundTripsOptions): Promise<void> {
  opts = options
  const { run, info } = await prepareRunDatabase(
    'postgres',
    { analyticsEvents: 10_000, customers: 1_000 },
    { dataDir: opts.dataDir, pgUrl: opts.pgUrl, reseed: false, log },
  )
  try {
    log('round trips per request, through PgBouncer (transaction mode), background work held back:')
    const perRequest = await countRoundTrips(run.url, info)
    log('under an add/remove load with the background work at its defaults:')
    const underLoad = await countUnderLoad(run.url, info)
    const writePath = ((perRequest.add?.queries ?? 0) + (perRequest.remove?.queries ?? 0)) / 2
    const deferred = underLoad.queries - writePath
    log(
      `  ${underLoad.writes} writes: ${underLoad.queries.toFixed(2)} queries and ${underLoad.transactions.toFixed(2)} transactions per write in all; deferred ${deferred.toFixed(2)} queries per write`,
    )
    log(`add/remove p50 through a TCP proxy holding each chunk 0 or 1 ms each way (${opts.processes} processes each, alternating):`)
    const runs: Record<'0' | '1', LatencyRun[]> = { '0': [], '1': [] }
    for (let p = 0; p < opts.processes; p++) {
      for (const delay of [0, 1] as const) {
        const r = await latencyRun(run.url, info, delay)
        runs[delay].push(r)
        log(
          `  ${delay} ms: add p50 ${r.add.toFixed(2)} ms, remove p50 ${r.remove.toFixed(2)} ms, one bare round trip p50 ${r.floor.toFixed(2)} ms`,
        )
      }
    }
    const median = (delay: '0' | '1', k: keyof LatencyRun) => p50(runs[delay].map((r) => r[k]))
    // The added time as the median of each alternating pair's difference: the p50 without the
    // hop moves from one service process to the next by more than the margin being measured.
    const figures = (k: keyof LatencyRun) => ({
      no_delay_p50_ms: median('0', k),
      delay_p50_ms: median('1', k),
      added_ms: p50(runs['1'].map((r, i) => r[k] - (runs['0'][i] as LatencyRun)[k])),
    })
    const latency = { add: figures('add'), remove: figures('remove'), floor: figures('floor') }
    for (const k of ['add', 'remove'] as const)
      log(
        `  ${k}: +${latency[k].added_ms.toFixed(2)} ms p50 with the 1 ms hop (target ≤ 2.5); one bare round trip: +${latency.floor.added_ms.toFixed(2)} ms; ${(latency[k].added_ms / latency.floor.added_ms).toFixed(2)} round trips' worth`,
      )
    const result = {
      date: new Date().toISOString(),
      node: process.version,
      requests: opts.requests,
      per_request: perRequest,
      under_load: { ...underLoad, deferred_queries_per_write: deferred },
      latency: { ...latency, runs },
    }
    mkdirSync(dirname(opts.out), { recursive: true })
    writeFileSync(opts.out, `${JSON.stringify(result, null, 2)}\n`)
    log(`written to ${opts.out}`)
  } finally {
    await run.drop()
  }
}
