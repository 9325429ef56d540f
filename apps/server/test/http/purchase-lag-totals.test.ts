/**
 * `conversions?period=all` reads the shop's whole-history days-to-purchase histogram
 * (`analytics_purchase_lag_totals`) instead of every day's pairs. Whatever wrote the history
 * (orders over many days, repeat purchases, a released item bought within the window,
 * concurrent orders, a customer's erasure and orders after it; the seeding tool; an upgrade
 * through migration 0028), that histogram must equal a recount of the days' rows, and the
 * answer must be the one the days' rows give. The clock (Date only) is pinned at noon UTC.
 */
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { seedAnalytics } from '../../src/cli/analytics-seed.js'
import { openStorage } from '../../src/db/connect.js'
import { KNOWN_MIGRATIONS, migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import type { Db } from '../../src/db/types.js'
import { DAY_MS } from '../../src/lib/time.js'
import { dayOf } from '../../src/modules/analytics/analytics.periods.js'
import { analyticsRepo } from '../../src/modules/analytics/analytics.repo.js'
import { createAnalyticsService } from '../../src/modules/analytics/analytics.service.js'
import { medianDays } from '../../src/modules/analytics/conversions.js'
import { medianDaysOf } from '../../src/modules/analytics/purchase-lags.js'
import { applySteps } from '../helpers/analytics.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { freshDatabase } from '../helpers/db.js'

const today = dayOf(Date.now())
const NOW = today * DAY_MS + 12 * 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()

let t: TestApp

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(NOW)
  t = await createTestApp()
})
afterAll(async () => {
  await t.close()
  vi.useRealTimers()
})

/** mulberry32: the same history on every run. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) >>> 0
  let x = Math.imul(seed ^ (seed >>> 15), seed | 1)
  x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
  return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
}

/** Lag → count summed over every day's stored pairs of the shop: the histogram counted again from scratch. */
async function recount(db: Db, shopId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('analytics_daily').select('purchase_lags').where('shop_id', '=', shopId).execute()
  const out: Record<string, number> = {}
  for (const { purchase_lags: packed } of rows)
    for (const pair of packed === null ? [] : packed.split(',')) {
      const [lag = '', count] = pair.split(':')
      out[lag] = (out[lag] ?? 0) + Number(count)
    }
  return out
}

/** The shop's whole-history histogram as kept. */
async function kept(db: Db, shopId: string): Promise<Record<string, number>> {
  const rows = await db.selectFrom('analytics_purchase_lag_totals').select(['lag', 'count']).where('shop_id', '=', shopId).execute()
  return Object.fromEntries(rows.map((r) => [String(r.lag), Number(r.count)]))
}

/** The period=all answer computed the former way: every day's pairs merged. */
async function fromDays(db: Db, shopId: string) {
  const first = await analyticsRepo.firstDay(db, shopId)
  if (first === null) return null
  const from = Math.min(first, today)
  const days = await analyticsRepo.conversionTotals(db, shopId, from, today, false)
  const whole = await analyticsRepo.conversionTotals(db, shopId, from, today, true)
  // Everything but the histogram comes from the same rows either way.
  expect({ ...whole, lags: null }).toEqual({ ...days, lags: null })
  return { ordersInfluenced: days.orders, linesInfluenced: days.lines, medianDaysToPurchase: medianDaysOf(days.lags) }
}

