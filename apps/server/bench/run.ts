/**
 * `npm run bench` (repository root): the one command that measures the service.
 *
 * In one run: a ceiling server (bare Fastify answering the GET page's exact bytes), then
 * the service on SQLite and on PostgreSQL, each as a child process (`startServer()`, the
 * production logger and rate limiter included), pinned to CPU 0 with taskset while this
 * process and autocannon stay on CPU 1; loopback only; every scenario bounded. The ceiling
 * is measured before, between and after the backends, and each backend's ratios use the
 * ceiling runs around it, so shared-machine noise cancels out as far as it can. On SQLite,
 * `get-page`, `guest-get` and `add-remove` are also measured against floors
 * (bench/http/floor-server.ts: bare Fastify doing the same database work: the cached page
 * confirmed by the change stamp, the same transaction as an add and a remove), and on
 * PostgreSQL `add-remove` against its write floor (bench/http/pg-floor-server.ts), run as
 * often as the service processes and reported at their median: `floor_ratio`.
 *
 *   npm run bench                         # full: 1M analytics events, 8 s per scenario
 *   npm run bench -- --quick              # development: 10k events, 3 s per scenario
 *   npm run bench -- --backends sqlite --scenarios get-page,guest-get --duration 5
 *   npm run bench -- --customers 1000000 --compare-customers 10000 --scenarios get-page,guest-get --out bench/results/scale-1m.json
 *
 * Flags (env in brackets): --duration s [BENCH_DURATION], --warmup s [BENCH_WARMUP], --max-warmup s
 * [BENCH_MAX_WARMUP] (after --warmup, 1 s slices until the server's CPU per answer is steady),
 * --connections n [BENCH_CONNECTIONS], --backends [BENCH_BACKENDS], --scenarios
 * [BENCH_SCENARIOS], --analytics-events n [BENCH_ANALYTICS_EVENTS], --customers n
 * [BENCH_CUSTOMERS], --webhook-events n [BENCH_WEBHOOK_EVENTS], --pg-url [BENCH_PG_URL],
 * --data-dir [BENCH_DATA_DIR], --out path, --reseed (rebuild the dataset templates),
 * --cpu-prof dir (the service writes a V8 CPU profile per backend there), --processes n
 * [BENCH_PROCESSES] (service processes for get-page, add-remove and guest-get, whose median
 * run is reported; 3, or 1 with --quick), --compare-customers n [BENCH_COMPARE_CUSTOMERS]
 * (those scenarios also on an n-customer dataset, processes alternating: machine.scale).
 *
 *   npm run bench -- --floor-concerns 8   # the GET page's cost, concern by concern, in one process
 *   npm run bench -- --floor-concerns 8 --scenarios add-remove
 *
 *   npm run bench -- --move               # wishlist move on the dataset, SQLite → PostgreSQL → SQLite (bench/move.ts)
 *   npm run bench -- --round-trips        # PostgreSQL round trips per request (PgBouncer's counters) and a 1 ms hop (bench/round-trips.ts)
 *   npm run bench -- --notifications      # one back-in-stock to 10,000 shoppers through Klaviyo's rate limits (bench/notifications.ts)
 *
 * --floor-concerns ROUNDS: instead of the run above, one process (bench/http/floor-server.ts)
 * holds the ceiling, the bare read floor, the floor with each of the service's per-request
 * concerns (access line, rate limit, metrics) and all three, and the service itself; the
 * GET page load goes to each in turn for 2 s per round, and each one's server CPU per
 * request is reported at its median round. The machine's noise falls on all of them alike.
 * With `--scenarios add-remove`: the bare write floor, with the service's other statements,
 * with the three concerns, with both, and the service. The rows go into the results file
 * (`--out`, latest.json by default) as `floor_concerns.get_page` / `.add_remove`, which the
 * full run keeps.
 *
 *   npm run bench -- --floor-concerns 1 --instructions   # the same variants, instructions counted (valgrind)
 *
 * --instructions (with --floor-concerns): each variant in a process of its own under
 * callgrind, its user-space instructions per request counted over a fixed number of requests
 * after a warm-up (floorInstructions): for the floors, a figure the machine's noise hardly
 * moves, to locate costs of a few per cent (not for the service: see floorInstructions). Into `floor_concerns.get_page_instructions`; the
 * GET page only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { RequestSpec } from 'autocannon'
import {
  BENCH_JWT_SECRET,
  BENCH_RATE_LIMITS,
  type BenchBackend,
  type DatasetInfo,
  prepareRunDatabase,
  type RunDatabase,
} from './http/dataset.js'
import { addRemoveRequests } from './http/add-remove.js'
import { buildServer } from './http/build.js'
import { runMoveBench } from './move.js'
import { runRoundTripsBench } from './round-trips.js'
import { runNotificationsBench } from './notifications.js'
import { SERVICE_NODE_FLAGS } from '../src/cli/node-flags.js'
import { type LoadFigures, type LoadSpec, load, postgresCpuUs, warmThenLoad } from './http/load.js'

const here = dirname(fileURLToPath(import.meta.url))
const serverDir = resolve(here, '..')
const repoRoot = resolve(serverDir, '../..')

const SCENARIOS = [
  'get-page',
  'add-remove',
  'guest-get',
  'shared-read',
  'token',
  'reviews-list',
  'analytics-overview',
  'analytics-conversions',
  'import-500',
  'webhook-delivery',
] as const
type ScenarioName = (typeof SCENARIOS)[number]

/** The scenarios run against bench/http/floor-server.ts too (SQLite; add-remove also pg-floor-server.ts), and their floor rows. */
const FLOORS = {
  'get-page': 'read-floor',
  'guest-get': 'guest-read-floor',
  'add-remove': 'write-floor',
  'analytics-overview': 'overview-floor',
  'analytics-conversions': 'conversions-floor',
} as const
type FloorName = (typeof FLOORS)[keyof typeof FLOORS]
const FLOORED = Object.keys(FLOORS) as (keyof typeof FLOORS)[]

