/**
 * Exports against a real listening server, with readers that stop reading (raw sockets):
 * an export holds no database connection while its reader is slow (keyset pages of short
 * queries), a shop runs at most two at once (429 RATE_LIMITED with Retry-After), and the
 * other shops go on being served. PostgreSQL runs with a pool of 2 connections here, so an
 * export holding one would take half of it, two the whole of it.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'
import { portOf, type RawExchange, rawRequest, requestHead } from '../helpers/raw-http.js'

let t: TestApp
let database: TestDatabase
let port: number
let merchant: TestShop
let admin: string

/** Enough rows that the CSV (about 2.5 MB) cannot fit in the socket buffers of a reader that stopped. */
const ITEMS = 48_000

beforeAll(async () => {
  const fresh = await freshDatabase()
  database = fresh.target.kind === 'postgres' ? { ...fresh, target: { ...fresh.target, poolMax: 2 } } : fresh
  t = await createTestApp({ database })
  port = portOf(await t.app.listen({ port: 0, host: '127.0.0.1' }))
  merchant = await t.createShop('starter')
  admin = await merchant.adminToken()
  await seedItems(t, merchant)
}, 120_000)

async function seedItems(app: TestApp, shop: TestShop) {
  const at = Date.now()
  const rows = []
  for (let c = 0; c < ITEMS / 400; c++)
    for (let p = 0; p < 400; p++)
      rows.push({
        shop_id: shop.id,
        owner_type: 'customer' as const,
        owner_id: String(100_000 + c),
        list_id: 'default',
        product_id: String(500_000 + p),
        variant_id: null,
        handle: `handle-${p}`,
        metadata: null,
        added_at: at,
      })
  for (let i = 0; i < rows.length; i += 500)
    await app.storage.db
      .insertInto('wishlist_items')
      .values(rows.slice(i, i + 500))
      .execute()
}
afterAll(async () => {
  await t.close()
  await database.drop()
})

const exportHead = (token: string, path = '/v1/admin/export/wishlists.csv') =>
  requestHead('GET', path, { authorization: `Bearer ${token}` })

async function stalledExport(token: string, at = port): Promise<RawExchange> {
  const ex = await rawRequest(at, exportHead(token), '', { stallAfterFirstChunk: true })
  expect(await ex.started).toMatch(/^HTTP\/1\.1 200 /)
  return ex
}

describe('exports whose readers stop reading', () => {
  it(
    'hold no connection: a third export of the shop is 429 with Retry-After, and every other shop is served meanwhile',
    { timeout: 60_000 },
    async () => {
      const first = await stalledExport(admin)
      const second = await stalledExport(admin)

      const third = await rawRequest(port, exportHead(admin))
      const refused = await third.response
      expect(refused.status).toBe(429)
      expect(JSON.parse(refused.body)).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } })
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      third.socket.destroy()
      // The customer export counts among the shop's exports too.
      const customer = await rawRequest(port, exportHead(admin, '/v1/admin/customers/100000/export'))
      expect((await customer.response).status).toBe(429)
      customer.socket.destroy()

      // Other shops (and the merchant's own API) read and write while both exports stall.
      const other = await t.createShop('starter')
      const otherToken = await other.adminToken()
      for (let i = 0; i < 5; i++) {
        const started = Date.now()
        const add = await rawRequest(
          port,
          `${requestHead('POST', `/v1/wishlists/${200 + i}/items`, { authorization: `Bearer ${otherToken}`, 'content-type': 'application/json', 'content-length': 18 })}`,
          '{"product_id":"1"}',
        )
        expect((await add.response).status).toBe(201)
        expect(Date.now() - started).toBeLessThan(5_000)
        add.socket.destroy()
      }
      const own = await rawRequest(port, requestHead('GET', '/v1/admin/shop', { authorization: `Bearer ${admin}` }))
      expect((await own.response).status).toBe(200)
      own.socket.destroy()
      // Neither export got to its end: their readers really stopped.
      expect(first.received() + second.received()).toBeLessThan(2 * 2_000_000)

      // A reader that goes away gives its place back.
      first.socket.destroy()
      await first.closed
      let status = 429
      for (let attempt = 0; attempt < 50 && status === 429; attempt++) {
        const retry = await rawRequest(port, exportHead(admin), '', { stallAfterFirstChunk: true })
        const headLine = await retry.started
        status = Number(headLine.split(' ')[1])
        retry.socket.destroy()
        await retry.closed
      }
      expect(status).toBe(200)
      second.socket.destroy()
      await second.closed
    },
  )

  it('an export read to its end has every row', { timeout: 60_000 }, async () => {
    // The places of the readers that went away come back as the server sees their connections close.
    let res = await t.inject({ method: 'GET', url: '/v1/admin/export/wishlists.csv', headers: { authorization: `Bearer ${admin}` } })
    for (let attempt = 0; attempt < 50 && res.statusCode === 429; attempt++) {
      res = await t.inject({ method: 'GET', url: '/v1/admin/export/wishlists.csv', headers: { authorization: `Bearer ${admin}` } })
    }
    expect(res.statusCode).toBe(200)
    expect(res.body.trimEnd().split('\r\n')).toHaveLength(ITEMS + 1)
  })
})