describe("the whole-history histogram equals the days' rows", () => {
  it('after orders over many days, repeats, a release, concurrent orders and an erasure', async () => {
    const shop = await t.createShop('growth')
    const token = await shop.adminToken()
    const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => {
      const res = await t.call(method, url, { token, ...(body === undefined ? {} : { body }) })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return res.body.data
    }
    const all = () => call('GET', '/v1/admin/analytics/conversions?period=all')
    const rand = prng(11)
    // 150 items of 30 customers added over the last 90 days, as the wishlist module writes them.
    const items = Array.from({ length: 150 }, (_, i) => ({
      customer: String(5_000 + (i % 30)),
      productId: String(700 + i),
      at: (today - Math.floor(rand() * 90)) * DAY_MS + Math.floor(rand() * 12 * 3_600_000),
    }))
    await applySteps(
      t.storage.db,
      shop.id,
      items.map((i) => ({ type: 'add' as const, owner: { type: 'customer' as const, id: i.customer }, productId: i.productId, at: i.at })),
    )
    const counts = new Map<string, number>()
    for (const i of items) counts.set(i.customer, (counts.get(i.customer) ?? 0) + 1)
    await t.storage.db
      .insertInto('wishlist_owners')
      .values(
        [...counts].map(([id, n]) => ({
          shop_id: shop.id,
          owner_type: 'customer' as const,
          owner_id: id,
          item_count: n,
          created_at: NOW,
          updated_at: NOW,
        })),
      )
      .execute()
    // A released item: 5000's first item is removed an hour after its add (within the window of the order below).
    const released = items[0] as (typeof items)[number]
    await applySteps(t.storage.db, shop.id, [
      { type: 'remove', owner: { type: 'customer', id: released.customer }, productId: released.productId, at: released.at + 3_600_000 },
    ])
    const orderOf = (n: number, customer: string, productIds: string[], at?: number) => ({
      type: 'order.created',
      order_id: String(n),
      customer_id: customer,
      currency: n % 3 === 0 ? 'USD' : 'EUR',
      ...(at === undefined ? {} : { occurred_at: iso(at) }),
      line_items: productIds.map((productId) => ({ product_id: productId, price: '7.50' })),
    })
    // Half the items bought, in batches of orders, at random times after their adds; a fifth bought again later.
    const bought = items.slice(1).filter(() => rand() < 0.5)
    const orders = bought.map((b, n) => orderOf(10_000 + n, b.customer, [b.productId], b.at + Math.floor(rand() * (NOW - b.at + 1))))
    orders.push(orderOf(19_999, released.customer, [released.productId], Math.min(NOW, released.at + 2 * DAY_MS)))
    for (let i = 0; i < orders.length; i += 15) await call('POST', '/v1/events', { events: orders.slice(i, i + 15) })
    await call('POST', '/v1/events', {
      events: bought.filter((_, n) => n % 5 === 0).map((b, n) => orderOf(20_000 + n, b.customer, [b.productId])),
    })
    // Items not bought yet, each in its own request, all at once.
    const rest = items.slice(1).filter((i) => !bought.includes(i))
    await Promise.all(
      rest.slice(0, 12).map((i, n) => call('POST', '/v1/events', { events: [orderOf(30_000 + n, i.customer, [i.productId, '999'])] })),
    )

    expect(await recount(t.storage.db, shop.id)).toEqual(await kept(t.storage.db, shop.id))
    const before = await all()
    expect(before.ordersInfluenced).toBeGreaterThan(80)
    expect(before).toMatchObject((await fromDays(t.storage.db, shop.id)) ?? {})

    // Erasing a customer who bought leaves every figure as it was.
    const erased = (bought[0] as (typeof bought)[number]).customer
    await call('DELETE', `/v1/admin/customers/${erased}`)
    expect(await all()).toEqual(before)
    expect(await recount(t.storage.db, shop.id)).toEqual(await kept(t.storage.db, shop.id))

    // Orders after it (the erased customer's included) add to both alike.
    await call('POST', '/v1/events', {
      events: [
        orderOf(40_000, erased, [(bought[0] as (typeof bought)[number]).productId]),
        ...rest.slice(12, 20).map((i, n) => orderOf(40_001 + n, i.customer, [i.productId])),
      ],
    })
    const after = await all()
    expect(after.ordersInfluenced).toBeGreaterThan(before.ordersInfluenced)
    expect(await recount(t.storage.db, shop.id)).toEqual(await kept(t.storage.db, shop.id))
    expect(after).toMatchObject((await fromDays(t.storage.db, shop.id)) ?? {})
    expect(after.medianDaysToPurchase).not.toBeNull()
  })

  it('the seeding tool writes it with the days it seeds', async () => {
    const shop = await t.createShop('growth')
    const seeded = await seedAnalytics(t.storage.db, shop.id, { events: 4_000, days: 120, now: NOW, seed: 5 })
    expect(seeded.orders).toBeGreaterThan(100)
    expect(await recount(t.storage.db, shop.id)).toEqual(await kept(t.storage.db, shop.id))
    const res = await t.call('GET', '/v1/admin/analytics/conversions?period=all', { token: await shop.adminToken() })
    expect(res.body.data).toMatchObject((await fromDays(t.storage.db, shop.id)) ?? {})
  })
})

describe('upgrading through migration 0028', () => {
  it("fills the whole-history histogram from every day's pairs: period=all answers as before", async () => {
    const database = await freshDatabase()
    const storage = openStorage(database.target)
    try {
      await migrateTo(storage, KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.indexOf('0028_purchase_lag_totals') - 1] as string)
      const old = storage.db as unknown as Kysely<Record<string, Record<string, string | number | null>>>
      // Two shops' days with pairs over 50 days (some days without), a third shop with no purchase at all.
      const rand = prng(3)
      const days: { shop_id: string; day: number; adds: number; purchased: number; purchase_lags: string | null }[] = []
      for (const shop of ['shop_a', 'shop_b', 'shop_c'])
        for (let k = 0; k < 50; k++) {
          const lags = new Map<number, number>()
          if (shop !== 'shop_c' && k % 4 !== 0)
            for (let j = 0; j < 1 + Math.floor(rand() * 6); j++) lags.set(Math.floor(rand() * (k + 1) * 10), 1 + Math.floor(rand() * 4))
          const packed = lags.size === 0 ? null : [...lags].map(([lag, n]) => `${lag}:${n}`).join(',')
          const purchased = [...lags.values()].reduce((a, b) => a + b, 0)
          days.push({ shop_id: shop, day: today - k, adds: purchased + 3, purchased, purchase_lags: packed })
        }
      await old.insertInto('analytics_daily').values(days).execute()

      expect(await migrateToLatest(storage)).toContain('0028_purchase_lag_totals')

      const analytics = createAnalyticsService({ db: storage.db, now: () => NOW })
      for (const shop of ['shop_a', 'shop_b', 'shop_c']) {
        const expected: Record<string, number> = {}
        const histogram: { lag: number; count: number }[] = []
        for (const d of days.filter((r) => r.shop_id === shop))
          for (const pair of d.purchase_lags?.split(',') ?? []) {
            const [lag, count] = pair.split(':').map(Number) as [number, number]
            expected[String(lag)] = (expected[String(lag)] ?? 0) + count
            histogram.push({ lag, count })
          }
        expect(await kept(storage.db, shop), shop).toEqual(expected)
        const answer = await analytics.conversions({ shop: { id: shop } } as Parameters<typeof analytics.conversions>[0], 'all')
        expect(answer.medianDaysToPurchase, shop).toBe(medianDays(histogram))
        if (shop !== 'shop_c') expect(answer.medianDaysToPurchase, shop).not.toBeNull()
      }
      expect(
        Number((await sql<{ n: number }>`select count(*) as n from analytics_purchase_lag_totals`.execute(storage.db)).rows[0]?.n),
      ).toBe(Object.keys(await kept(storage.db, 'shop_a')).length + Object.keys(await kept(storage.db, 'shop_b')).length)
    } finally {
      await storage.destroy()
      await database.drop()
    }
  })
})