export interface ScenarioRow {
  name: ScenarioName | 'ceiling' | FloorName
  backend: BenchBackend | 'none'
  rps: number
  p50_ms: number | null
  p99_ms: number | null
  ratio: number
  /** On SQLite, the floored scenarios: req/s against their floor's. */
  floor_ratio?: number
}

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'max-warmup': { type: 'string' },
    connections: { type: 'string' },
    backends: { type: 'string' },
    scenarios: { type: 'string' },
    'analytics-events': { type: 'string' },
    customers: { type: 'string' },
    'compare-customers': { type: 'string' },
    'webhook-events': { type: 'string' },
    'pg-url': { type: 'string' },
    'data-dir': { type: 'string' },
    out: { type: 'string' },
    reseed: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'csv-items': { type: 'string' },
    processes: { type: 'string' },
    'floor-concerns': { type: 'string' },
    instructions: { type: 'boolean', default: false },
    move: { type: 'boolean', default: false },
    'round-trips': { type: 'boolean', default: false },
    notifications: { type: 'boolean', default: false },
    holders: { type: 'string' },
    requests: { type: 'string' },
    'latency-requests': { type: 'string' },
  },
})
const env = process.env
const quick = flags.quick === true
const num = (flag: string | undefined, envValue: string | undefined, fallback: number) => Number(flag ?? envValue ?? fallback)
const opts = {
  durationSec: num(flags.duration, env.BENCH_DURATION, quick ? 3 : 8),
  warmupSec: num(flags.warmup, env.BENCH_WARMUP, quick ? 1 : 2),
  /** Longest warm-up: after warmupSec, 1 s slices until the server's CPU per answer is steady. */
  maxWarmupSec: num(flags['max-warmup'], env.BENCH_MAX_WARMUP, quick ? 3 : 12),
  connections: num(flags.connections, env.BENCH_CONNECTIONS, 32),
  backends: (flags.backends ?? env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',') as BenchBackend[],
  scenarios: (flags.scenarios ?? env.BENCH_SCENARIOS ?? SCENARIOS.join(',')).split(',') as ScenarioName[],
  analyticsEvents: num(flags['analytics-events'], env.BENCH_ANALYTICS_EVENTS, quick ? 10_000 : 1_000_000),
  customers: num(flags.customers, env.BENCH_CUSTOMERS, quick ? 1_000 : 10_000),
  /**
   * With --compare-customers N: the repeated scenarios also run on a dataset of N customers,
   * its service processes alternating with the main dataset's, so the scale comparison
   * (the scale target: the GET page ratio at 1M customers within 10% of small data) is measured in
   * one run, between the same ceilings.
   */
  compareCustomers: num(flags['compare-customers'], env.BENCH_COMPARE_CUSTOMERS, 0),
  webhookEvents: num(flags['webhook-events'], env.BENCH_WEBHOOK_EVENTS, quick ? 500 : 2_000),
  pgUrl: flags['pg-url'] ?? env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  dataDir: resolve(flags['data-dir'] ?? env.BENCH_DATA_DIR ?? join(serverDir, 'bench/data')),
  out: resolve(repoRoot, flags.out ?? 'bench/results/latest.json'),
  cpuProfDir: flags['cpu-prof'] ? resolve(flags['cpu-prof']) : undefined,
  /** Items of the CSV-export memory check (bench/csv-export.ts, SQLite); 0 skips it. */
  csvItems: num(flags['csv-items'], env.BENCH_CSV_ITEMS, quick ? 100_000 : 1_000_000),
  /** Service processes that run the scenarios of the ratio targets (REPEATED); the median is reported. */
  processes: num(flags.processes, env.BENCH_PROCESSES, quick ? 1 : 3),
}
for (const s of opts.scenarios) if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`unknown scenario ${s}`)

const log = (line: string) => process.stderr.write(`${line}\n`)
const hasTaskset = spawnSync('taskset', ['-p', String(process.pid)]).status === 0
const pinned = hasTaskset && cpus().length >= 2
// The client side (this process and autocannon) on CPU 1; servers are started on CPU 0.
if (pinned) spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)])

function nodeCommand(script: string, nodeArgs: string[] = [], pin = pinned): [string, string[]] {
  // TypeScript through tsx; the service itself (.mjs) runs compiled, on bare node.
  const args = [...nodeArgs, ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), join(serverDir, script)]
  return pin ? ['taskset', ['-c', '0', process.execPath, ...args]] : [process.execPath, args]
}

interface Child {
  url: string
  /** The URL of each variant a floor server holds (`--floor-concerns`). */
  variants?: Record<string, string>
  proc: ChildProcess
  stop(): Promise<void>
}

/** Starts a server script; resolves with the URL it reports over IPC once it listens. */
async function startChild(
  script: string,
  childEnv: Record<string, string>,
  nodeArgs: string[] = [],
  wrapper: string[] = [],
): Promise<Child> {
  // A wrapper (valgrind) runs node on any CPU (this process's pinning to CPU 1 is inherited
  // otherwise): what it measures does not depend on where it runs, and it must not starve the client.
  const anyCpu = hasTaskset ? ['taskset', '-c', `0-${cpus().length - 1}`] : []
  const [cmd, ...args] = (
    wrapper.length === 0
      ? nodeCommand(script, nodeArgs).flat()
      : [...anyCpu, ...wrapper, process.execPath, ...nodeCommand(script, nodeArgs, false)[1]]
  ) as [string, ...string[]]
  // The service's logs go to /dev/null: still serialized and written (that cost is
  // measured) but never read on the client's CPU.
  const devNull = openSync('/dev/null', 'w')
  const proc = spawn(cmd, args, { cwd: serverDir, env: { ...env, ...childEnv }, stdio: ['ignore', devNull, 'inherit', 'ipc'] })
  const { listening: url, variants } = await new Promise<{ listening: string; variants?: Record<string, string> }>((resolveUrl, reject) => {
    proc.once('message', resolveUrl)
    proc.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)))
  })
  return {
    url,
    ...(variants ? { variants } : {}),
    proc,
    stop: () =>
      new Promise<void>((done) => {
        if (proc.exitCode !== null) return done()
        proc.once('exit', () => done())
        proc.kill('SIGTERM')
      }),
  }
}

async function fetchJson(url: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, init)
  const text = await res.text()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

async function mintToken(base: string, keyId: string, secret: string, customerId?: string): Promise<string> {
  const body = await fetchJson(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: keyId, api_secret: secret, ...(customerId ? { customer_id: customerId } : {}) }),
  })
  return (body.data as { token: string }).token
}

type Spec = Omit<LoadSpec, 'connections'> & { connections?: number }

