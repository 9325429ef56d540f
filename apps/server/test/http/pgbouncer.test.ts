/**
 * The service through a real PgBouncer (Debian's 1.18) in transaction mode with PgBouncer's
 * default settings (PG_POOL_MODE=transaction): no named prepared statements, no startup
 * parameters PgBouncer refuses, no session state over DATABASE_URL; the change feed (LISTEN)
 * and migrations over DATABASE_DIRECT_URL. PostgreSQL only.
 *
 * A schema per test file (test/helpers/db.ts) is pinned by a startup parameter (search_path)
 * that PgBouncer refuses, so this file makes databases of its own instead, reached through
 * PgBouncer's `*` entry under their own names.
 */
import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config.js'
import { openStorage } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createTestApp, type TestApp, type TestShop, testConfig } from '../helpers/app.js'
import { BACKEND, PG_URL, type TestDatabase } from '../helpers/db.js'
import { type PgBouncer, startPgBouncer } from '../helpers/pgbouncer.js'
import { type ServerProcess, startServerProcess } from '../helpers/server-process.js'

/** A URL of the test server with another database name. */
const directUrl = (database: string) => {
  const url = new URL(PG_URL)
  url.pathname = `/${database}`
  return url.toString()
}

async function onServer(statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL })
  await c.connect()
  try {
    await c.query(statement)
  } finally {
    await c.end()
  }
}

async function rowsOn<R extends pg.QueryResultRow>(url: string, statement: string, values: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query<R>(statement, values)).rows
  } finally {
    await c.end()
  }
}

const made: string[] = []
async function newDatabase(): Promise<string> {
  const name = `wl_pgb_${randomBytes(6).toString('hex')}`
  await onServer(`create database ${name}`)
  made.push(name)
  return name
}