describe('export places shared through Redis', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wishlist-export-'))
  const namespace = `test:export:${randomBytes(6).toString('hex')}:`
  let redis: Redis
  let shared: TestDatabase
  let a: TestApp
  let b: TestApp
  let aPort: number
  let shop: TestShop
  let token: string

  beforeAll(async () => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 })
    // Two instances behind a balancer: one database (a file, for SQLite) and one Redis.
    shared = await freshDatabase({ sqliteFile: join(dir, 'shared.db') })
    a = await createTestApp({ database: shared, redis, rateLimitNamespace: namespace })
    b = await createTestApp({ database: shared, redis, rateLimitNamespace: namespace })
    aPort = portOf(await a.app.listen({ port: 0, host: '127.0.0.1' }))
    shop = await a.createShop('starter')
    token = await shop.adminToken()
    await seedItems(a, shop)
  }, 120_000)
  afterAll(async () => {
    await b.close()
    await a.close()
    await shared.drop()
    rmSync(dir, { recursive: true, force: true })
    const keys = await redis.keys(`${namespace}*`)
    if (keys.length) await redis.del(...keys)
    redis.disconnect()
  })

  it(
    "one instance's two running exports take the shop's places on every instance; a finished one frees its place everywhere",
    { timeout: 60_000 },
    async () => {
      const first = await stalledExport(token, aPort)
      const second = await stalledExport(token, aPort)
      expect(await redis.zcard(`${namespace}export:${shop.id}`)).toBe(2)

      // The other instance runs none of them, and still refuses a third.
      const refused = await b.inject({
        method: 'GET',
        url: '/v1/admin/customers/100000/export',
        headers: { authorization: `Bearer ${token}` },
      })
      expect(refused.statusCode).toBe(429)
      expect(refused.json()).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } })
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      // Another shop's exports are not counted with them.
      const other = await b.createShop('starter')
      expect(
        (
          await b.inject({
            method: 'GET',
            url: '/v1/admin/customers/1/export',
            headers: { authorization: `Bearer ${await other.adminToken()}` },
          })
        ).statusCode,
      ).toBe(200)

      first.socket.destroy()
      await first.closed
      let answer = refused
      for (let attempt = 0; attempt < 50 && answer.statusCode === 429; attempt++) {
        answer = await b.inject({ method: 'GET', url: '/v1/admin/customers/100000/export', headers: { authorization: `Bearer ${token}` } })
      }
      expect(answer.statusCode).toBe(200)
      expect(answer.json().data.customerId).toBe('100000')
      second.socket.destroy()
      await second.closed
      for (let attempt = 0; attempt < 50 && (await redis.zcard(`${namespace}export:${shop.id}`)) > 0; attempt++)
        await new Promise<void>((r) => setImmediate(r))
      expect(await redis.zcard(`${namespace}export:${shop.id}`)).toBe(0)
    },
  )
})