const measure = async (spec: Spec): Promise<LoadFigures & { warmup_s: number }> => {
  const figures = await warmThenLoad({ ...spec, connections: spec.connections ?? opts.connections }, opts.warmupSec, opts.maxWarmupSec)
  if (figures.non2xx > 0 || figures.errors > 0) {
    // Counted, reported and excluded from req/s and latencies; the run goes on.
    const note = `${spec.method ?? 'GET'} ${spec.url}: ${figures.non2xx} non-2xx answers ${JSON.stringify(figures.statuses)} and ${figures.errors} socket errors beside ${figures.requests} 2xx`
    notes.push(note)
    log(`  WARNING ${note}`)
  }
  return figures
}

/** Builds the autocannon spec of one scenario against a running service. */
async function scenarioSpec(name: Exclude<ScenarioName, 'webhook-delivery'>, base: string, info: DatasetInfo): Promise<Spec> {
  const json = { 'content-type': 'application/json' }
  switch (name) {
    case 'get-page': {
      const token = await mintToken(base, info.keyId, info.secret, info.customerId)
      return { url: `${base}/v1/wishlists/me?limit=50`, durationSec: opts.durationSec, headers: { authorization: `Bearer ${token}` } }
    }
    case 'guest-get':
      return {
        url: `${base}/v1/wishlists/me?limit=50`,
        durationSec: opts.durationSec,
        headers: { 'x-storefront-key': info.storefrontKey, 'x-guest-id': info.guestId },
      }
    case 'shared-read':
      return { url: `${base}/v1/wishlists/shared/${info.shareToken}`, durationSec: opts.durationSec }
    case 'token':
      return {
        url: `${base}/v1/auth/token`,
        durationSec: opts.durationSec,
        method: 'POST',
        headers: json,
        body: JSON.stringify({ api_key: info.keyId, api_secret: info.secret, customer_id: info.customerId }),
      }
    case 'reviews-list':
      return {
        url: `${base}/api/v1/products/${info.reviewProductId}/reviews?per_page=20`,
        durationSec: opts.durationSec,
        headers: { 'x-storefront-key': info.storefrontKey },
      }
    case 'analytics-overview': {
      const token = await mintToken(base, info.analyticsKeyId, info.analyticsSecret)
      return {
        url: `${base}/v1/analytics/overview?period=30d`,
        durationSec: opts.durationSec,
        headers: { authorization: `Bearer ${token}` },
      }
    }
    case 'analytics-conversions': {
      // The same shop as analytics-overview: its facts and the orders seeded with them (events ÷ 10).
      const token = await mintToken(base, info.analyticsKeyId, info.analyticsSecret)
      return {
        url: `${base}/v1/admin/analytics/conversions?period=30d`,
        durationSec: opts.durationSec,
        headers: { authorization: `Bearer ${token}` },
      }
    }
    case 'add-remove': {
      // 64 customers (bench/http/add-remove.ts).
      const tokens: string[] = []
      for (let i = 0; i < 64; i++) tokens.push(`Bearer ${await mintToken(base, info.keyId, info.secret, String(3_000_001 + i))}`)
      const requests = addRemoveRequests(tokens)
      return { url: base, durationSec: opts.durationSec, requests }
    }
    case 'import-500': {
      // 500 new items per request: 50 customers never seen before × 10 products.
      const token = `Bearer ${await mintToken(base, info.keyId, info.secret)}`
      let batch = 0
      const requests: RequestSpec[] = [
        {
          method: 'POST',
          path: '/v1/wishlists/import',
          setupRequest: (req) => {
            const first = 80_000_000 + 50 * batch++
            const items = []
            for (let c = 0; c < 50; c++)
              for (let p = 0; p < 10; p++)
                items.push({ customer_id: String(first + c), product_id: String(900 + p), handle: `imported-${p}` })
            return { ...req, headers: { ...json, authorization: token }, body: JSON.stringify({ items }) }
          },
        },
      ]
      return { url: base, durationSec: opts.durationSec, connections: Math.min(opts.connections, 8), requests }
    }
  }
}

async function ceiling(bodyFile: string): Promise<LoadFigures> {
  const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(opts.cpuProfDir, 'ceiling')}`] : []
  const child = await startChild('bench/http/ceiling-server.ts', { BENCH_BODY_FILE: bodyFile }, nodeArgs)
  try {
    return await measure({ url: `${child.url}/v1/wishlists/me?limit=50`, durationSec: opts.durationSec, serverPid: child.proc.pid })
  } finally {
    await child.stop()
  }
}

interface BackendResult {
  backend: BenchBackend
  figures: Map<ScenarioName, LoadFigures>
  /** The floors' median runs, by the scenario they ran (PostgreSQL: the write floor). */
  floors: Map<ScenarioName, LoadFigures>
}

/** One measured run's line on stderr. */
const logRun = (backend: string, name: string, f: LoadFigures & { warmup_s: number }) =>
  log(
    `  ${backend.padEnd(8)} ${name.padEnd(19)} ${Math.round(f.rps).toString().padStart(6)} req/s  p50 ${f.p50_ms.toFixed(2)} ms  p99 ${f.p99_ms.toFixed(2)} ms  server CPU ${Math.round(f.cpu_us)} µs/request (${Math.round(f.deferred_cpu_us)} after the answers)${f.side_cores === undefined ? '' : `  PostgreSQL ${f.side_cores.toFixed(2)} cores`}  (warm-up ${f.warmup_s} s)`,
  )

/**
 * One floor process on a fresh copy of the dataset, running the floored scenarios: on SQLite
 * bench/http/floor-server.ts, on PostgreSQL the write floor of bench/http/pg-floor-server.ts.
 */
async function floorRun(
  backend: BenchBackend,
  run: RunDatabase,
  info: DatasetInfo,
  scenarios: (keyof typeof FLOORS)[],
): Promise<Map<ScenarioName, LoadFigures>> {
  const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(opts.cpuProfDir, `floor-${backend}`)}`] : []
  const script = backend === 'sqlite' ? 'bench/http/floor-server.ts' : 'bench/http/pg-floor-server.ts'
  // PostgreSQL's write floor runs the service's statements (the target compares against that).
  const extras = process.env.BENCH_FLOOR_EXTRAS ?? (backend === 'postgres' ? 'statements' : '')
  const child = await startChild(script, { DATABASE_URL: run.url, JWT_SECRET: BENCH_JWT_SECRET, BENCH_FLOOR_EXTRAS: extras }, nodeArgs)
  const figures = new Map<ScenarioName, LoadFigures>()
  try {
    for (const name of scenarios) {
      const f = await measure({ ...(await scenarioSpec(name, child.url, info)), serverPid: child.proc.pid })
      figures.set(name, f)
      logRun(backend, FLOORS[name], f)
    }
    return figures
  } finally {
    await child.stop()
  }
}

