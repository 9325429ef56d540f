/**
 * From wish to purchase, with figures computed by hand. The clock (Date only) is pinned at
 * noon UTC of today, so days before it are whole days; history is written as the wishlist
 * module writes it (items + facts, test/helpers/analytics.ts), everything else through the API.
 */
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { openStorage } from '../../src/db/connect.js'
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { DAY_MS } from '../../src/lib/time.js'
import { dayOf, formatDay } from '../../src/modules/analytics/analytics.periods.js'
import { createAnalyticsService } from '../../src/modules/analytics/analytics.service.js'
import { medianDays } from '../../src/modules/analytics/conversions.js'
import { applySteps } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { freshDatabase } from '../helpers/db.js'

const today = dayOf(Date.now())
const noon = (k: number) => (today - k) * DAY_MS + 12 * 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()
const NOW = noon(0)

let t: TestApp
let shop: TestShop
let admin: string

const c1 = { type: 'customer' as const, id: '101' }
const c2 = { type: 'customer' as const, id: '102' }

const get = async (url: string) => {
  const res = await t.call('GET', url, { token: admin })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data
}
const events = (list: Record<string, unknown>[]) => t.call('POST', '/v1/events', { token: admin, body: { events: list } })
const order = (o: Record<string, unknown>) => events([{ type: 'order.created', ...o }])
/** A day's stored days-to-purchase histogram (`lag:count,…`) as lag → count. */
const storedLags = (packed: string | null): Record<string, number> =>
  Object.fromEntries((packed === null ? [] : packed.split(',')).map((pair) => pair.split(':')).map(([lag, count]) => [lag, Number(count)]))

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(NOW)
  t = await createTestApp()
  shop = await t.createShop('growth')
  admin = await shop.adminToken()
  await shop.subscribe(['wishlist.item.purchased'])
  // c1: P1 held since day −40, P8 since day −30; P2 held days −20..−10; P3 held days −60..−45.
  // c2: P4 held since day −15, P7 since day −12 (never bought).
  for (const s of [
    { type: 'add' as const, owner: c1, productId: '3', at: noon(60) },
    { type: 'remove' as const, owner: c1, productId: '3', at: noon(45) },
    { type: 'add' as const, owner: c1, productId: '1', at: noon(40) },
    { type: 'add' as const, owner: c1, productId: '8', at: noon(30) },
    { type: 'add' as const, owner: c1, productId: '2', at: noon(20) },
    { type: 'add' as const, owner: c2, productId: '4', at: noon(15) },
    { type: 'add' as const, owner: c2, productId: '7', at: noon(12) },
    { type: 'remove' as const, owner: c1, productId: '2', at: noon(10) },
  ]) {
    await applySteps(t.storage.db, shop.id, [s])
  }
  // The owners' rows, as the wishlist module keeps them beside their items.
  for (const [owner, count] of [
    [c1, 2],
    [c2, 2],
  ] as const) {
    await t.storage.db
      .insertInto('wishlist_owners')
      .values({
        shop_id: shop.id,
        owner_type: owner.type,
        owner_id: owner.id,
        item_count: count,
        created_at: noon(60),
        updated_at: noon(10),
      })
      .execute()
  }
})
afterAll(async () => {
  await t.close()
  vi.useRealTimers()
})