describe.skipIf(BACKEND !== 'postgres')('through PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer
  let name: string
  let database: TestDatabase
  let t: TestApp
  let shop: TestShop
  let admin: string
  const servers: ServerProcess[] = []

  /** PgBouncer's answer to `env` (PG_POOL_MODE=transaction over it, the direct URL unless overridden). */
  const serviceEnv = (env: Record<string, string> = {}) => ({
    DATABASE_URL: bouncer.url(name),
    PG_POOL_MODE: 'transaction',
    DATABASE_DIRECT_URL: directUrl(name),
    REDIS_URL: '',
    ...env,
  })

  beforeAll(async () => {
    bouncer = await startPgBouncer()
    name = await newDatabase()
    database = {
      target: { kind: 'postgres', url: bouncer.url(name), poolMode: 'transaction', directUrl: directUrl(name) },
      url: bouncer.url(name),
      drop: async () => {},
    }
    t = await createTestApp({ database })
    shop = await t.createShop('scale', { multi_wishlist_enabled: true })
    admin = await shop.adminToken()
  })

  afterAll(async () => {
    for (const s of servers) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM')
        await s.exited
      }
    }
    await t?.close()
    await bouncer?.stop()
    for (const db of made) await onServer(`drop database if exists ${db} with (force)`)
  })

  it('answers a mixed workload of concurrent adds, removes, pages, lists, shares and merges without a 500', async () => {
    const customers = Array.from({ length: 8 }, (_, i) => String(880_001 + i))
    const statuses = new Map<number, number>()
    const failures: string[] = []
    const record = (what: string, res: { status: number; body: unknown }) => {
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (res.status >= 500) failures.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`)
    }
    const one = async (c: string, i: number) => {
      const product = String(100 + (i % 12))
      const ops: [string, () => ReturnType<TestApp['call']>][] = [
        ['add', () => t.call('POST', `/v1/wishlists/${c}/items`, { token: admin, body: { product_id: product } })],
        ['remove', () => t.call('DELETE', `/v1/wishlists/${c}/items/${String(100 + ((i + 5) % 12))}`, { token: admin })],
        ['page', () => t.call('GET', `/v1/wishlists/${c}`, { token: admin })],
        ['lists', () => t.call('GET', `/v1/wishlists/${c}/lists`, { token: admin })],
        ['share', () => t.call('GET', `/v1/wishlists/${c}/share`, { token: admin })],
        [
          'merge',
          () =>
            t.call('POST', `/v1/wishlists/${c}/merge`, {
              token: admin,
              body: { guest_items: [{ product_id: String(200 + (i % 7)) }, { product_id: product }] },
            }),
        ],
        ['add list', () => t.call('POST', `/v1/wishlists/${c}/lists`, { token: admin, body: { name: `List ${i}` } })],
      ]
      const [what, run] = ops[i % ops.length] as (typeof ops)[number]
      record(what, await run())
    }
    // Four waves of 8 customers × 21 requests, all of a wave at once.
    for (let wave = 0; wave < 4; wave++) {
      await Promise.all(customers.flatMap((c) => Array.from({ length: 21 }, (_, i) => one(c, i + wave * 21))))
    }
    expect(failures).toEqual([])
    const total = [...statuses.values()].reduce((a, b) => a + b, 0)
    expect(total).toBe(4 * 8 * 21)
    // Mostly successes (a list name taken twice, a plan limit: 4xx, never 5xx).
    expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(total / 2)
    // Every page still tells the truth: the page's count is its rows.
    for (const c of customers) {
      const page = await t.call('GET', `/v1/wishlists/${c}?limit=100`, { token: admin })
      expect(page.status).toBe(200)
      expect(page.body.data.items.length).toBe(page.body.data.total)
    }
  })

  it('runs each transaction with the statement timeout (SET LOCAL, not a startup parameter)', async () => {
    const shown = await t.storage.db
      .transaction()
      .execute(async (trx) => (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(trx)).rows[0]?.statement_timeout)
    expect(shown).toBe('15s')
  })

  // Two server processes start (each some seconds on a busy machine) before the 20 rounds: more than the default 30 s.
  // Each instance counts the other's change feed (db/connect.ts) and, while there are two,
  // checks the owner's version on every cached read: a write answered by one shows on the
  // other's very next read, whenever that one's listener runs.
  it("two service instances behind the same PgBouncer see each other's writes on the next read", { timeout: 90_000 }, async () => {
    const listeners = async () =>
      (
        await rowsOn<{ n: number }>(
          PG_URL,
          "select count(*)::int as n from pg_stat_activity where application_name = 'wishlist change feed' and datname = $1",
          [name],
        )
      )[0]?.n ?? 0
    const before = await listeners()
    const a = await startServerProcess(serviceEnv())
    servers.push(a)
    const b = await startServerProcess(serviceEnv())
    servers.push(b)
    const instances = [a, b]
    // Each joined before it took requests: both feeds are up once both listen on HTTP.
    expect(await listeners()).toBe(before + 2)
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    const pageOf = async (s: ServerProcess, c: string) => {
      const res = await fetch(`${s.url}/v1/wishlists/${c}?limit=100`, { headers })
      expect(res.status).toBe(200)
      return ((await res.json()) as { data: { items: { productId: string }[] } }).data.items.map((i) => i.productId)
    }
    const c = '880100'
    for (let round = 0; round < 20; round++) {
      // Both have the current page cached.
      for (const s of instances) await pageOf(s, c)
      const writer = instances[round % 2] as ServerProcess
      const reader = instances[(round + 1) % 2] as ServerProcess
      const product = String(5000 + round)
      const remove = round >= 2 && round % 3 === 0 ? String(5000 + round - 2) : undefined
      const added = await fetch(`${writer.url}/v1/wishlists/${c}/items`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ product_id: product }),
      })
      expect(added.status).toBe(201)
      if (remove) expect((await fetch(`${writer.url}/v1/wishlists/${c}/items/${remove}`, { method: 'DELETE', headers })).status).toBe(200)
      const page = await pageOf(reader, c)
      expect(page).toContain(product)
      if (remove) expect(page).not.toContain(remove)
    }
  })

  it('refuses to start without DATABASE_DIRECT_URL while the page cache is on, and starts with PAGE_CACHE_MB=0', async () => {
    const pooled = { DATABASE_URL: bouncer.url(name), PG_POOL_MODE: 'transaction' }
    expect(() => testConfig(pooled)).toThrow(ConfigError)
    expect(() => testConfig(pooled)).toThrow(/DATABASE_DIRECT_URL/)
    expect(testConfig({ ...pooled, PAGE_CACHE_MB: '0' }).database).toMatchObject({ poolMode: 'transaction' })

    await expect(startServerProcess(serviceEnv({ DATABASE_DIRECT_URL: '' }))).rejects.toThrow(/DATABASE_DIRECT_URL/)
    const s = await startServerProcess(serviceEnv({ DATABASE_DIRECT_URL: '', PAGE_CACHE_MB: '0' }))
    servers.push(s)
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200)
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    const added = await fetch(`${s.url}/v1/wishlists/880200/items`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ product_id: '7' }),
    })
    expect(added.status).toBe(201)
    const page = await fetch(`${s.url}/v1/wishlists/880200`, { headers })
    expect(((await page.json()) as { data: { total: number } }).data.total).toBe(1)
    s.child.kill('SIGTERM')
    expect(await s.exited).toBe(0)
  })

  it('runs migrations and the change feed over DATABASE_DIRECT_URL', async () => {
    // The pooled URL and the direct URL name different (empty) databases, to see which one each part used.
    const direct = await newDatabase()
    const pooled = await newDatabase()
    const storage = openStorage({ kind: 'postgres', url: bouncer.url(pooled), poolMode: 'transaction', directUrl: directUrl(direct) })
    try {
      expect((await migrateToLatest(storage)).length).toBeGreaterThan(0)
      const tables = (db: string) =>
        rowsOn<{ n: number }>(directUrl(db), "select count(*)::int as n from information_schema.tables where table_schema = 'public'")
      expect((await tables(direct))[0]?.n).toBeGreaterThan(0)
      expect((await tables(pooled))[0]?.n).toBe(0)
      // The feed starts on the first stamp; wait (one event-loop turn at a time) for its LISTEN.
      for (let i = 0; storage.changeStamp?.() === undefined; i++) {
        if (i > 1_000_000) throw new Error('the change feed never connected')
        await new Promise((r) => setImmediate(r))
      }
      const listening = await rowsOn<{ datname: string }>(
        PG_URL,
        "select datname from pg_stat_activity where application_name = 'wishlist change feed' and datname = any($1)",
        [[direct, pooled]],
      )
      expect(listening.map((r) => r.datname)).toEqual([direct])
    } finally {
      await storage.destroy()
    }
  })
})