/**
 * The scenarios behind the ratio targets, measured in `opts.processes` service processes
 * (each on a fresh copy of the dataset) and reported at their median req/s: on this kind
 * of machine one process of the same code runs up to 20% faster or slower than the next
 * for its whole life (JIT and memory layout; alternating slices of two identical
 * processes showed it), which a single run cannot tell from a change in the code.
 */
const REPEATED: ScenarioName[] = ['get-page', 'add-remove', 'guest-get']

/** One service process on `run`'s database: the given scenarios, its peak RSS. */
async function runService(
  backend: BenchBackend,
  run: RunDatabase,
  info: DatasetInfo,
  scenarios: ScenarioName[],
  writeBody?: string,
): Promise<{ figures: Map<ScenarioName, LoadFigures>; rssPeakMb: number }> {
  const figures = new Map<ScenarioName, LoadFigures>()
  // The service runs with the bin's V8 flags (src/cli/node-flags.ts).
  const nodeArgs = [...SERVICE_NODE_FLAGS, ...(opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(opts.cpuProfDir, backend)}`] : [])]
  const service = await startChild(
    'bench/http/service-server.mjs',
    {
      DATABASE_URL: run.url,
      JWT_SECRET: BENCH_JWT_SECRET,
      ...BENCH_RATE_LIMITS,
      NODE_ENV: 'production',
      WEBHOOK_WORKER: 'on',
    },
    nodeArgs,
  )
  let rssPeakMb = 0
  const rssTimer = setInterval(() => {
    const r = spawnSync('ps', ['-o', 'rss=', '-p', String(service.proc.pid)])
    const kb = Number(r.stdout.toString().trim())
    if (kb > 0) rssPeakMb = Math.max(rssPeakMb, kb / 1024)
  }, 1000)
  try {
    if (writeBody !== undefined) {
      const token = await mintToken(service.url, info.keyId, info.secret, info.customerId)
      const res = await fetch(`${service.url}/v1/wishlists/me?limit=50`, { headers: { authorization: `Bearer ${token}` } })
      writeFileSync(writeBody, await res.text())
    }
    for (const name of scenarios) {
      if (name === 'webhook-delivery') continue
      // On PostgreSQL, how busy the database's own processes were meanwhile (the cached GETs send it nothing).
      const f = await measure({
        ...(await scenarioSpec(name, service.url, info)),
        serverPid: service.proc.pid,
        ...(backend === 'postgres' ? { sideCpuUs: postgresCpuUs } : {}),
      })
      figures.set(name, f)
      logRun(backend, name, f)
    }
  } finally {
    clearInterval(rssTimer)
    await service.stop()
  }
  log(`  ${backend}: service peak RSS ${rssPeakMb.toFixed(0)} MB`)
  return { figures, rssPeakMb }
}

/** The run with the median req/s, whole (its latencies and CPU with it). */
const medianRun = (all: LoadFigures[]) => [...all].sort((a, b) => a.rps - b.rps)[Math.floor((all.length - 1) / 2)] as LoadFigures

/** Templates rebuilt in this run (`--reseed`): once each, not before every service process. */
const reseeded = new Set<string>()

async function runBackend(backend: BenchBackend, bodyFile: string, needBody: boolean): Promise<BackendResult> {
  const prepareWith = (customers: number) => () => {
    const template = `${backend}/${customers}`
    const reseed = flags.reseed === true && !reseeded.has(template)
    reseeded.add(template)
    return prepareRunDatabase(
      backend,
      { analyticsEvents: opts.analyticsEvents, customers },
      { dataDir: opts.dataDir, pgUrl: opts.pgUrl, reseed, log },
    )
  }
  const prepare = prepareWith(opts.customers)
  const { run, info, seeded } = await prepare()
  if (seeded) log(`${backend}: seed times ${JSON.stringify(info.seedMs)}`)
  const runs = new Map<ScenarioName, LoadFigures[]>()
  const keep = (figures: Map<ScenarioName, LoadFigures>, into = runs) => {
    for (const [name, f] of figures) into.set(name, [...(into.get(name) ?? []), f])
  }
  let rssPeakMb = 0
  try {
    const first = await runService(backend, run, info, opts.scenarios, needBody ? bodyFile : undefined)
    keep(first.figures)
    rssPeakMb = first.rssPeakMb
    if (opts.scenarios.includes('webhook-delivery')) {
      const [cmd, args] = nodeCommand('bench/webhook-delivery.ts')
      const r = spawnSync(cmd, [...args, '--json'], {
        cwd: serverDir,
        env: { ...env, BENCH_DATABASE_URL: run.url, BENCH_WEBHOOK_EVENTS: String(opts.webhookEvents) },
        encoding: 'utf8',
      })
      if (r.status !== 0) throw new Error(`webhook bench failed: ${r.stderr}`)
      const w = JSON.parse(r.stdout.trim().split('\n').pop() as string) as { deliveriesPerSec: number }
      keep(
        new Map([
          [
            'webhook-delivery',
            {
              rps: w.deliveriesPerSec,
              p50_ms: Number.NaN,
              p99_ms: Number.NaN,
              requests: opts.webhookEvents,
              non2xx: 0,
              errors: 0,
              statuses: {},
              cpu_us: Number.NaN,
              deferred_cpu_us: Number.NaN,
            },
          ],
        ]),
      )
      log(`  ${backend.padEnd(8)} webhook-delivery    ${Math.round(w.deliveriesPerSec).toString().padStart(6)} deliveries/s`)
    }
  } finally {
    await run.drop()
  }
  const repeated = opts.scenarios.filter((s) => REPEATED.includes(s))
  /** One more service process on a fresh copy of a dataset, running the repeated scenarios. */
  const again = async (prepareCopy: typeof prepare, label: string, into: typeof runs) => {
    const copy = await prepareCopy()
    try {
      log(`  ${backend}: service process, ${label}`)
      const more = await runService(backend, copy.run, copy.info, repeated)
      keep(more.figures, into)
      rssPeakMb = Math.max(rssPeakMb, more.rssPeakMb)
    } finally {
      await copy.run.drop()
    }
  }
  // The comparison dataset's processes alternate with the main one's: main, compare, main, compare...
  const compared = new Map<ScenarioName, LoadFigures[]>()
  for (let p = 0; p < opts.processes && repeated.length > 0; p++) {
    if (p > 0) await again(prepare, `${p + 1} of ${opts.processes}`, runs)
    if (opts.compareCustomers > 0)
      await again(
        prepareWith(opts.compareCustomers),
        `${opts.compareCustomers.toLocaleString('en')} customers, ${p + 1} of ${opts.processes}`,
        compared,
      )
  }
  rssByBackend[backend] = Math.round(rssPeakMb)
  // The floors, as many processes as the service's, each on a fresh copy of the dataset.
  const floorRuns = new Map<ScenarioName, LoadFigures[]>()
  // PostgreSQL has the write floor only.
  const floored = FLOORED.filter((name) => opts.scenarios.includes(name) && (backend === 'sqlite' || name === 'add-remove'))
  for (let p = 0; floored.length > 0 && p < opts.processes; p++) {
    const copy = await prepare()
    try {
      keep(await floorRun(backend, copy.run, copy.info, floored), floorRuns)
    } finally {
      await copy.run.drop()
    }
  }
  const floors = new Map<ScenarioName, LoadFigures>()
  for (const [name, all] of floorRuns) {
    floors.set(name, medianRun(all))
    if (all.length > 1) runsRps[`${backend}/${FLOORS[name as keyof typeof FLOORS]}`] = all.map((f) => round(f.rps))
  }
  const figures = new Map<ScenarioName, LoadFigures>()
  for (const [name, all] of runs) {
    figures.set(name, medianRun(all))
    if (all.length > 1) runsRps[`${backend}/${name}`] = all.map((f) => round(f.rps))
    if (all.some((f) => f.side_cores !== undefined))
      runsPostgresCores[`${backend}/${name}`] = all.map((f) => Math.round((f.side_cores ?? Number.NaN) * 100) / 100)
  }
  for (const [name, all] of compared) {
    const main = figures.get(name)
    if (main === undefined) continue
    const small = medianRun(all)
    scale[`${backend}/${name}`] = {
      [`rps_${opts.compareCustomers}`]: round(small.rps),
      [`rps_${opts.customers}`]: round(main.rps),
      // Both against the same ceilings, so the ratios' change is the req/s change.
      change: Math.round((main.rps / small.rps - 1) * 1000) / 1000,
      [`cpu_us_${opts.compareCustomers}`]: round(small.cpu_us),
      [`cpu_us_${opts.customers}`]: round(main.cpu_us),
      [`runs_rps_${opts.compareCustomers}`]: all.map((f) => round(f.rps)),
    }
  }
  return { backend, figures, floors }
}
const scale: Record<string, Record<string, number | number[]>> = {}
const runsRps: Record<string, number[]> = {}
/** PostgreSQL's own CPU, in cores, over each process's run of a scenario on PostgreSQL. */
const runsPostgresCores: Record<string, number[]> = {}
const logCeiling = (c: LoadFigures) =>
  log(
    `  ceiling  ${Math.round(c.rps)} req/s  p50 ${c.p50_ms.toFixed(2)} ms  p99 ${c.p99_ms.toFixed(2)} ms  server CPU ${Math.round(c.cpu_us)} µs/request`,
  )
const rssByBackend: Partial<Record<BenchBackend, number>> = {}
const notes: string[] = []

/** A results file (`--out`) as JSON; empty when there is none yet. */
function readResults(file: string): Record<string, unknown> & { floor_concerns?: Record<string, unknown> } {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  } catch {
    return {}
  }
}

/** The variants `--floor-concerns` compares, per load; the first is the reference of the quotients. */
const FLOOR_VARIANTS = {
  'get-page': ['ceiling', 'bare', 'log', 'rate-limit', 'metrics', 'log+rate-limit+metrics', 'service'],
  'add-remove': ['bare', 'statements', 'log+rate-limit+metrics', 'statements+log+rate-limit+metrics', 'service'],
}

/**
 * `--floor-concerns ROUNDS`: every variant in one process, the load (the GET page, or
 * add-remove with `--scenarios add-remove`) on each in turn.
 */
async function floorConcerns(rounds: number): Promise<void> {
  const scenario = opts.scenarios.length === 1 && opts.scenarios[0] === 'add-remove' ? 'add-remove' : 'get-page'
  const variants = FLOOR_VARIANTS[scenario]
  const { run, info } = await prepareRunDatabase(
    'sqlite',
    { analyticsEvents: opts.analyticsEvents, customers: opts.customers },
    { dataDir: opts.dataDir, pgUrl: opts.pgUrl, reseed: false, log },
  )
  const child = await startChild(
    'bench/http/floor-server.ts',
    {
      DATABASE_URL: run.url,
      JWT_SECRET: BENCH_JWT_SECRET,
      ...BENCH_RATE_LIMITS,
      NODE_ENV: 'production',
      BENCH_FLOOR_VARIANTS: variants.join(','),
    },
    [...SERVICE_NODE_FLAGS],
  )
  const cpu = new Map<string, number[]>(variants.map((v) => [v, []]))
  const deferred = new Map<string, number[]>(variants.map((v) => [v, []]))
  try {
    const urls = child.variants ?? {}
    // Tokens minted by the service; the floors verify them with the same secret.
    const base = await scenarioSpec(scenario, urls.service as string, info)
    const spec = (variant: string, durationSec: number) => ({
      ...base,
      url: base.url.replace(urls.service as string, urls[variant] as string),
      connections: opts.connections,
      durationSec,
      serverPid: child.proc.pid,
    })
    for (const variant of variants) await load(spec(variant, 3))
    for (let round = 0; round < rounds; round++) {
      // A different order each round, so no variant always follows the same one.
      const order = variants.map((_, i) => variants[(i + round) % variants.length] as string)
      for (const variant of order) {
        const f = await load(spec(variant, 2))
        if (f.non2xx > 0 || f.errors > 0) throw new Error(`${variant}: ${f.non2xx} non-2xx answers, ${f.errors} errors`)
        cpu.get(variant)?.push(f.cpu_us)
        deferred.get(variant)?.push(f.deferred_cpu_us)
      }
      log(`  round ${round + 1}: ${variants.map((v) => `${v} ${Math.round(cpu.get(v)?.at(-1) ?? 0)}`).join(', ')} µs/request`)
    }
  } finally {
    await child.stop()
    await run.drop()
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number
  const [reference] = variants as [string]
  const referenceUs = cpu.get(reference) ?? []
  const bareUs = cpu.get('bare') ?? []
  // Each round's variants ran within seconds of each other: their quotients are taken per round.
  const lines = [
    `| variant | CPU µs/request (median) | of which after the answers | range | minus the bare floor (median of rounds) | ${reference} ÷ variant (median of rounds) |`,
    '|---|---:|---:|---:|---:|---:|',
  ]
  for (const [variant, xs] of cpu) {
    const perRound = (other: number[], f: (x: number, o: number) => number) => median(xs.map((x, i) => f(x, other[i] as number)))
    const minusBare = variant === 'ceiling' ? '–' : String(Math.round(perRound(bareUs, (x, b) => x - b)))
    lines.push(
      `| ${variant} | ${Math.round(median(xs))} | ${Math.round(median(deferred.get(variant) ?? [0]))} | ${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))} | ${minusBare} | ${perRound(referenceUs, (x, c) => c / x).toFixed(2)} |`,
    )
  }
  process.stdout.write(
    `\n${scenario}:\n${lines.join('\n')}\n\n(${rounds} rounds of 2 s each, ${opts.connections} connections, Node ${process.version})\n`,
  )
  // Into the results file (latest.json unless --out), beside the scenarios of the last full
  // run: `floor_concerns.get_page` / `.add_remove`, one row per variant, so a script can check
  // the targets on the concerns.
  const results = readResults(opts.out)
  const key = scenario === 'add-remove' ? 'add_remove' : 'get_page'
  const variantRows = [...cpu].map(([variant, xs]) => ({
    variant,
    cpu_us_per_request: Math.round(median(xs) * 10) / 10,
    // Of which spent after the answers, until the process was idle again (deferred work).
    deferred_cpu_us: Math.round(median(deferred.get(variant) ?? [0]) * 10) / 10,
    ...(variant === 'ceiling' ? {} : { minus_bare_us: Math.round(median(xs.map((x, i) => x - (bareUs[i] as number))) * 10) / 10 }),
  }))
  const floorConcernsRows = {
    ...results.floor_concerns,
    [key]: variantRows,
    [`${key}_measured`]: { date: new Date().toISOString(), rounds, connections: opts.connections, node: process.version },
  }
  mkdirSync(dirname(opts.out), { recursive: true })
  writeFileSync(opts.out, `${JSON.stringify({ ...results, floor_concerns: floorConcernsRows }, null, 2)}\n`)
  log(`written to ${opts.out} (floor_concerns.${key})`)
}

/**
 * Requests before the counters are zeroed, and counted. V8 tiers a function up by how often it
 * runs, not by time, and keeps compiling for tens of thousands of requests: after 4,000 its
 * compiler threads still did a third of the bare floor's count (51,707 of 149,327
 * instructions per request), after 20,000 a tenth, after 50,000 a few per cent, and the main
 * thread's count had settled within 2%.
 */
const INSTRUCTION_WARMUP = 50_000
const INSTRUCTION_REQUESTS = 3_000
/**
 * Functions whose inclusive count is V8's concurrent compilation (TurboFan, Maglev, the
 * baseline compiler's batch jobs) on its worker threads: tier-up work that the warm-up has
 * not quite finished, which lands in one variant's window and not another's (bare floor
 * after 50,000 requests: 7,868 and 3,622 per request in two runs). Left out of the count;
 * garbage collection on the same threads stays in.
 */
const CONCURRENT_COMPILATION = [
  'v8::internal::OptimizingCompileTaskExecutor::CompileTask::Run(',
  'v8::internal::maglev::MaglevConcurrentDispatcher::JobTask::Run(',
  'v8::internal::baseline::ConcurrentBaselineCompiler::JobDispatcher::Run(',
]

/** A variant's user-space instructions per request, concurrent compilation left out, and that compilation. */
interface InstructionCount {
  instructions: number
  compilation: number
}

/** A callgrind dump's instructions: its total, and how many of them were concurrent compilation. */
function countDump(file: string): { total: number; compilation: number } {
  const out = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  })
  if (out.status !== 0) throw new Error(`callgrind_annotate failed: ${out.stderr}`)
  let total: number | undefined
  let compilation = 0
  for (const line of out.stdout.split('\n')) {
    const m = /^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(.*)$/.exec(line)
    if (!m) continue
    const n = Number((m[1] as string).replace(/,/g, ''))
    if ((m[2] as string).startsWith('PROGRAM TOTALS')) total = n
    else if (CONCURRENT_COMPILATION.some((f) => (m[2] as string).includes(`:${f}`))) compilation += n
  }
  if (total === undefined) throw new Error(`no total in ${file}`)
  return { total, compilation }
}

/**
 * `--floor-concerns N --instructions`: the same variants, each in a process of its own run
 * under callgrind (valgrind), with their user-space instructions per request counted instead
 * of timed: `INSTRUCTION_WARMUP` requests first, the counters zeroed (`callgrind_control -z`),
 * then `INSTRUCTION_REQUESTS` counted (`-d`), V8's concurrent compilation left out. A floor's
 * count hardly depends on what else the machine runs (the same floor counted in two runs
 * agrees within 1–5%, where its CPU time varies by 20–40% from one round to the next on a
 * shared machine). The service's does not (157,888 and 190,072 in two runs); unlike the
 * floors it runs work on timers (the webhook worker's poll, the analytics facts applier),
 * which fire by the clock, so valgrind's slowdown, which the machine's load moves, sets how
 * many requests each firing is shared over: the likely cause, not shown. What a count
 * leaves out: the kernel's share (system calls, the socket),
 * and the cost of an instruction (cache misses): time stays the figure of the targets, this
 * is the one that locates them. Two variants run at a time (the client must never starve:
 * the counts depend on how many requests each event-loop turn finds).
 */
async function floorInstructions(): Promise<void> {
  // Not add-remove: the service applies its analytics facts in batches on a timer, whose
  // size follows the request rate, and under valgrind (about 50 times slower) each batch
  // holds a fiftieth of the facts, so the count charges the service a batch's fixed work
  // many times over (counted: 1,018,265 per request against 502,023 for the floor with the
  // same statements and concerns, where time says 1.2 times).
  if (opts.scenarios.length === 1 && opts.scenarios[0] === 'add-remove')
    throw new Error('--instructions counts the GET page only: the service batches its writes by time, which valgrind distorts')
  const scenario = 'get-page'
  const variants = FLOOR_VARIANTS[scenario]
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('--instructions needs valgrind (Debian: apt-get install valgrind)')
  const counted = async (variant: string): Promise<InstructionCount> => {
    const { run, info } = await prepareRunDatabase(
      'sqlite',
      { analyticsEvents: opts.analyticsEvents, customers: opts.customers },
      { dataDir: opts.dataDir, pgUrl: opts.pgUrl, reseed: false, log },
    )
    const outFile = join(opts.dataDir, `callgrind-${variant}-${process.pid}.out`)
    // The ceiling answers every path with the page: its tokens come from the bare floor beside it.
    const held = variant === 'ceiling' ? 'ceiling,bare' : variant
    const child = await startChild(
      'bench/http/floor-server.ts',
      { DATABASE_URL: run.url, JWT_SECRET: BENCH_JWT_SECRET, ...BENCH_RATE_LIMITS, NODE_ENV: 'production', BENCH_FLOOR_VARIANTS: held },
      [...SERVICE_NODE_FLAGS],
      ['valgrind', '-q', '--tool=callgrind', `--callgrind-out-file=${outFile}`],
    )
    const control = (flag: string) => {
      if (spawnSync('callgrind_control', [flag, String(child.proc.pid)], { stdio: 'ignore' }).status !== 0)
        throw new Error(`callgrind_control ${flag} failed`)
    }
    try {
      const urls = child.variants ?? {}
      const base = await scenarioSpec(scenario, (variant === 'ceiling' ? urls.bare : urls[variant]) as string, info)
      const spec = (amount: number) => ({
        ...base,
        url: variant === 'ceiling' ? base.url.replace(urls.bare as string, urls.ceiling as string) : base.url,
        connections: 8,
        durationSec: 0,
        amount,
      })
      await load(spec(INSTRUCTION_WARMUP))
      control('-z')
      const f = await load(spec(INSTRUCTION_REQUESTS))
      if (f.non2xx > 0 || f.errors > 0) throw new Error(`${variant}: ${f.non2xx} non-2xx answers, ${f.errors} errors`)
      control('-d')
    } finally {
      await child.stop()
      await run.drop()
    }
    // The dump after the counted load is the first numbered one; the file at exit holds the shutdown.
    const { total, compilation } = countDump(`${outFile}.1`)
    for (const file of [outFile, `${outFile}.1`]) rmSync(file, { force: true })
    return { instructions: (total - compilation) / INSTRUCTION_REQUESTS, compilation: compilation / INSTRUCTION_REQUESTS }
  }
  const counts = new Map<string, InstructionCount>()
  for (let i = 0; i < variants.length; i += 2) {
    const pair = variants.slice(i, i + 2)
    const figures = await Promise.all(pair.map(counted))
    pair.forEach((variant, j) => counts.set(variant, figures[j] as InstructionCount))
    log(`  ${pair.map((v) => `${v} ${Math.round(counts.get(v)?.instructions ?? 0)}`).join(', ')} instructions/request`)
  }
  const bare = (counts.get('bare') as InstructionCount).instructions
  const lines = [
    '| variant | instructions/request | minus the bare floor | ÷ the bare floor | concurrent compilation left out |',
    '|---|---:|---:|---:|---:|',
  ]
  for (const [variant, { instructions: n, compilation }] of counts)
    lines.push(
      `| ${variant} | ${Math.round(n)} | ${variant === 'ceiling' ? '–' : Math.round(n - bare)} | ${(n / bare).toFixed(3)} | ${Math.round(compilation)} |`,
    )
  process.stdout.write(
    `\n${scenario} (user-space instructions, callgrind):\n${lines.join('\n')}\n\n(${INSTRUCTION_WARMUP} requests' warm-up, ${INSTRUCTION_REQUESTS} counted, 8 connections, Node ${process.version})\n`,
  )
  const results = readResults(opts.out)
  const key = 'get_page_instructions'
  const rows = [...counts].map(([variant, { instructions: n, compilation }]) => ({
    variant,
    instructions_per_request: Math.round(n),
    ...(variant === 'ceiling' ? {} : { minus_bare: Math.round(n - bare) }),
    compilation_left_out: Math.round(compilation),
  }))
  const measured = {
    date: new Date().toISOString(),
    warmup_requests: INSTRUCTION_WARMUP,
    counted_requests: INSTRUCTION_REQUESTS,
    connections: 8,
    node: process.version,
  }
  mkdirSync(dirname(opts.out), { recursive: true })
  writeFileSync(
    opts.out,
    `${JSON.stringify({ ...results, floor_concerns: { ...results.floor_concerns, [key]: rows, [`${key}_measured`]: measured } }, null, 2)}\n`,
  )
  log(`written to ${opts.out} (floor_concerns.${key})`)
}