describe('orders, purchase state and attribution', () => {
  it('refuses bad orders with the field in details, writing nothing', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [
        { order_id: '900', customer_id: '101', currency: 'eur', line_items: [{ product_id: '1', price: '1.00' }] },
        'body.events.0.currency',
      ],
      [{ order_id: '900', customer_id: '101', currency: 'EURO', line_items: [{ product_id: '1' }] }, 'body.events.0.currency'],
      [{ order_id: '900', customer_id: '101', line_items: [{ product_id: '1', price: '1.00' }] }, 'body.events.0.currency'],
      [
        { order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', price: '-1.00' }] },
        'body.events.0.line_items.0.price',
      ],
      [
        { order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', price: 'abc' }] },
        'body.events.0.line_items.0.price',
      ],
      // Finer than the currency's minor unit: no rounding, a 400.
      [
        { order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', price: '0.125' }] },
        'body.events.0.line_items.0.price',
      ],
      [
        { order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', quantity: 0 }] },
        'body.events.0.line_items.0.quantity',
      ],
      [
        { order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', quantity: 1.5 }] },
        'body.events.0.line_items.0.quantity',
      ],
    ]
    for (const [body, path] of bad) {
      const res = await order(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
    }
    expect(await t.storage.db.selectFrom('orders').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])
    expect((await get('/v1/admin/analytics/conversions?period=all')).ordersInfluenced).toBe(0)
  })

  it('applies orders: held, released inside the window, released outside it, a signal, a guest merge, an order without prices', async () => {
    // O1 (day −5, EUR): P1 held (bought 35.0 days after its add): 2 × 12.50 = 25.00;
    // P8 held (25.0 days): 3 × 0.13 = 0.39; P9 never wishlisted.
    expect(
      (
        await order({
          order_id: '5001',
          customer_id: '101',
          currency: 'EUR',
          occurred_at: iso(noon(5)),
          line_items: [
            { product_id: '1', quantity: 2, price: '12.50' },
            { product_id: '8', quantity: 3, price: '0.13' },
            { product_id: '9', price: '5.00' },
          ],
        })
      ).status,
    ).toBe(200)
    // O2 (day −2, USD): P2 released on day −10, inside the 30-day window (18.0 days after its add).
    await order({
      order_id: '5002',
      customer_id: '101',
      currency: 'USD',
      occurred_at: iso(noon(2)),
      line_items: [{ product_id: '2', price: 19.99 }],
    })
    // O3 (day −3, EUR): P3 released on day −45, outside the window: not influenced.
    await order({
      order_id: '5003',
      customer_id: '101',
      currency: 'EUR',
      occurred_at: iso(noon(3)),
      line_items: [{ product_id: '3', price: '100' }],
    })
    // A signal, then O4 (today, JPY): P4 back in stock and cheaper while c2 holds it (15.0 days).
    await events([{ type: 'product.updated', product_id: '4', variants: [{ variant_id: '41', price: '50.00', inventory_quantity: 0 }] }])
    await events([{ type: 'product.updated', product_id: '4', variants: [{ variant_id: '41', price: '40.00', inventory_quantity: 10 }] }])
    await order({ order_id: '5004', customer_id: '102', currency: 'JPY', line_items: [{ product_id: '4', quantity: 3, price: '1500' }] })
    // A guest's item (added on day −4) merged into c3, then O6 (today) without prices: 4.0 days.
    const merged = await t.call('POST', '/v1/wishlists/103/merge', {
      token: admin,
      body: { guest_items: [{ product_id: '6', added_at: iso(noon(4)), quantity: 2, note: 'gift' }] },
    })
    expect(merged.status).toBe(200)
    await order({ order_id: '5006', customer_id: '103', line_items: [{ product_id: '6', quantity: 2 }] })
    // A repeated order id applies once.
    await order({
      order_id: '5001',
      customer_id: '101',
      currency: 'EUR',
      occurred_at: iso(noon(5)),
      line_items: [{ product_id: '1', quantity: 2, price: '12.50' }],
    })

    // Purchase state: the items carry the order's time.
    const c1Items = (await get('/v1/wishlists/101')).items as Record<string, unknown>[]
    expect(Object.fromEntries(c1Items.map((i) => [i.productId, i.purchasedAt]))).toEqual({ '1': iso(noon(5)), '8': iso(noon(5)) })
    expect((await get('/v1/wishlists/103')).items).toEqual([
      { productId: '6', variantId: null, addedAt: iso(noon(4)), quantity: 2, note: 'gift', priority: 'normal', purchasedAt: iso(NOW) },
    ])
    const outbox = await t.storage.db
      .selectFrom('outbox')
      .select(['event', 'payload'])
      .where('shop_id', '=', shop.id)
      .where('event', '=', 'wishlist.item.purchased')
      .execute()
    expect(outbox.map((r) => JSON.parse(r.payload)).sort((a, b) => (a.productId < b.productId ? -1 : 1))).toEqual([
      {
        customerId: '101',
        wishlistId: 'default',
        productId: '1',
        variantId: null,
        orderId: '5001',
        quantity: 2,
        purchasedAt: iso(noon(5)),
      },
      { customerId: '102', wishlistId: 'default', productId: '4', variantId: '41', orderId: '5004', quantity: 3, purchasedAt: iso(NOW) },
      { customerId: '103', wishlistId: 'default', productId: '6', variantId: null, orderId: '5006', quantity: 2, purchasedAt: iso(NOW) },
      {
        customerId: '101',
        wishlistId: 'default',
        productId: '8',
        variantId: null,
        orderId: '5001',
        quantity: 3,
        purchasedAt: iso(noon(5)),
      },
    ])
  })

  it('conversions: exact figures per period', async () => {
    // all: influenced orders O1, O2, O4, O6; lines P1, P8, P2, P4, P6. Adds: 3, 1, 8, 2, 4, 7 and
    // the merge's 6 = 7, of which bought 1, 8, 2, 4, 6 = 5 → 71.43. Lags 4, 15, 18, 25, 35 → 18.0.
    expect(await get('/v1/admin/analytics/conversions?period=all')).toEqual({
      period: 'all',
      ordersInfluenced: 4,
      linesInfluenced: 5,
      revenueInfluenced: [
        { currency: 'EUR', amount: '25.39' },
        { currency: 'JPY', amount: '4500' },
        { currency: 'USD', amount: '19.99' },
      ],
      wishlistToPurchaseRate: 71.43,
      medianDaysToPurchase: 18,
      signalsInfluenced: { back_in_stock: 1, price_dropped: 1, low_stock: 0 },
      channelsInfluenced: { klaviyo: 0, flow: 0 },
    })
    // 30d (days −29..0): adds 2 (−20), 4 (−15), 7 (−12), the merge (today) = 4; bought among
    // the items added in it: 2, 4, 6 (added day −4) = 3 → 75; lags 4, 15, 18 → 15.0.
    expect(await get('/v1/analytics/conversions?period=30d')).toMatchObject({
      period: '30d',
      ordersInfluenced: 4,
      linesInfluenced: 5,
      wishlistToPurchaseRate: 75,
      medianDaysToPurchase: 15,
    })
    // 7d (days −6..0): the merge's add; item 6 bought → 100; lag 4.0. O1 (day −5) is inside.
    expect(await get('/v1/analytics/conversions?period=7d')).toMatchObject({
      ordersInfluenced: 4,
      wishlistToPurchaseRate: 100,
      medianDaysToPurchase: 4,
    })
    const days = (await get('/v1/analytics/daily?period=7d')).days as { date: string; orders_influenced: number }[]
    expect(Object.fromEntries(days.filter((d) => d.orders_influenced > 0).map((d) => [d.date, d.orders_influenced]))).toEqual({
      [formatDay(today - 5)]: 1,
      [formatDay(today - 2)]: 1,
      [formatDay(today)]: 2,
    })
  })

  it('per product: purchases and revenue; top products by revenue in the most frequent currency', async () => {
    expect(await get('/v1/analytics/product/1')).toEqual({
      wishlistCount: 1,
      purchases: 1,
      revenue: [{ currency: 'EUR', amount: '25.00' }],
    })
    expect(await get('/v1/analytics/product/6')).toEqual({ wishlistCount: 1, purchases: 1, revenue: [] })
    expect(await get('/v1/analytics/product/3')).toEqual({ wishlistCount: 0, purchases: 0, revenue: [] })
    // EUR has two priced influenced lines, JPY and USD one each.
    expect((await get('/v1/analytics/top-products?sort=revenue')).products).toEqual([
      expect.objectContaining({ productId: '1', wishlistCount: 1, purchases: 1, revenue: [{ currency: 'EUR', amount: '25.00' }] }),
      expect.objectContaining({ productId: '8', wishlistCount: 1, purchases: 1, revenue: [{ currency: 'EUR', amount: '0.39' }] }),
    ])
  })

  it('attribution_window_days is a setting, 1..90', async () => {
    expect((await t.call('PATCH', '/v1/admin/settings', { token: admin, body: { attribution_window_days: 91 } })).status).toBe(400)
    const ok = await t.call('PATCH', '/v1/admin/settings', { token: admin, body: { attribution_window_days: 7 } })
    expect(ok.body.data.attribution_window_days).toBe(7)
    // P2 was released on day −10: with a 7-day window an order today is not influenced by it.
    await order({ order_id: '5010', customer_id: '101', currency: 'USD', line_items: [{ product_id: '2', price: '1.00' }] })
    expect((await get('/v1/admin/analytics/conversions?period=all')).ordersInfluenced).toBe(4)
  })
})

describe('remove on purchase', () => {
  it('removes the bought item, emits wishlist.item.purchased and counts the sale', async () => {
    const s = await t.createShop('growth', { remove_on_purchase: true })
    const token = await s.adminToken()
    await s.subscribe(['wishlist.item.purchased', 'wishlist.item.removed'])
    expect((await t.call('POST', '/v1/wishlists/201/items', { token, body: { product_id: '50', quantity: 2 } })).status).toBe(201)
    const res = await t.call('POST', '/v1/events', {
      token,
      body: {
        events: [
          {
            type: 'order.created',
            order_id: '7001',
            customer_id: '201',
            currency: 'EUR',
            line_items: [{ product_id: '50', price: '30.00' }],
          },
        ],
      },
    })
    expect(res.status).toBe(200)
    expect((await t.call('GET', '/v1/wishlists/201', { token })).body.data.items).toEqual([])
    const outbox = await t.storage.db
      .selectFrom('outbox')
      .select(['event', 'payload'])
      .where('shop_id', '=', s.id)
      .orderBy('event')
      .execute()
    expect(outbox.map((r) => [r.event, JSON.parse(r.payload)])).toEqual([
      [
        'wishlist.item.purchased',
        { customerId: '201', wishlistId: 'default', productId: '50', variantId: null, orderId: '7001', quantity: 1, purchasedAt: iso(NOW) },
      ],
      ['wishlist.item.removed', { customerId: '201', wishlistId: 'default', productId: '50', variantId: null, reason: 'purchased' }],
    ])
    const conv = await t.call('GET', '/v1/admin/analytics/conversions?period=7d', { token })
    expect(conv.body.data).toEqual({
      period: '7d',
      ordersInfluenced: 1,
      linesInfluenced: 1,
      revenueInfluenced: [{ currency: 'EUR', amount: '30.00' }],
      wishlistToPurchaseRate: 100,
      medianDaysToPurchase: 0,
      signalsInfluenced: { back_in_stock: 0, price_dropped: 0, low_stock: 0 },
      channelsInfluenced: { klaviyo: 0, flow: 0 },
    })
  })
})

describe('days to purchase, kept in the daily rollup rows', () => {
  /** mulberry32: the same history on every run. */
  const prng = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) >>> 0
    let x = Math.imul(seed ^ (seed >>> 15), seed | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296
  }
  /** The median of the raw lags (ms), each counted in tenths of a day, in days rounded half up to 1 decimal. */
  const directMedian = (lagsMs: number[]): number | null => {
    const tenths = lagsMs.map((ms) => Math.round(ms / (DAY_MS / 10))).sort((a, b) => a - b)
    if (tenths.length === 0) return null
    const mid = Math.floor(tenths.length / 2)
    const medianTenths = tenths.length % 2 === 1 ? (tenths[mid] as number) : ((tenths[mid - 1] as number) + (tenths[mid] as number)) / 2
    return Math.round(medianTenths) / 10
  }
  const conversionsOf = async (token: string, period: string) => {
    const res = await t.call('GET', `/v1/admin/analytics/conversions?period=${period}`, { token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data as { wishlistToPurchaseRate: number; medianDaysToPurchase: number | null }
  }
  /** Customers' items as the wishlist module writes them, with their owners' rows. */
  async function holdItems(shopId: string, items: { customer: string; productId: string; at: number }[]) {
    await applySteps(
      t.storage.db,
      shopId,
      items.map((i) => ({ type: 'add' as const, owner: { type: 'customer' as const, id: i.customer }, productId: i.productId, at: i.at })),
    )
    const owners = new Map<string, number>()
    for (const i of items) owners.set(i.customer, (owners.get(i.customer) ?? 0) + 1)
    await t.storage.db
      .insertInto('wishlist_owners')
      .values(
        [...owners].map(([id, count]) => ({
          shop_id: shopId,
          owner_type: 'customer' as const,
          owner_id: id,
          item_count: count,
          created_at: NOW,
          updated_at: NOW,
        })),
      )
      .execute()
  }

  it('the median over many orders across many days equals the median of every purchase, for each period', async () => {
    const s = await t.createShop('growth')
    const token = await s.adminToken()
    const rand = prng(7)
    // 240 items of 80 customers, added over the last 45 days: several adds share each day.
    const items = Array.from({ length: 240 }, (_, i) => {
      const k = Math.floor(rand() * 45)
      return {
        customer: String(3_000 + (i % 80)),
        productId: String(500 + i),
        at: (today - k) * DAY_MS + Math.floor(rand() * 12 * 3_600_000),
      }
    })
    await holdItems(s.id, items)
    // Two thirds are bought, each at a random time between its add and now; a few are bought
    // again later (a repeat purchase keeps the first one's days).
    const bought = items.filter(() => rand() < 2 / 3).map((i) => ({ ...i, orderAt: i.at + Math.floor(rand() * (NOW - i.at + 1)) }))
    const orders = bought.map((b, n) => ({
      type: 'order.created',
      order_id: String(80_000 + n),
      customer_id: b.customer,
      currency: 'EUR',
      occurred_at: iso(b.orderAt),
      line_items: [{ product_id: b.productId, price: '10.00' }],
    }))
    const repeats = bought
      .filter((_, n) => n % 5 === 0)
      .map((b, n) => ({
        type: 'order.created',
        order_id: String(90_000 + n),
        customer_id: b.customer,
        currency: 'EUR',
        line_items: [{ product_id: b.productId, price: '10.00' }],
      }))
    const all = [...orders, ...repeats]
    for (let i = 0; i < all.length; i += 20) {
      const res = await t.call('POST', '/v1/events', { token, body: { events: all.slice(i, i + 20) } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
    }
    for (const [period, days] of [
      ['all', null],
      ['30d', 30],
      ['7d', 7],
    ] as const) {
      const from = days === null ? -Infinity : today - days + 1
      const added = items.filter((i) => dayOf(i.at) >= from)
      const purchased = bought.filter((b) => dayOf(b.at) >= from)
      const expected = directMedian(purchased.map((b) => b.orderAt - b.at))
      expect(purchased.length, period).toBeGreaterThan(period === '7d' ? 5 : 50)
      expect(await conversionsOf(token, period), period).toMatchObject({
        wishlistToPurchaseRate: Math.round((10_000 * purchased.length) / added.length) / 100,
        medianDaysToPurchase: expected,
      })
    }
  })

  it('concurrent orders buying items added on the same day all count: none is lost', async () => {
    const s = await t.createShop('growth')
    const token = await s.adminToken()
    // 40 customers each add a product on day −3, at 10:00 plus i minutes.
    const addedAt = (i: number) => (today - 3) * DAY_MS + 10 * 3_600_000 + i * 60_000
    const items = Array.from({ length: 40 }, (_, i) => ({ customer: String(4_000 + i), productId: String(600 + i), at: addedAt(i) }))
    await holdItems(s.id, items)
    // Each buys it in its own request, all at once, i × 3 hours after its add (at most now).
    const orderAt = (i: number) => Math.min(NOW, addedAt(i) + i * 3 * 3_600_000)
    const results = await Promise.all(
      items.map((item, i) =>
        t.call('POST', '/v1/events', {
          token,
          body: {
            events: [
              {
                type: 'order.created',
                order_id: String(70_000 + i),
                customer_id: item.customer,
                currency: 'EUR',
                occurred_at: iso(orderAt(i)),
                line_items: [{ product_id: item.productId, price: '5.00' }],
              },
            ],
          },
        }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(items.map(() => 200))
    const conversions = await t.call('GET', '/v1/admin/analytics/conversions?period=7d', { token })
    expect(conversions.body.data).toMatchObject({
      ordersInfluenced: 40,
      linesInfluenced: 40,
      revenueInfluenced: [{ currency: 'EUR', amount: '200.00' }],
      wishlistToPurchaseRate: 100,
      medianDaysToPurchase: directMedian(items.map((_, i) => orderAt(i) - addedAt(i))),
    })
    // The add day's histogram holds all 40 purchases, each under its own days to purchase.
    const [row] = await t.storage.db
      .selectFrom('analytics_daily')
      .select(['purchased', 'purchase_lags'])
      .where('shop_id', '=', s.id)
      .where('day', '=', today - 3)
      .execute()
    const expected = new Map<string, number>()
    for (let i = 0; i < 40; i++) {
      const lag = String(Math.round((orderAt(i) - addedAt(i)) / (DAY_MS / 10)))
      expected.set(lag, (expected.get(lag) ?? 0) + 1)
    }
    expect(row?.purchased).toBe(40)
    expect(storedLags(row?.purchase_lags ?? null)).toEqual(Object.fromEntries(expected))
  })
})

describe('upgrading from a version that kept the histogram as one row per (day, lag)', () => {
  it("migration 0020 packs every count into its day's rollup row: the medians stay the same", async () => {
    const database = await freshDatabase()
    const storage = openStorage(database.target)
    try {
      await migrateTo(storage, '0019_catalog_titles')
      const old = storage.db as unknown as Kysely<Record<string, Record<string, string | number | null>>>
      // Two shops' histograms over 40 days: several lags per day, some days without a daily row.
      const rand = (() => {
        let x = 12345
        return () => (x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
      })()
      const lagRows: { shop_id: string; day: number; lag: number; count: number }[] = []
      for (const shop of ['shop_a', 'shop_b']) {
        for (let k = 0; k < 40; k++) {
          const lags = new Set(Array.from({ length: 1 + Math.floor(rand() * 8) }, () => Math.floor(rand() * 600)))
          for (const lag of lags) lagRows.push({ shop_id: shop, day: today - k, lag, count: 1 + Math.floor(rand() * 5) })
        }
      }
      await old.insertInto('analytics_purchase_lags').values(lagRows).execute()
      const withRow = (k: number) => k % 3 !== 0
      await old
        .insertInto('analytics_daily')
        .values(
          Array.from({ length: 40 }, (_, k) => k)
            .filter(withRow)
            .map((k) => ({
              shop_id: 'shop_a',
              day: today - k,
              adds: 10 + k,
              removes: 1,
              shoppers: 3,
              last_seen: 2,
              converted: 1,
              purchased: 4,
            })),
        )
        .execute()

      expect(await migrateToLatest(storage)).toContain('0020_packed_purchase_lags')

      // Every count is in its day's row; the other figures of the rows are untouched.
      const rows = await storage.db
        .selectFrom('analytics_daily')
        .select(['shop_id', 'day', 'adds', 'purchased', 'purchase_lags'])
        .orderBy('shop_id')
        .orderBy('day')
        .execute()
      const packed = Object.fromEntries(rows.map((r) => [`${r.shop_id} ${r.day}`, storedLags(r.purchase_lags)]))
      const expected: Record<string, Record<string, number>> = {}
      for (const r of lagRows) expected[`${r.shop_id} ${r.day}`] = { ...expected[`${r.shop_id} ${r.day}`], [String(r.lag)]: r.count }
      expect(packed).toEqual(expected)
      for (const r of rows.filter((r) => r.shop_id === 'shop_a')) {
        const k = today - Number(r.day)
        expect({ adds: r.adds, purchased: r.purchased }).toEqual(withRow(k) ? { adds: 10 + k, purchased: 4 } : { adds: 0, purchased: 0 })
      }
      await expect(sql`select count(*) from analytics_purchase_lags`.execute(storage.db)).rejects.toThrow()

      // The answer's median is the one the former rows gave, for each period.
      const analytics = createAnalyticsService({ db: storage.db, now: () => NOW })
      for (const [period, days] of [
        ['all', 40],
        ['30d', 30],
        ['7d', 7],
      ] as const) {
        for (const shop of ['shop_a', 'shop_b']) {
          const before = medianDays(lagRows.filter((r) => r.shop_id === shop && r.day > today - days))
          expect(before, `${shop} ${period}`).not.toBeNull()
          const answer = await analytics.conversions({ shop: { id: shop } } as Parameters<typeof analytics.conversions>[0], period)
          expect(answer.medianDaysToPurchase, `${shop} ${period}`).toBe(before)
        }
      }
    } finally {
      await storage.destroy()
      await database.drop()
    }
  })
})
