/**
 * From wish to purchase, with figures computed by hand. The clock (Date only) is pinned at
 * noon UTC of today, so days before it are whole days; history is written as the wishlist
 * module writes it (items + facts, test/helpers/analytics.ts), everything else through the API.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DAY_MS } from '../../src/lib/time.js'
import { dayOf, formatDay } from '../../src/modules/analytics/analytics.periods.js'
import { applySteps } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

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
  for (const [owner, count] of [[c1, 2], [c2, 2]] as const) {
    await t.storage.db.insertInto('wishlist_owners').values({ shop_id: shop.id, owner_type: owner.type, owner_id: owner.id, item_count: count, created_at: noon(60), updated_at: noon(10) }).execute()
  }
})
afterAll(async () => {
  await t.close()
  vi.useRealTimers()
})

describe('orders, purchase state and attribution', () => {
  it('refuses bad orders with the field in details, writing nothing', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ order_id: '900', customer_id: '101', currency: 'eur', line_items: [{ product_id: '1', price: '1.00' }] }, 'body.events.0.currency'],
      [{ order_id: '900', customer_id: '101', currency: 'EURO', line_items: [{ product_id: '1' }] }, 'body.events.0.currency'],
      [{ order_id: '900', customer_id: '101', line_items: [{ product_id: '1', price: '1.00' }] }, 'body.events.0.currency'],
      [{ order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', price: '-1.00' }] }, 'body.events.0.line_items.0.price'],
      [{ order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', price: 'abc' }] }, 'body.events.0.line_items.0.price'],
      [{ order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', quantity: 0 }] }, 'body.events.0.line_items.0.quantity'],
      [{ order_id: '900', customer_id: '101', currency: 'EUR', line_items: [{ product_id: '1', quantity: 1.5 }] }, 'body.events.0.line_items.0.quantity'],
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
    // P8 held (25.0 days): 3 × 0.125 = 0.375 → 0.38; P9 never wishlisted.
    expect((await order({ order_id: '5001', customer_id: '101', currency: 'EUR', occurred_at: iso(noon(5)), line_items: [
      { product_id: '1', quantity: 2, price: '12.50' },
      { product_id: '8', quantity: 3, price: '0.125' },
      { product_id: '9', price: '5.00' },
    ] })).status).toBe(200)
    // O2 (day −2, USD): P2 released on day −10, inside the 30-day window (18.0 days after its add).
    await order({ order_id: '5002', customer_id: '101', currency: 'USD', occurred_at: iso(noon(2)), line_items: [{ product_id: '2', price: 19.99 }] })
    // O3 (day −3, EUR): P3 released on day −45, outside the window: not influenced.
    await order({ order_id: '5003', customer_id: '101', currency: 'EUR', occurred_at: iso(noon(3)), line_items: [{ product_id: '3', price: '100' }] })
    // A signal, then O4 (today, JPY): P4 back in stock and cheaper while c2 holds it (15.0 days).
    await events([{ type: 'product.updated', product_id: '4', variants: [{ variant_id: '41', price: '50.00', inventory_quantity: 0 }] }])
    await events([{ type: 'product.updated', product_id: '4', variants: [{ variant_id: '41', price: '40.00', inventory_quantity: 10 }] }])
    await order({ order_id: '5004', customer_id: '102', currency: 'JPY', line_items: [{ product_id: '4', quantity: 3, price: '1500' }] })
    // A guest's item (added on day −4) merged into c3, then O6 (today) without prices: 4.0 days.
    const merged = await t.call('POST', '/v1/wishlists/103/merge', { token: admin, body: { guest_items: [{ product_id: '6', added_at: iso(noon(4)), quantity: 2, note: 'gift' }] } })
    expect(merged.status).toBe(200)
    await order({ order_id: '5006', customer_id: '103', line_items: [{ product_id: '6', quantity: 2 }] })
    // A repeated order id applies once.
    await order({ order_id: '5001', customer_id: '101', currency: 'EUR', occurred_at: iso(noon(5)), line_items: [{ product_id: '1', quantity: 2, price: '12.50' }] })

    // Purchase state: the items carry the order's time.
    const c1Items = (await get('/v1/wishlists/101')).items as Record<string, unknown>[]
    expect(Object.fromEntries(c1Items.map((i) => [i.productId, i.purchasedAt]))).toEqual({ '1': iso(noon(5)), '8': iso(noon(5)) })
    expect((await get('/v1/wishlists/103')).items).toEqual([{ productId: '6', variantId: null, addedAt: iso(noon(4)), quantity: 2, note: 'gift', priority: 'normal', purchasedAt: iso(NOW) }])
    const outbox = await t.storage.db.selectFrom('outbox').select(['event', 'payload']).where('shop_id', '=', shop.id).where('event', '=', 'wishlist.item.purchased').execute()
    expect(outbox.map((r) => JSON.parse(r.payload)).sort((a, b) => (a.productId < b.productId ? -1 : 1))).toEqual([
      { customerId: '101', wishlistId: 'default', productId: '1', variantId: null, orderId: '5001', quantity: 2, purchasedAt: iso(noon(5)) },
      { customerId: '102', wishlistId: 'default', productId: '4', variantId: '41', orderId: '5004', quantity: 3, purchasedAt: iso(NOW) },
      { customerId: '103', wishlistId: 'default', productId: '6', variantId: null, orderId: '5006', quantity: 2, purchasedAt: iso(NOW) },
      { customerId: '101', wishlistId: 'default', productId: '8', variantId: null, orderId: '5001', quantity: 3, purchasedAt: iso(noon(5)) },
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
        { currency: 'EUR', amount: '25.38' },
        { currency: 'JPY', amount: '4500' },
        { currency: 'USD', amount: '19.99' },
      ],
      wishlistToPurchaseRate: 71.43,
      medianDaysToPurchase: 18,
      signalsInfluenced: { back_in_stock: 1, price_dropped: 1, low_stock: 0 },
    })
    // 30d (days −29..0): adds 2 (−20), 4 (−15), 7 (−12), the merge (today) = 4; bought among
    // the items added in it: 2, 4, 6 (added day −4) = 3 → 75; lags 4, 15, 18 → 15.0.
    expect(await get('/v1/analytics/conversions?period=30d')).toMatchObject({ period: '30d', ordersInfluenced: 4, linesInfluenced: 5, wishlistToPurchaseRate: 75, medianDaysToPurchase: 15 })
    // 7d (days −6..0): the merge's add; item 6 bought → 100; lag 4.0. O1 (day −5) is inside.
    expect(await get('/v1/analytics/conversions?period=7d')).toMatchObject({ ordersInfluenced: 4, wishlistToPurchaseRate: 100, medianDaysToPurchase: 4 })
    const days = (await get('/v1/analytics/daily?period=7d')).days as { date: string; orders_influenced: number }[]
    expect(Object.fromEntries(days.filter((d) => d.orders_influenced > 0).map((d) => [d.date, d.orders_influenced]))).toEqual({
      [formatDay(today - 5)]: 1,
      [formatDay(today - 2)]: 1,
      [formatDay(today)]: 2,
    })
  })

  it('per product: purchases and revenue; top products by revenue in the most frequent currency', async () => {
    expect(await get('/v1/analytics/product/1')).toEqual({ wishlistCount: 1, purchases: 1, revenue: [{ currency: 'EUR', amount: '25.00' }] })
    expect(await get('/v1/analytics/product/6')).toEqual({ wishlistCount: 1, purchases: 1, revenue: [] })
    expect(await get('/v1/analytics/product/3')).toEqual({ wishlistCount: 0, purchases: 0, revenue: [] })
    // EUR has two priced influenced lines, JPY and USD one each.
    expect((await get('/v1/analytics/top-products?sort=revenue')).products).toEqual([
      expect.objectContaining({ productId: '1', wishlistCount: 1, purchases: 1, revenue: [{ currency: 'EUR', amount: '25.00' }] }),
      expect.objectContaining({ productId: '8', wishlistCount: 1, purchases: 1, revenue: [{ currency: 'EUR', amount: '0.38' }] }),
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
    const res = await t.call('POST', '/v1/events', { token, body: { events: [{ type: 'order.created', order_id: '7001', customer_id: '201', currency: 'EUR', line_items: [{ product_id: '50', price: '30.00' }] }] } })
    expect(res.status).toBe(200)
    expect((await t.call('GET', '/v1/wishlists/201', { token })).body.data.items).toEqual([])
    const outbox = await t.storage.db.selectFrom('outbox').select(['event', 'payload']).where('shop_id', '=', s.id).orderBy('event').execute()
    expect(outbox.map((r) => [r.event, JSON.parse(r.payload)])).toEqual([
      ['wishlist.item.purchased', { customerId: '201', wishlistId: 'default', productId: '50', variantId: null, orderId: '7001', quantity: 1, purchasedAt: iso(NOW) }],
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
    })
  })
})