async function main(): Promise<void> {
  if (flags.notifications) {
    // In this process, from the sources: no build needed.
    await runNotificationsBench({
      holders: Number(flags.holders ?? 10_000),
      backends: opts.backends,
      pgUrl: opts.pgUrl,
      out: resolve(repoRoot, flags.out ?? 'bench/results/notifications.json'),
      log,
    })
    return
  }
  buildServer()
  if (flags['floor-concerns'] !== undefined)
    return flags.instructions ? floorInstructions() : floorConcerns(Number(flags['floor-concerns']))
  if (flags.move) {
    await runMoveBench({
      analyticsEvents: opts.analyticsEvents,
      customers: opts.customers,
      pgUrl: opts.pgUrl,
      dataDir: opts.dataDir,
      out: resolve(repoRoot, flags.out ?? 'bench/results/move.json'),
      log,
    })
    return
  }
  if (flags['round-trips']) {
    await runRoundTripsBench({
      requests: Number(flags.requests ?? 300),
      latencyRequests: Number(flags['latency-requests'] ?? 1500),
      processes: Number(flags.processes ?? 2),
      pgUrl: opts.pgUrl,
      dataDir: opts.dataDir,
      out: resolve(repoRoot, flags.out ?? 'bench/results/round-trips.json'),
      log,
    })
    return
  }
  const started = Date.now()
  mkdirSync(opts.dataDir, { recursive: true })
  if (opts.cpuProfDir) mkdirSync(opts.cpuProfDir, { recursive: true })
  const bodyFile = join(opts.dataDir, `ceiling-body-${process.pid}.json`)
  log(
    `bench: ${opts.backends.join('+')}, ${opts.durationSec} s per scenario after ${opts.warmupSec} s warm-up, ${opts.connections} connections, ${pinned ? 'servers on CPU 0, client on CPU 1' : 'not pinned (no taskset or one CPU)'}`,
  )

  const results: BackendResult[] = []
  const ceilings: LoadFigures[] = []
  // Ceiling, backend, ceiling, backend, ceiling: the first backend also writes the body.
  for (const [i, backend] of opts.backends.entries()) {
    const result = await runBackend(backend, bodyFile, i === 0)
    if (i === 0) {
      ceilings.push(await ceiling(bodyFile))
      logCeiling(ceilings[0]!)
    }
    results.push(result)
    const c = await ceiling(bodyFile)
    ceilings.push(c)
    logCeiling(c)
  }

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const rows: ScenarioRow[] = []
  const ceilingRps = mean(ceilings.map((c) => c.rps))
  rows.push({
    name: 'ceiling',
    backend: 'none',
    rps: round(ceilingRps),
    p50_ms: round2(mean(ceilings.map((c) => c.p50_ms))),
    p99_ms: round2(mean(ceilings.map((c) => c.p99_ms))),
    ratio: 1,
  })
  for (const [i, r] of results.entries()) {
    // The ceiling runs bracketing this backend (i and i+1).
    const local = mean([ceilings[i]!.rps, ceilings[i + 1]!.rps])
    const ratio = (rps: number, to: number) => Math.round((rps / to) * 1000) / 1000
    for (const name of opts.scenarios) {
      const f = r.figures.get(name)
      if (!f) continue
      rows.push({
        name,
        backend: r.backend,
        rps: round(f.rps),
        p50_ms: Number.isNaN(f.p50_ms) ? null : round2(f.p50_ms),
        p99_ms: Number.isNaN(f.p99_ms) ? null : round2(f.p99_ms),
        ratio: ratio(f.rps, local),
        ...(r.floors.has(name) ? { floor_ratio: ratio(f.rps, r.floors.get(name)!.rps) } : {}),
      })
    }
    for (const [name, f] of r.floors) {
      const floor = FLOORS[name as keyof typeof FLOORS]
      rows.push({
        name: floor,
        backend: r.backend,
        rps: round(f.rps),
        p50_ms: round2(f.p50_ms),
        p99_ms: round2(f.p99_ms),
        ratio: ratio(f.rps, local),
        floor_ratio: 1,
      })
    }
  }

  const machine = {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    pinned,
    connections: opts.connections,
    duration_s: opts.durationSec,
    warmup_s: opts.warmupSec,
    // Beyond warmup_s: 1 s slices until the server's CPU per answer is steady (bench/http/load.ts).
    max_warmup_s: opts.maxWarmupSec,
    analytics_events: opts.analyticsEvents,
    customers: opts.customers,
    webhook_events: opts.webhookEvents,
    service_peak_rss_mb: rssByBackend,
    ceiling_runs_rps: ceilings.map((c) => round(c.rps)),
    // Server CPU time per answer (µs), the cost behind each ratio that the client's and the
    // machine's limits do not blur.
    ceiling_runs_cpu_us: ceilings.map((c) => round(c.cpu_us)),
    service_processes: opts.processes,
    // Every process's req/s of the repeated scenarios; the table shows the median run.
    runs_rps: runsRps,
    // How busy PostgreSQL's processes were while each of those runs was measured, in cores.
    runs_postgres_cores: runsPostgresCores,
    // With --compare-customers: the repeated scenarios on the comparison dataset, and the change.
    ...(opts.compareCustomers > 0 ? { scale: { compare_customers: opts.compareCustomers, ...scale } } : {}),
    server_cpu_us_per_request: Object.fromEntries(
      results.flatMap((r) => [
        ...[...r.figures].filter(([, f]) => Number.isFinite(f.cpu_us)).map(([name, f]) => [`${r.backend}/${name}`, round(f.cpu_us)]),
        ...[...r.floors].map(([name, f]) => [`${r.backend}/${FLOORS[name as keyof typeof FLOORS]}`, round(f.cpu_us)]),
      ]),
    ),
    ceiling_body_bytes: Buffer.byteLength(readBody(bodyFile)),
    date: new Date().toISOString(),
    wall_s: Math.round((Date.now() - started) / 1000),
    notes,
  }
  mkdirSync(dirname(opts.out), { recursive: true })
  // The floor-concerns rows (`--floor-concerns`, a run of their own) stay beside the scenarios.
  const floorConcernsRows = readResults(opts.out).floor_concerns
  writeFileSync(
    opts.out,
    `${JSON.stringify({ machine, scenarios: rows, ...(floorConcernsRows === undefined ? {} : { floor_concerns: floorConcernsRows }) }, null, 2)}\n`,
  )

  const lines = ['| scenario | backend | req/s | p50 ms | p99 ms | ratio | vs floor |', '|---|---|---:|---:|---:|---:|---:|']
  for (const r of rows)
    lines.push(
      `| ${r.name} | ${r.backend} | ${r.rps.toLocaleString('en')} | ${r.p50_ms ?? '–'} | ${r.p99_ms ?? '–'} | ${r.ratio.toFixed(3)} | ${r.floor_ratio?.toFixed(3) ?? '–'} |`,
    )
  for (const [key, c] of Object.entries(scale)) {
    lines.push(
      `scale ${key}: ${opts.compareCustomers.toLocaleString('en')} customers ${String(c[`rps_${opts.compareCustomers}`])} req/s, ${opts.customers.toLocaleString('en')} customers ${String(c[`rps_${opts.customers}`])} req/s, change ${((c.change as number) * 100).toFixed(1)}%`,
    )
  }
  process.stdout.write(`\n${lines.join('\n')}\n\nwritten to ${opts.out} (${machine.wall_s} s)\n`)

  if (opts.csvItems > 0) {
    // Constant memory of the streamed shop export (docs/operations.md, "The shop's CSV export"): peak server RSS at 10 thousand
    // and at csvItems items, in one run.
    log(`csv export: ${opts.csvItems.toLocaleString('en')} items, server peak RSS`)
    const [cmd, args] = nodeCommand('bench/csv-export.ts')
    const res = spawnSync(cmd, [...args, 'sqlite', String(opts.csvItems)], { stdio: 'inherit', cwd: serverDir })
    if (res.status !== 0) throw new Error(`bench/csv-export.ts exited with ${String(res.status)}`)
  }
}

const readBody = (file: string) => readFileSync(file)
const round = (n: number) => Math.round(n)
const round2 = (n: number) => Math.round(n * 100) / 100

main()
  .catch((err: unknown) => {
    log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
    process.exitCode = 1
  })
  .finally(() => rmSync(join(opts.dataDir, `ceiling-body-${process.pid}.json`), { force: true }))
