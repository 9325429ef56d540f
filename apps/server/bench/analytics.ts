/**
 * Analytics benchmark: each endpoint at 10 thousand and at 1 million events, on SQLite and
 * PostgreSQL, in one run; prints median latencies and the ratio 1M ÷ 10k (target ≤ 2). Both
 * shops are seeded first, then each endpoint is timed on them in alternating slices of 20
 * requests (200 per shop after a slice each of warm-up), so a passing load on the machine
 * weighs on both sizes alike.
 *
 *   npm run bench:analytics -w apps/server            # both backends, 10k and 1M
 *   BENCH_BACKENDS=sqlite BENCH_SIZES=10000,100000 npm run bench:analytics -w apps/server
 *   BENCH_ENDPOINTS='conversions?period=all' npm run bench:analytics -w apps/server -- --out bench/results/x.json
 *
 * BENCH_ENDPOINTS keeps the endpoints whose path contains one of its comma-separated parts;
 * `--out` writes the figures as JSON (a file of its own: it replaces what the file held).
 *
 * `runAnalyticsBench()` is exported for the `npm run bench` harness. PostgreSQL: a scratch
 * schema in BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped
 * afterwards; SQLite: a scratch file in the temp folder. Requests go through `app.inject`
 * (no sockets), so the figures are the handler and database cost plus Fastify's own.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { type DatabaseTarget, loadConfig } from '../src/config.js'
import type { Backend } from '../src/db/types.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { seedAnalytics } from '../src/cli/analytics-seed.js'
import { BENCH_RATE_LIMITS } from './http/dataset.js'

export interface BenchOptions {
  backends?: Backend[]
  sizes?: [number, number]
  iterations?: number
  /** Only the endpoints whose path contains one of these (all by default). */
  endpoints?: string[]
  pgUrl?: string
  log?: (line: string) => void
}

export interface EndpointFigure {
  backend: Backend
  endpoint: string
  /** Median milliseconds per request at each size. */
  small: number
  large: number
  ratio: number
}

export interface BenchResult {
  sizes: [number, number]
  seedMs: Record<string, number>
  figures: EndpointFigure[]
}

const ENDPOINTS = [
  '/v1/analytics/overview?period=7d',
  '/v1/analytics/overview?period=30d',
  '/v1/analytics/overview?period=all',
  '/v1/analytics/top-products?limit=10',
  '/v1/analytics/product/{top}',
  '/v1/analytics/daily?period=30d',
  '/v1/analytics/daily?period=all',
  '/v1/admin/analytics/conversions?period=30d',
  '/v1/admin/analytics/conversions?period=all',
]

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

