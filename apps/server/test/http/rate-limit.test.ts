import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'

const env = { RATE_LIMIT_STOREFRONT_PER_MIN: '3', RATE_LIMIT_ADMIN_PER_MIN: '5' }

function expectLimitHeaders(headers: Record<string, unknown>, limit: number, remaining: number) {
  expect(headers['x-ratelimit-limit']).toBe(String(limit))
  expect(headers['x-ratelimit-remaining']).toBe(String(remaining))
  expect(Number(headers['x-ratelimit-reset'])).toBeGreaterThan(0)
  expect(Number(headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60)
}

describe('rate limits in process', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ env })
  })
  afterAll(() => t.close())

  it('limits the token endpoint per client IP (storefront bucket) and answers 429 with Retry-After', async () => {
    const ip = '198.51.100.7'
    const body = { api_key: 'ak_x', api_secret: 'sk_y' }
    for (let i = 0; i < 3; i++) {
      const res = await t.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress: ip })
      expect(res.statusCode).toBe(401)
      expectLimitHeaders(res.headers, 3, 2 - i)
    }
    const limited = await t.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress: ip })
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60)
    // Another client is not affected.
    const other = await t.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress: '198.51.100.8' })
    expect(other.statusCode).toBe(401)
  })

  it('limits storefront-key requests per IP', async () => {
    const shop = await t.createShop('starter')
    const ip = '198.51.100.20'
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const res = await t.inject({ method: 'GET', url: '/v1/admin/shop', headers: shop.guest('guest-abcdefgh'), remoteAddress: ip })
      statuses.push(res.statusCode)
    }
    expect(statuses).toEqual([403, 403, 403, 429])
  })

  it('limits bearer requests per API key (admin bucket), not per IP', async () => {
    const shop = await t.createShop('starter')
    const token = await t.call('POST', '/v1/auth/token', { body: { api_key: shop.keyId, api_secret: shop.secret } })
    const admin = token.body.data.token
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      // Different IPs: the budget follows the key.
      const res = await t.inject({
        method: 'GET',
        url: '/v1/admin/shop',
        headers: { authorization: `Bearer ${admin}` },
        remoteAddress: `203.0.113.${i + 1}`,
      })
      statuses.push(res.statusCode)
      if (i === 0) expectLimitHeaders(res.headers, 5, 4)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    // A second key of the same shop has its own budget.
    const created = await t.inject({
      method: 'POST',
      url: '/v1/admin/api-keys',
      headers: { authorization: `Bearer ${admin}` },
      payload: {},
      remoteAddress: '203.0.113.99',
    })
    expect(created.statusCode).toBe(429)
    const other = await t.createShop('starter')
    const otherToken = await other.adminToken()
    const res = await t.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${otherToken}` } })
    expect(res.statusCode).toBe(200)
  })

  it('keys IPv6 clients by their /64 and IPv4-mapped IPv6 as the IPv4 address', async () => {
    const body = { api_key: 'ak_x', api_secret: 'sk_y' }
    const token = (remoteAddress: string) => t.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress })
    // Rotating the interface id within one /64 does not buy a fresh budget …
    const statuses: number[] = []
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:abcd::9'])
      statuses.push((await token(ip)).statusCode)
    expect(statuses).toEqual([401, 401, 401, 429])
    // … another /64 has its own.
    expect((await token('2001:db8:1:3::1')).statusCode).toBe(401)
    // ::ffff:a.b.c.d and a.b.c.d are one client.
    const mapped: number[] = []
    for (const ip of ['192.0.2.160', '::ffff:192.0.2.160', '::ffff:c000:2a0', '192.0.2.160']) mapped.push((await token(ip)).statusCode)
    expect(mapped).toEqual([401, 401, 401, 429])
  })

  it('does not trust X-Forwarded-For without TRUST_PROXY', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const res = await t.inject({
        method: 'POST',
        url: '/v1/auth/token',
        payload: { api_key: 'ak_x', api_secret: 'sk_y' },
        remoteAddress: '192.0.2.50',
        headers: { 'x-forwarded-for': `10.0.0.${i}` },
      })
      statuses.push(res.statusCode)
    }
    expect(statuses).toEqual([401, 401, 401, 429])
  })

  it('does not count unknown URLs', async () => {
    const ip = '192.0.2.88'
    for (let i = 0; i < 5; i++)
      expect((await t.inject({ method: 'GET', url: `/v1/nothing-here/${i}`, remoteAddress: ip })).statusCode).toBe(404)
    const res = await t.inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { api_key: 'ak_x', api_secret: 'sk_y' },
      remoteAddress: ip,
    })
    expect(res.statusCode).toBe(401)
    expectLimitHeaders(res.headers, 3, 2)
  })

  it('does not limit operations endpoints', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.inject({ method: 'GET', url: '/healthz', remoteAddress: '192.0.2.77' })
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-ratelimit-limit']).toBeUndefined()
    }
  })
})

describe('customer tokens at the admin rate', () => {
  it('125 requests with one customer token leave the other customers and the admin token of that key unlimited', async () => {
    // The documented default: 120 a minute per API key.
    const t = await createTestApp({ env: { RATE_LIMIT_ADMIN_PER_MIN: '120' } })
    try {
      const shop = await t.createShop('starter')
      const [hostile, other, admin] = await Promise.all([shop.customerToken('301'), shop.customerToken('302'), shop.adminToken()])
      const get = (token: string, customer: string) =>
        t.inject({ method: 'GET', url: `/v1/wishlists/${customer}`, headers: { authorization: `Bearer ${token}` } })
      const statuses: number[] = []
      for (let i = 0; i < 125; i++) statuses.push((await get(hostile, '301')).statusCode)
      expect(statuses.filter((s) => s === 200)).toHaveLength(120)
      expect(statuses.slice(120)).toEqual([429, 429, 429, 429, 429])
      // The shopper is limited alone: another customer of the key and the merchant's admin token go on.
      const otherCustomer = await get(other, '302')
      expect(otherCustomer.statusCode).toBe(200)
      expect(otherCustomer.headers['x-ratelimit-remaining']).toBe('119')
      const merchant = await get(admin, '301')
      expect(merchant.statusCode).toBe(200)
      expect(merchant.headers['x-ratelimit-remaining']).toBe('119')
      // Admin tokens still share one budget per key: a second admin token of the key counts in it.
      const second = await get(await shop.adminToken(), '302')
      expect(second.headers['x-ratelimit-remaining']).toBe('118')
    } finally {
      await t.close()
    }
  })
})

describe('rate limits with TRUST_PROXY', () => {
  it('keys the storefront bucket by the forwarded client address', async () => {
    const t = await createTestApp({ env: { ...env, TRUST_PROXY: 'true' } })
    try {
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) {
        const res = await t.inject({
          method: 'POST',
          url: '/v1/auth/token',
          payload: { api_key: 'ak_x', api_secret: 'sk_y' },
          remoteAddress: '192.0.2.50',
          headers: { 'x-forwarded-for': `10.0.0.${i}` },
        })
        statuses.push(res.statusCode)
      }
      expect(statuses).toEqual([401, 401, 401, 401])
    } finally {
      await t.close()
    }
  })
})

describe('rate limits shared through Redis', () => {
  let redis: Redis
  let a: TestApp
  let b: TestApp
  let database: TestDatabase
  const dir = mkdtempSync(join(tmpdir(), 'wishlist-rl-'))
  const namespace = `test:rl:${randomBytes(6).toString('hex')}:`

  beforeAll(async () => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 })
    // Two nodes behind a balancer: one database (a file, for SQLite) and one Redis budget.
    database = await freshDatabase({ sqliteFile: join(dir, 'shared.db') })
    a = await createTestApp({ env, redis, rateLimitNamespace: namespace, database })
    b = await createTestApp({ env, redis, rateLimitNamespace: namespace, database })
  })
  afterAll(async () => {
    await b.close()
    await a.close()
    await database.drop()
    rmSync(dir, { recursive: true, force: true })
    const keys = await redis.keys(`${namespace}*`)
    if (keys.length) await redis.del(...keys)
    redis.disconnect()
  })

  it('two app instances share one per-IP budget', async () => {
    const ip = '198.51.100.99'
    const body = { api_key: 'ak_x', api_secret: 'sk_y' }
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const app = i % 2 === 0 ? a : b
      const res = await app.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress: ip })
      statuses.push(res.statusCode)
      if (i < 3) expectLimitHeaders(res.headers, 3, 2 - i)
    }
    expect(statuses).toEqual([401, 401, 401, 429])
    expect(await redis.keys(`${namespace}*`)).not.toHaveLength(0)
  })

  it('counts down the same window in Redis: Reset is what is left of its minute', async () => {
    const ip = '198.51.100.98'
    const body = { api_key: 'ak_x', api_secret: 'sk_y' }
    const first = await a.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress: ip })
    expectLimitHeaders(first.headers, 3, 2)
    expect(first.headers['x-ratelimit-reset']).toBe('60')
    const ttl = await redis.pttl(`${namespace}ip:${ip}`)
    expect(ttl).toBeGreaterThan(55_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
    // A window with its expiry lost (someone ran PERSIST) gets a new one rather than living forever.
    await redis.persist(`${namespace}ip:${ip}`)
    const second = await b.inject({ method: 'POST', url: '/v1/auth/token', payload: body, remoteAddress: ip })
    expectLimitHeaders(second.headers, 3, 1)
    expect(await redis.pttl(`${namespace}ip:${ip}`)).toBeGreaterThan(55_000)
  })

  it('two app instances share one budget per (key, customer), apart from the admin token of the key', async () => {
    const shop = await a.createShop('starter')
    // Minted without the token endpoint, whose per-IP budget (3) the other tests here spend.
    const mint = async (customer_id?: string) =>
      (await a.app.services.auth.exchange({ api_key: shop.keyId, api_secret: shop.secret, customer_id })).token
    const [hostile, other, admin] = await Promise.all([mint('301'), mint('302'), mint()])
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) {
      const app = i % 2 === 0 ? a : b
      statuses.push(
        (await app.inject({ method: 'GET', url: '/v1/wishlists/301', headers: { authorization: `Bearer ${hostile}` } })).statusCode,
      )
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429])
    expect((await b.inject({ method: 'GET', url: '/v1/wishlists/302', headers: { authorization: `Bearer ${other}` } })).statusCode).toBe(
      200,
    )
    expect((await a.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${admin}` } })).statusCode).toBe(200)
  })

  it('two app instances share one per-key budget', async () => {
    const shop = await a.createShop('starter')
    const token = await shop.adminToken()
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? a : b
      statuses.push((await app.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${token}` } })).statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  })
})

describe('rate limits while Redis is unreachable', () => {
  it('let requests through, with the full budget in the headers', async () => {
    // Nothing listens on port 1: every command fails at once instead of waiting in a queue.
    const redis = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
      retryStrategy: () => null,
    })
    redis.on('error', () => {})
    const t = await createTestApp({ env, redis })
    try {
      for (let i = 0; i < 5; i++) {
        const res = await t.inject({
          method: 'POST',
          url: '/v1/auth/token',
          payload: { api_key: 'ak_x', api_secret: 'sk_y' },
          remoteAddress: '192.0.2.99',
        })
        expect(res.statusCode).toBe(401)
        expect(res.headers['x-ratelimit-limit']).toBe('3')
        expect(res.headers['x-ratelimit-remaining']).toBe('3')
      }
    } finally {
      await t.close()
      redis.disconnect()
    }
  })
})

describe('a ceiling per shop over all its bearer-token requests, shared through Redis', () => {
  it('counts every API key and every customer of the shop together; other shops are not affected', async () => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 })
    const namespace = `test:rl-shop:${randomBytes(6).toString('hex')}:`
    const dir = mkdtempSync(join(tmpdir(), 'wishlist-rl-shop-'))
    const database = await freshDatabase({ sqliteFile: join(dir, 'shared.db') })
    const shopEnv = { RATE_LIMIT_ADMIN_PER_MIN: '5', RATE_LIMIT_SHOP_PER_MIN: '12' }
    const a = await createTestApp({ env: shopEnv, redis, rateLimitNamespace: namespace, database })
    const b = await createTestApp({ env: shopEnv, redis, rateLimitNamespace: namespace, database })
    try {
      const shop = await a.createShop('starter')
      // Minted without the token endpoint (whose per-address budget is not the point here).
      const keys = await Promise.all([0, 1, 2].map(() => a.app.services.shops.createApiKey(shop.id, { scope: 'admin' })))
      const mint = async (k: { keyId: string; secret: string }, customer_id?: string) =>
        (await a.app.services.auth.exchange({ api_key: k.keyId, api_secret: k.secret, customer_id })).token
      // Six callers of one shop, each well inside its own budget of 5: 3 keys, 3 customers.
      const tokens = [
        ...(await Promise.all(keys.map((k) => mint(k)))),
        ...(await Promise.all(['901', '902', '903'].map((c) => mint(keys[0]!, c)))),
      ]
      const statuses: number[] = []
      for (let round = 0; round < 2; round++) {
        for (const [i, token] of tokens.entries()) {
          const app = i % 2 === 0 ? a : b
          const url = i < 3 ? '/v1/admin/shop' : '/v1/wishlists/me'
          statuses.push((await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode)
        }
      }
      expect(statuses).toEqual(Array(12).fill(200))
      // The 13th request of the shop, from a fresh key: refused, with Retry-After.
      const fresh = await mint(await a.app.services.shops.createApiKey(shop.id, { scope: 'admin' }))
      const refused = await b.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${fresh}` } })
      expect(refused.statusCode).toBe(429)
      expect(refused.json().error.code).toBe('RATE_LIMITED')
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60)
      // Another shop has its own ceiling.
      const other = await a.createShop('starter')
      const otherToken = (await a.app.services.auth.exchange({ api_key: other.keyId, api_secret: other.secret })).token
      expect(
        (await a.inject({ method: 'GET', url: '/v1/admin/shop', headers: { authorization: `Bearer ${otherToken}` } })).statusCode,
      ).toBe(200)
      // Storefront-key requests of the shop are the storefront bucket's, not the shop ceiling's.
      expect(
        (await a.inject({ method: 'GET', url: '/api/v1/products/1/reviews', headers: { 'x-storefront-key': shop.storefrontKey } }))
          .statusCode,
      ).toBe(200)
    } finally {
      await b.close()
      await a.close()
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
      const left = await redis.keys(`${namespace}*`)
      if (left.length) await redis.del(...left)
      redis.disconnect()
    }
  })
})
