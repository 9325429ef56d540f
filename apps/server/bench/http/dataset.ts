/**
 * The benchmark dataset, built once per parameter set as a template and copied for every
 * run (SQLite: a file copy; PostgreSQL: CREATE DATABASE … TEMPLATE), so a run always starts
 * from the same data and the expensive parts (1M analytics events, 1M customers × 10
 * items) are seeded once.
 *
 * Contents: shop "bench" (plan scale, reviews auto-approved) with customer 1000001 holding
 * 50 items (the GET page), a guest holding 50 items, a share link to the customer's list,
 * product 777 with 50 approved reviews, `customers` background customers × 10 items
 * (owner ids 5000001…); shop "analytics" (plan growth) with `analyticsEvents` facts from
 * the analytics seed, and its orders (events ÷ 10, for analytics-conversions). The credentials
 * live in the table `bench_dataset`.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { seedAnalytics } from '../../src/cli/analytics-seed.js'

export type BenchBackend = 'sqlite' | 'postgres'

export interface DatasetSpec {
  analyticsEvents: number
  customers: number
}

export interface DatasetInfo {
  shopId: string
  keyId: string
  secret: string
  storefrontKey: string
  customerId: string
  guestId: string
  shareToken: string
  reviewProductId: string
  analyticsKeyId: string
  analyticsSecret: string
  seedMs: { total: number; analytics: number; customers: number }
}

export interface RunDatabase {
  url: string
  drop(): Promise<void>
}

const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123'
/**
 * The service's rate limits in every bench: as high as the configuration allows, so the
 * limiter runs on every request and never answers 429 (a bench drives it from one address),
 * and the connections of that one address as many as `--connections` asks for.
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_ADMIN_PER_MIN: '1000000000',
  RATE_LIMIT_STOREFRONT_PER_MIN: '1000000000',
  MAX_CONNECTIONS_PER_CLIENT: '1000000',
}
export const PAGE_ITEMS = 50
const POPULATION_BASE = 5_000_000

// v5: the analytics shop has orders too (events ÷ 10), for analytics-conversions.
// v6: the days-to-purchase histograms are packed into the daily rows (migration 0020).
const templateName = (spec: DatasetSpec) => `bench_tpl_v6_a${spec.analyticsEvents}_c${spec.customers}`

export async function pgAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await fn(c)
  } finally {
    await c.end()
  }
}

export const dbUrl = (adminUrl: string, name: string) => {
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return u.toString()
}

async function call(
  app: Awaited<ReturnType<typeof buildApp>>,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) })
  if (res.statusCode >= 300) throw new Error(`seed ${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json() as { data?: Record<string, unknown> } & Record<string, unknown>
}

/** N customers × 10 items in one statement per 100k customers, generated inside the database. */
async function seedPopulation(storage: Storage, shopId: string, customers: number, at: number, log: (s: string) => void): Promise<void> {
  const chunk = 100_000
  for (let from = 1; from <= customers; from += chunk) {
    const to = Math.min(customers, from + chunk - 1)
    const lo = POPULATION_BASE + from
    const hi = POPULATION_BASE + to
    await storage.db.transaction().execute(async (trx) => {
      if (storage.backend === 'postgres') {
        // A million rows per statement, with the owner-version triggers: longer than the
        // service's statement timeout (db/connect.ts), which is for requests.
        await sql`set local statement_timeout = 0`.execute(trx)
        await sql`insert into wishlist_owners (shop_id, owner_type, owner_id, item_count, created_at, updated_at)
          select ${shopId}, 'customer', c::text, 10, ${at}::bigint, ${at}::bigint from generate_series(${lo}::int, ${hi}::int) c`.execute(
          trx,
        )
        await sql`insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
          select ${shopId}, 'customer', c::text, 'default', (100 + (c * 7 + p) % 5000)::text, null, null, null, ${at}::bigint - p * 60000
          from generate_series(${lo}::int, ${hi}::int) c, generate_series(1, 10) p`.execute(trx)
      } else {
        await sql`with recursive c(n) as (select ${lo} union all select n + 1 from c where n < ${hi})
          insert into wishlist_owners (shop_id, owner_type, owner_id, item_count, created_at, updated_at)
          select ${shopId}, 'customer', cast(n as text), 10, ${at}, ${at} from c`.execute(trx)
        await sql`with recursive c(n) as (select ${lo} union all select n + 1 from c where n < ${hi}),
          p(k) as (select 1 union all select k + 1 from p where k < 10)
          insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
          select ${shopId}, 'customer', cast(n as text), 'default', cast(100 + (n * 7 + k) % 5000 as text), null, null, null, ${at} - k * 60000
          from c, p`.execute(trx)
      }
    })
    if (to % 500_000 === 0 || to === customers) log(`  population: ${to.toLocaleString('en')} customers`)
  }
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

async function seedTemplate(storage: Storage, spec: DatasetSpec, log: (s: string) => void): Promise<void> {
  const started = Date.now()
  await migrateToLatest(storage)
  const config = loadConfig({ JWT_SECRET, DATABASE_URL: 'sqlite::memory:', ...BENCH_RATE_LIMITS })
  const app = await buildApp({ config, storage, logger: false, demoPages: false })
  await app.ready()
  try {
    const created = await app.services.shops.create({ domain: 'bench.example.com', plan: 'scale' })
    const { shop, apiKey } = created
    const token = async (customerId?: string) => {
      const r = await call(
        app,
        'POST',
        '/v1/auth/token',
        {},
        { api_key: apiKey.keyId, api_secret: apiKey.secret, ...(customerId ? { customer_id: customerId } : {}) },
      )
      return `Bearer ${(r.data as { token: string }).token}`
    }
    const admin = { authorization: await token() }
    await call(app, 'PATCH', '/v1/admin/settings', admin, { reviews_auto_approve: true })

    const customerId = '1000001'
    const customer = { authorization: await token(customerId) }
    const guestId = 'bench-guest-0001'
    const guest = { 'x-storefront-key': shop.storefrontKey, 'x-guest-id': guestId }
    for (let i = 1; i <= PAGE_ITEMS; i++) {
      const item = {
        product_id: String(10_000 + i),
        variant_id: String(20_000 + i),
        handle: `bench-product-${i}`,
        metadata: { source: 'bench', position: i },
      }
      await call(app, 'POST', '/v1/wishlists/me/items', customer, item)
      await call(app, 'POST', '/v1/wishlists/me/items', guest, item)
    }
    const share = await call(app, 'GET', '/v1/wishlists/me/share', customer)
    const shareToken = String((share.data as { share_url: string }).share_url)
      .split('/')
      .pop() as string

    const reviewProductId = '777'
    for (let i = 1; i <= PAGE_ITEMS; i++) {
      await call(
        app,
        'POST',
        '/api/v1/reviews',
        { 'x-storefront-key': shop.storefrontKey },
        {
          productId: reviewProductId,
          customerEmail: `reviewer${i}@example.com`,
          customerName: `Reviewer ${i}`,
          rating: 1 + (i % 5),
          title: `Review number ${i}`,
          body: 'A benchmark review of moderate length, roughly the size of a real one. '.repeat(2),
        },
      )
    }

    const t0 = Date.now()
    await seedPopulation(storage, shop.id, spec.customers, Date.now() - 86_400_000, log)
    const customersMs = Date.now() - t0

    const analyticsShop = await app.services.shops.create({ domain: 'analytics.bench.example.com', plan: 'growth' })
    const t1 = Date.now()
    await seedAnalytics(storage.db, analyticsShop.shop.id, { events: spec.analyticsEvents, now: Date.now(), seed: 42 })
    const analyticsMs = Date.now() - t1
    // PostgreSQL gathers statistics itself (autovacuum), so the template has them as a
    // database in service does. The service's SQLite files have none: it never runs ANALYZE
    // (see openSqlite in src/db/connect.ts on what STAT4 statistics cost). VACUUM too, now:
    // otherwise autovacuum visits the freshly inserted tables of the template (gigabytes at
    // 1M customers) while the first scenarios run.
    if (storage.backend === 'postgres') await sql`vacuum analyze`.execute(storage.db)

    const info: DatasetInfo = {
      shopId: shop.id,
      keyId: apiKey.keyId,
      secret: apiKey.secret,
      storefrontKey: shop.storefrontKey,
      customerId,
      guestId,
      shareToken,
      reviewProductId,
      analyticsKeyId: analyticsShop.apiKey.keyId,
      analyticsSecret: analyticsShop.apiKey.secret,
      seedMs: { total: Date.now() - started, analytics: analyticsMs, customers: customersMs },
    }
    await sql`create table bench_dataset (k text primary key, v text not null)`.execute(storage.db)
    await sql`insert into bench_dataset (k, v) values ('info', ${JSON.stringify(info)})`.execute(storage.db)
  } finally {
    await app.close()
  }
}

/**
 * Seeds a template (a SQLite file or a PostgreSQL database) and closes it. It runs in the
 * child process of `seedApart` (bench/http/seed-template.ts).
 */
export async function seedTemplateAt(backend: BenchBackend, target: string, spec: DatasetSpec, log: (s: string) => void): Promise<void> {
  const storage = openStorage(backend === 'sqlite' ? { kind: 'sqlite', file: target } : { kind: 'postgres', url: target })
  try {
    await seedTemplate(storage, spec, log)
    if (backend === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(storage.db)
  } finally {
    await storage.destroy()
  }
}

/**
 * `seedTemplateAt` in a process of its own. Seeding leaves about a gigabyte of garbage on
 * the heap of the process that ran it (the analytics seed), which V8 collects only when it
 * next needs room: in the bench's own process, where autocannon runs, that made the client's
 * collections long during the first scenarios after a seed, and every scenario measured
 * there had a p99 of 7–11 x its p50 (the ceiling's too) against 3–4 x in the later ones.
 */
async function seedApart(backend: BenchBackend, target: string, spec: DatasetSpec): Promise<void> {
  const script = fileURLToPath(new URL('./seed-template.ts', import.meta.url))
  const child = spawn(
    process.execPath,
    [...process.execArgv, script, backend, target, String(spec.analyticsEvents), String(spec.customers)],
    { stdio: 'inherit' },
  )
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null]
  if (code !== 0) throw new Error(`seeding the ${backend} template failed (${signal ?? `exit code ${code}`})`)
}

async function readInfo(storage: Storage): Promise<DatasetInfo> {
  const { rows } = await sql<{ v: string }>`select v from bench_dataset where k = 'info'`.execute(storage.db)
  if (!rows[0]) throw new Error('bench dataset has no info row')
  return JSON.parse(rows[0].v) as DatasetInfo
}

/**
 * A fresh copy of the template for one run (the template is seeded first when missing or
 * when `reseed`). `dataDir` holds SQLite templates and run files; PostgreSQL templates are
 * databases named bench_tpl_v6_a<events>_c<customers> on `pgUrl`'s server.
 */
export async function prepareRunDatabase(
  backend: BenchBackend,
  spec: DatasetSpec,
  opts: { dataDir: string; pgUrl: string; reseed: boolean; log: (s: string) => void },
): Promise<{ run: RunDatabase; info: DatasetInfo; seeded: boolean }> {
  const name = templateName(spec)
  const runName = `bench_run_${process.pid}_${randomBytes(3).toString('hex')}`
  let seeded = false
  if (backend === 'sqlite') {
    mkdirSync(opts.dataDir, { recursive: true })
    const tpl = join(opts.dataDir, `${name}.db`)
    if (opts.reseed) rmSync(tpl, { force: true })
    if (!existsSync(tpl)) {
      const partial = `${tpl}.partial`
      for (const f of [partial, `${partial}-wal`, `${partial}-shm`]) rmSync(f, { force: true })
      opts.log(
        `sqlite: seeding template ${tpl} (${spec.analyticsEvents.toLocaleString('en')} analytics events, ${spec.customers.toLocaleString('en')} customers × 10 items)`,
      )
      await seedApart('sqlite', partial, spec)
      // On disk before any scenario runs, not written back by the kernel during the first
      // ones (at 1M customers, gigabytes).
      syncFile(partial)
      renameSync(partial, tpl)
      seeded = true
    }
    const file = join(opts.dataDir, `${runName}.db`)
    copyFileSync(tpl, file)
    // Written to disk now, not by the kernel's writeback during the first scenarios.
    syncFile(file)
    const storage = openStorage({ kind: 'sqlite', file })
    const info = await readInfo(storage)
    await storage.destroy()
    if (seeded) opts.log(`sqlite: template seeded in ${(info.seedMs.total / 1000).toFixed(1)} s`)
    return {
      run: {
        url: `sqlite:${file}`,
        drop: async () => {
          for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}.lock`]) rmSync(f, { force: true })
        },
      },
      info,
      seeded,
    }
  }
  const exists = async (db: string) =>
    pgAdmin(opts.pgUrl, async (c) => (await c.query('select 1 from pg_database where datname = $1', [db])).rowCount === 1)
  if (opts.reseed) await pgAdmin(opts.pgUrl, (c) => c.query(`drop database if exists ${name}`))
  if (!(await exists(name))) {
    const partial = `${name}_partial`
    await pgAdmin(opts.pgUrl, async (c) => {
      await c.query(`drop database if exists ${partial}`)
      await c.query(`create database ${partial}`)
    })
    opts.log(
      `postgres: seeding template database ${name} (${spec.analyticsEvents.toLocaleString('en')} analytics events, ${spec.customers.toLocaleString('en')} customers × 10 items)`,
    )
    await seedApart('postgres', dbUrl(opts.pgUrl, partial), spec)
    await pgAdmin(opts.pgUrl, (c) => c.query(`alter database ${partial} rename to ${name}`))
    seeded = true
  }
  await pgAdmin(opts.pgUrl, (c) => c.query(`create database ${runName} template ${name}`))
  const url = dbUrl(opts.pgUrl, runName)
  // A copied database has no activity statistics, so autovacuum would visit every table
  // during the first scenarios and take CPU from them: settle it now, as a database in
  // service is. The copy went through the WAL (PostgreSQL 15's default strategy) and its
  // pages are dirty in shared buffers: a CHECKPOINT writes them now, not while the first
  // scenario runs (its p99 was 7x its p50, the later runs' 3x).
  await pgAdmin(url, async (c) => {
    await c.query('vacuum analyze')
    await c.query('checkpoint')
  })
  const storage = openStorage({ kind: 'postgres', url })
  const info = await readInfo(storage)
  await storage.destroy()
  if (seeded) opts.log(`postgres: template seeded in ${(info.seedMs.total / 1000).toFixed(1)} s`)
  return {
    run: { url, drop: () => pgAdmin(opts.pgUrl, async (c) => void (await c.query(`drop database if exists ${runName} with (force)`))) },
    info,
    seeded,
  }
}

export { JWT_SECRET as BENCH_JWT_SECRET }