async function scratch(backend: Backend, pgUrl: string): Promise<{ target: DatabaseTarget; url: string; drop(): Promise<void> }> {
  if (backend === 'sqlite') {
    const file = join(tmpdir(), `analytics-bench-${randomBytes(4).toString('hex')}.db`)
    return {
      target: { kind: 'sqlite', file },
      url: `sqlite:${file}`,
      drop: async () => {
        for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true })
      },
    }
  }
  const schema = `bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: pgUrl })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  return {
    target: { kind: 'postgres', url: pgUrl, schema },
    url: pgUrl,
    async drop() {
      const c = new pg.Client({ connectionString: pgUrl })
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
    },
  }
}

export async function runAnalyticsBench(opts: BenchOptions = {}): Promise<BenchResult> {
  const backends = opts.backends ?? ['sqlite', 'postgres']
  const sizes = opts.sizes ?? [10_000, 1_000_000]
  const iterations = opts.iterations ?? 200
  const pgUrl = opts.pgUrl ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const endpoints = ENDPOINTS.filter((e) => opts.endpoints === undefined || opts.endpoints.some((part) => e.includes(part)))
  const figures: EndpointFigure[] = []
  const seedMs: Record<string, number> = {}

  for (const backend of backends) {
    const db = await scratch(backend, pgUrl)
    const config = loadConfig({
      JWT_SECRET: randomBytes(32).toString('hex'),
      DATABASE_URL: db.url,
      ...BENCH_RATE_LIMITS,
    })
    const storage = openStorage(db.target)
    try {
      await migrateToLatest(storage)
      const app = await buildApp({ config: { ...config, database: db.target }, storage, logger: false })
      await app.ready()
      // Both shops first, then each endpoint timed on them in alternating slices: a load
      // that comes and goes on the machine weighs on both sizes alike, not on one of them.
      const shops: { headers: Record<string, string>; topId: string }[] = []
      for (const size of sizes) {
        const created = await app.services.shops.create({ domain: `bench-${size}-${Date.now()}.myshopify.com`, plan: 'growth' })
        const seeded = await seedAnalytics(storage.db, created.shop.id, { events: size, now: Date.now(), seed: 42 })
        seedMs[`${backend} ${size}`] = seeded.ms
        log(
          `${backend}: seeded ${size.toLocaleString('en')} events (${seeded.owners} owners, ${seeded.items} items) in ${(seeded.ms / 1000).toFixed(1)} s`,
        )
        const tokenRes = await app.inject({
          method: 'POST',
          url: '/v1/auth/token',
          payload: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret },
        })
        const headers = { authorization: `Bearer ${tokenRes.json().data.token as string}` }
        const top = await app.inject({ method: 'GET', url: '/v1/analytics/top-products?limit=1', headers })
        shops.push({ headers, topId: (top.json().data.products[0]?.productId as string | undefined) ?? '1' })
      }
      // As in service: PostgreSQL's autovacuum analyzes; SQLite files have no statistics (db/connect.ts).
      if (backend === 'postgres') await sql`analyze`.execute(storage.db)
      const SLICE = 20
      for (const endpoint of endpoints) {
        const samples: number[][] = shops.map(() => [])
        for (let round = 0; round < Math.ceil(iterations / SLICE) + 1; round++) {
          for (const [k, shop] of shops.entries()) {
            const url = endpoint.replace('{top}', shop.topId)
            for (let i = 0; i < SLICE; i++) {
              const t0 = process.hrtime.bigint()
              const res = await app.inject({ method: 'GET', url, headers: shop.headers })
              const dt = Number(process.hrtime.bigint() - t0) / 1e6
              if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
              // The first slice of each shop warms up.
              if (round > 0) samples[k]?.push(dt)
            }
          }
        }
        const [small, large] = samples.map(median) as [number, number]
        figures.push({ backend, endpoint, small, large, ratio: large / small })
      }
      await app.close()
    } finally {
      await storage.destroy()
      await db.drop()
    }
  }

  const [a, b] = sizes.map((n) => n.toLocaleString('en'))
  log('')
  log(`| backend | endpoint | median @ ${a} | median @ ${b} | ratio |`)
  log('|---|---|---|---|---|')
  for (const f of figures)
    log(`| ${f.backend} | ${f.endpoint} | ${f.small.toFixed(2)} ms | ${f.large.toFixed(2)} ms | ${f.ratio.toFixed(2)} |`)
  const worst = Math.max(...figures.map((f) => f.ratio))
  log(`\nworst ratio ${worst.toFixed(2)} (target ≤ 2)`)
  return { sizes, seedMs, figures }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = process.env
  const backends = env.BENCH_BACKENDS ? (env.BENCH_BACKENDS.split(',') as Backend[]) : undefined
  const sizes = env.BENCH_SIZES ? (env.BENCH_SIZES.split(',').map(Number) as [number, number]) : undefined
  const endpoints = env.BENCH_ENDPOINTS ? env.BENCH_ENDPOINTS.split(',') : undefined
  const outAt = process.argv.indexOf('--out')
  // npm runs the script in apps/server; a relative --out is taken from the repository root, as `npm run bench`'s is.
  const out = outAt > 0 && process.argv[outAt + 1] ? resolve(import.meta.dirname, '../../..', process.argv[outAt + 1] as string) : undefined
  runAnalyticsBench({ ...(backends ? { backends } : {}), ...(sizes ? { sizes } : {}), ...(endpoints ? { endpoints } : {}) })
    .then((result) => {
      if (out === undefined) return
      const machine = { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? '', node: process.version, date: new Date().toISOString() }
      mkdirSync(dirname(out), { recursive: true })
      writeFileSync(out, `${JSON.stringify({ machine, ...result }, null, 2)}\n`)
      process.stdout.write(`written to ${out}\n`)
    })
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
      process.exit(1)
    })
}
