import { describe, expect, it, vi } from 'vitest'
import { ConfigError, loadConfig, parseDatabaseUrl } from '../../src/config.js'
import { isGuestId, normalizePlatformId } from '../../src/lib/platform-ids.js'
import { newOrderedId, requestIdGenerator } from '../../src/lib/ids.js'
import { hashSecret, secretMatches } from '../../src/lib/secrets.js'
import { planAtLeast } from '../../src/modules/shops/plans.js'

describe('platform ids', () => {
  it("accepts 1..32 digits and platform GIDs of the field's kind, stored as digits", () => {
    expect(normalizePlatformId('123', 'Product')).toBe('123')
    expect(normalizePlatformId('gid://shopify/Product/123', 'Product')).toBe('123')
    expect(normalizePlatformId('gid://shopify/ProductVariant/9', 'ProductVariant')).toBe('9')
    expect(normalizePlatformId('gid://shopify/Customer/5', 'Customer')).toBe('5')
    expect(normalizePlatformId('1'.repeat(32), 'Customer')).toBe('1'.repeat(32))
    for (const bad of ['', '1'.repeat(33), 'abc', '12a', 'gid://shopify/Product/', 'gid://shopify/Product/x', ' 1', '-1']) {
      expect(normalizePlatformId(bad, 'Product')).toBeNull()
    }
    // A GID of another kind is not an id of this one.
    expect(normalizePlatformId('gid://shopify/Customer/5', 'Product')).toBeNull()
    expect(normalizePlatformId('gid://shopify/ProductVariant/9', 'Product')).toBeNull()
    expect(normalizePlatformId('gid://shopify/Product/123', 'Customer')).toBeNull()
  })

  it('guest ids are 8..64 chars of [A-Za-z0-9_-]', () => {
    expect(isGuestId('g_abcdef')).toBe(true)
    expect(isGuestId('8f14e45f-ceea-467f-a0e6-1b5d7a2c1e39')).toBe(true)
    expect(isGuestId('short')).toBe(false)
    expect(isGuestId('x'.repeat(65))).toBe(false)
    expect(isGuestId('has space1')).toBe(false)
  })
})

describe('time-ordered ids (outbox messages, webhook deliveries)', () => {
  it('sort by creation time in byte order, and never repeat within a millisecond', () => {
    vi.useFakeTimers()
    try {
      const made: string[] = []
      // Across the hex digits' order ('9' < 'a') and a carry into a new digit.
      for (const at of [
        Date.UTC(2026, 10, 24, 6, 0, 0, 9),
        Date.UTC(2026, 10, 24, 6, 0, 0, 10),
        0xfffffffff,
        0x1000000000,
        Date.UTC(2030, 0, 1),
      ].sort((a, b) => a - b)) {
        vi.setSystemTime(at)
        for (let i = 0; i < 200; i++) made.push(newOrderedId('dlv'))
      }
      for (const id of made) expect(id).toMatch(/^dlv_[0-9a-f]{16}[A-Za-z0-9_-]{14}$/)
      expect(new Set(made).size).toBe(made.length)
      // Within one millisecond too, in the order made: a deterministic tie-break.
      expect([...made].sort()).toEqual(made)
      const byTime = (id: string) => Number.parseInt(id.slice(4, 16), 16)
      const sorted = [...made].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      expect(sorted.map(byTime)).toEqual(made.map(byTime))
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('request ids', () => {
  it('never repeat within a process, nor between two processes (or restarts)', () => {
    const first = requestIdGenerator()
    const second = requestIdGenerator()
    const made = [...Array.from({ length: 5000 }, first), ...Array.from({ length: 5000 }, second)]
    for (const id of made) expect(id).toMatch(/^req_[A-Za-z0-9_-]{11}[0-9a-z]+$/)
    expect(new Set(made).size).toBe(made.length)
    // Each generator has its own random prefix, so the same count never gives the same id.
    expect(made[0]?.slice(0, 15)).not.toBe(made[5000]?.slice(0, 15))
  })
})

describe('secrets', () => {
  it('match only the secret they were hashed from', () => {
    const hash = hashSecret('sk_abc')
    expect(hash).not.toContain('sk_abc')
    expect(secretMatches('sk_abc', hash)).toBe(true)
    expect(secretMatches('sk_abd', hash)).toBe(false)
    expect(secretMatches('', hash)).toBe(false)
  })
})

describe('plans', () => {
  it('are ordered free < starter < growth < scale', () => {
    expect(planAtLeast('starter', 'starter')).toBe(true)
    expect(planAtLeast('free', 'starter')).toBe(false)
    expect(planAtLeast('scale', 'growth')).toBe(true)
    expect(planAtLeast('growth', 'scale')).toBe(false)
  })
})

describe('configuration', () => {
  it("reads DATABASE_URL as the README's Configuration says", () => {
    expect(parseDatabaseUrl(undefined, '/srv')).toEqual({ kind: 'sqlite', file: '/srv/data/wishlist.db' })
    expect(parseDatabaseUrl('sqlite:./x.db', '/srv')).toEqual({ kind: 'sqlite', file: '/srv/x.db' })
    expect(parseDatabaseUrl('postgres://u@h/db')).toEqual({ kind: 'postgres', url: 'postgres://u@h/db' })
    expect(parseDatabaseUrl('postgresql://u@h/db')).toEqual({ kind: 'postgres', url: 'postgresql://u@h/db' })
    expect(() => parseDatabaseUrl('mysql://x')).toThrow(ConfigError)
  })

  it('requires a shared JWT_SECRET with PostgreSQL and rejects bad numbers', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db' })).toThrow(/JWT_SECRET/)
    expect(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', PORT: 'abc' })).toThrow(/PORT/)
    expect(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', JWT_SECRET: 'short' })).toThrow(/32 bytes/)
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' })
    expect(config.rateLimit).toEqual({ storefrontPerMin: 60, adminPerMin: 120, shopPerMin: 1200 })
    expect(config.requestTimeoutMs).toBe(30_000)
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:', RATE_LIMIT_ADMIN_PER_MIN: '50' }).rateLimit.shopPerMin).toBe(500)
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:', RATE_LIMIT_SHOP_PER_MIN: '7' }).rateLimit.shopPerMin).toBe(7)
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:', SHOPIFY_API_SECRET: 's' }).shopify?.webhookBufferBytes).toBe(64 * 1024 * 1024)
    // Internal traffic (a load test from one address) may need more than a million a minute.
    const unlimited = loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      RATE_LIMIT_STOREFRONT_PER_MIN: '1000000000',
      RATE_LIMIT_ADMIN_PER_MIN: '5000000',
    })
    expect(unlimited.rateLimit).toMatchObject({ storefrontPerMin: 1_000_000_000, adminPerMin: 5_000_000 })
    expect(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', RATE_LIMIT_STOREFRONT_PER_MIN: '0' })).toThrow(
      /RATE_LIMIT_STOREFRONT_PER_MIN/,
    )
    expect(config.webhooks.retryScheduleSec).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000])
    expect(config.webhooks.retentionDays).toBe(30)
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:', WEBHOOK_DELIVERY_RETENTION_DAYS: '0' }).webhooks.retentionDays).toBe(0)
    expect(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', WEBHOOK_DELIVERY_RETENTION_DAYS: '-1' })).toThrow(
      /WEBHOOK_DELIVERY_RETENTION_DAYS/,
    )
    expect(config.port).toBe(3000)
    expect(config.host).toBe('127.0.0.1')
  })
})
