import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DAY_MS } from '../../src/lib/time.js'
import { dayOf, formatDay } from '../../src/modules/analytics/analytics.periods.js'
import { applySteps, type Step } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

// Day k is today − k (UTC); start(k) is its first millisecond.
const today = dayOf(Date.now())
const start = (k: number) => (today - k) * DAY_MS
const noon = (k: number) => start(k) + 12 * 3_600_000
const date = (k: number) => formatDay(today - k)

const c1 = { type: 'customer' as const, id: '101' }
const c2 = { type: 'customer' as const, id: '102' }
const g1 = { type: 'guest' as const, id: 'guest_aaaa1111' }
const P1 = '1001'
const P2 = '1002'
const P3 = '1003'

const get = async (url: string) => {
  const res = await t.call('GET', url, { token: admin })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data
}

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('starter')
  admin = await shop.adminToken()
  const steps: Step[] = [
    { type: 'add', owner: c1, productId: P1, at: noon(40) },
    { type: 'add', owner: c2, productId: P2, at: noon(10) },
    { type: 'add', owner: c2, productId: P3, at: noon(8), list: 'wl_b' },
    // The last millisecond of day −7: outside `7d` (today and the 6 days before).
    { type: 'add', owner: c2, productId: P3, at: start(6) - 1 },
    // The first millisecond of day −6: inside `7d`.
    { type: 'add', owner: g1, productId: P1, at: start(6) },
    { type: 'share', owner: g1, productId: '', at: start(6) + 1 },
    // c1 puts P2 in the cart before wishlisting it: that add is never "later added to cart".
    { type: 'cart_add', owner: c1, productId: P2, at: noon(3) },
    { type: 'add', owner: c1, productId: P2, at: noon(2) },
    // c2 carts P2, wishlisted on day −10: converts that add (attributed to day −10).
    { type: 'cart_add', owner: c2, productId: P2, at: noon(1) },
    // c1 removes P1 today, added on day −40 (before every short period).
    { type: 'remove', owner: c1, productId: P1, at: start(0) + 1 },
  ]
  // One transaction per fact, as the wishlist module would write them.
  for (const s of steps) await applySteps(t.storage.db, shop.id, [s])
})
afterAll(() => t.close())

describe('GET /v1/analytics/overview', () => {
  it('7d: the day boundary, a remove of an item added before the period, a cart add before the add', async () => {
    // Days −6..0: adds on −6 (g1 P1) and −2 (c1 P2), the remove today → 2 − 1 = 1.
    // Active: g1 (−6), c1 (−2, 0); c2's last event is on day −7 → 2. Converted adds: none.
    expect(await get('/v1/analytics/overview?period=7d')).toEqual({ totalWishlistedItems: 1, activeShoppers: 2, wishlistToCartRate: 0 })
  })

  it('14d and the default 30d: the converted add counts on its own day', async () => {
    // Adds on −10, −8, −7, −6, −2 = 5, one remove → 4; c1, c2, g1 → 3; 1 of 5 converted → 20.
    const expected = { totalWishlistedItems: 4, activeShoppers: 3, wishlistToCartRate: 20 }
    expect(await get('/v1/analytics/overview?period=14d')).toEqual(expected)
    expect(await get('/v1/analytics/overview?period=30d')).toEqual(expected)
    expect(await get('/v1/analytics/overview')).toEqual(expected)
  })

  it('90d, 1y and all include day −40', async () => {
    // 6 adds − 1 remove = 5; 3 shoppers; 1 / 6 = 16.666… → 16.67.
    const expected = { totalWishlistedItems: 5, activeShoppers: 3, wishlistToCartRate: 16.67 }
    for (const p of ['90d', '1y', 'all']) expect(await get(`/v1/analytics/overview?period=${p}`)).toEqual(expected)
  })

  it('answers zeros for a shop without events', async () => {
    const empty = await t.createShop('free')
    const res = await t.call('GET', '/v1/analytics/overview?period=all', { token: await empty.adminToken() })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, data: { totalWishlistedItems: 0, activeShoppers: 0, wishlistToCartRate: 0 } })
  })

  it('rejects an unknown period', async () => {
    for (const p of ['5d', '1Y', '', '365d', '30']) {
      const res = await t.call('GET', `/v1/analytics/overview?period=${p}`, { token: admin })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
  })
})

describe('GET /v1/analytics/daily', () => {
  it('7d: one entry per day, zero days included, cumulative from all-time history', async () => {
    const { days } = await get('/v1/analytics/daily?period=7d')
    // All-time net before day −6: adds on −40, −10, −8, −7 = 4.
    const row = (k: number, items_added: number, items_removed: number, unique_shoppers: number, cumulative_total: number) => ({
      date: date(k),
      period: date(k),
      items_added,
      items_removed,
      unique_shoppers,
      cumulative_total,
      orders_influenced: 0,
    })
    expect(days).toEqual([
      row(6, 1, 0, 1, 5),
      row(5, 0, 0, 0, 5),
      row(4, 0, 0, 0, 5),
      row(3, 0, 0, 0, 5),
      row(2, 1, 0, 1, 6),
      row(1, 0, 0, 0, 6),
      row(0, 0, 1, 1, 5),
    ])
  })

  it('defaults to 30d; all starts on the first event day', async () => {
    expect((await get('/v1/analytics/daily')).days).toHaveLength(30)
    expect((await get('/v1/analytics/daily?period=90d')).days).toHaveLength(90)
    expect((await get('/v1/analytics/daily?period=1y')).days).toHaveLength(365)
    const { days } = await get('/v1/analytics/daily?period=all')
    expect(days).toHaveLength(41)
    expect(days[0]).toEqual({
      date: date(40),
      period: date(40),
      items_added: 1,
      items_removed: 0,
      unique_shoppers: 1,
      cumulative_total: 1,
      orders_influenced: 0,
    })
    // Day −7 holds c2's boundary add (c2 once, although two events that week were c2's).
    expect(days[33]).toEqual({
      date: date(7),
      period: date(7),
      items_added: 1,
      items_removed: 0,
      unique_shoppers: 1,
      cumulative_total: 4,
      orders_influenced: 0,
    })
    expect(days[40]).toMatchObject({ date: date(0), cumulative_total: 5, orders_influenced: 0 })
  })

  it('starts `all` at the first wishlist event: a cart add dated by the platform, however old, does not stretch it', async () => {
    const s = await t.createShop('starter')
    const token = await s.adminToken()
    const cart = await t.call('POST', '/v1/events', {
      token,
      body: { events: [{ type: 'cart.item_added', customer_id: '5', product_id: '9', occurred_at: '0001-01-01T00:00:00Z' }] },
    })
    expect(cart.body).toEqual({ ok: true, data: { accepted: 1 } })
    expect((await t.call('GET', '/v1/analytics/daily?period=all', { token })).body.data.days).toEqual([])
    expect((await t.call('POST', '/v1/wishlists/5/items', { token, body: { product_id: '9' } })).status).toBe(201)
    const { days } = (await t.call('GET', '/v1/analytics/daily?period=all', { token })).body.data
    expect(days).toEqual([
      { date: date(0), period: date(0), items_added: 1, items_removed: 0, unique_shoppers: 1, cumulative_total: 1, orders_influenced: 0 },
    ])
  })

  it('answers an empty series for `all` on a shop without events, and 400 for an unknown period', async () => {
    const empty = await t.createShop('free')
    const token = await empty.adminToken()
    expect((await t.call('GET', '/v1/analytics/daily?period=all', { token })).body.data.days).toEqual([])
    expect((await t.call('GET', '/v1/analytics/daily?period=7d', { token })).body.data.days).toHaveLength(7)
    const bad = await t.call('GET', '/v1/analytics/daily?period=2w', { token })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('VALIDATION_ERROR')
  })
})

describe('GET /v1/analytics/top-products and product/{id}', () => {
  it('counts distinct owners holding a product now, ties by productId', async () => {
    // P1: c1 removed it, g1 holds it → 1. P2: c1 and c2 → 2. P3: c2 in two lists → 1.
    expect(await get('/v1/analytics/top-products')).toEqual({
      products: [
        { productId: P2, wishlistCount: 2, purchases: 0, revenue: [], title: null, handle: null },
        { productId: P1, wishlistCount: 1, purchases: 0, revenue: [], title: null, handle: null },
        { productId: P3, wishlistCount: 1, purchases: 0, revenue: [], title: null, handle: null },
      ],
    })
    expect(await get('/v1/analytics/top-products?limit=1')).toEqual({
      products: [{ productId: P2, wishlistCount: 2, purchases: 0, revenue: [], title: null, handle: null }],
    })
    expect(await get(`/v1/analytics/product/${P2}`)).toEqual({ wishlistCount: 2, purchases: 0, revenue: [] })
    expect(await get(`/v1/analytics/product/${encodeURIComponent(`gid://shopify/Product/${P3}`)}`)).toEqual({
      wishlistCount: 1,
      purchases: 0,
      revenue: [],
    })
    expect(await get('/v1/analytics/product/999999')).toEqual({ wishlistCount: 0, purchases: 0, revenue: [] })
  })

  it('keeps an owner holding a product in another list, drops it when the last copy goes', async () => {
    const other = await t.createShop('growth')
    const token = await other.adminToken()
    const owner = { type: 'customer' as const, id: '555' }
    const at = start(0)
    await applySteps(t.storage.db, other.id, [
      { type: 'add', owner, productId: '7', at, list: 'default' },
      { type: 'add', owner, productId: '7', at, list: 'wl_x' },
    ])
    const count = async () => (await t.call('GET', '/v1/analytics/product/7', { token })).body.data.wishlistCount
    expect(await count()).toBe(1)
    await applySteps(t.storage.db, other.id, [{ type: 'remove', owner, productId: '7', at, list: 'wl_x' }])
    expect(await count()).toBe(1)
    await applySteps(t.storage.db, other.id, [{ type: 'remove', owner, productId: '7', at, list: 'default' }])
    expect(await count()).toBe(0)
    expect((await t.call('GET', '/v1/analytics/top-products', { token })).body.data.products).toEqual([])
  })

  it("names each product with the catalog's title and handle (null while unknown; a later update without them keeps them)", async () => {
    const other = await t.createShop('growth')
    const token = await other.adminToken()
    const owner = { type: 'customer' as const, id: '556' }
    await applySteps(t.storage.db, other.id, [
      { type: 'add', owner, productId: '71', at: start(0), list: 'default' },
      { type: 'add', owner, productId: '72', at: start(0), list: 'default' },
    ])
    const variants = [{ variant_id: '7101', price: '39.00', inventory_quantity: 4 }]
    const sent = await t.call('POST', '/v1/events', {
      token,
      body: { events: [{ type: 'product.updated', product_id: '71', handle: 'canvas-tote', title: 'Canvas tote', variants }] },
    })
    expect(sent.status).toBe(200)
    // An update without title or handle keeps what the catalog knew.
    await t.call('POST', '/v1/events', { token, body: { events: [{ type: 'product.updated', product_id: '71', variants }] } })
    const products = (await t.call('GET', '/v1/analytics/top-products', { token })).body.data.products
    expect(products).toEqual([
      { productId: '71', wishlistCount: 1, purchases: 0, revenue: [], title: 'Canvas tote', handle: 'canvas-tote' },
      { productId: '72', wishlistCount: 1, purchases: 0, revenue: [], title: null, handle: null },
    ])
    // Another shop's catalog never names this shop's products.
    const third = await t.createShop('growth')
    await applySteps(t.storage.db, third.id, [{ type: 'add', owner, productId: '71', at: start(0), list: 'default' }])
    expect((await t.call('GET', '/v1/analytics/top-products', { token: await third.adminToken() })).body.data.products).toEqual([
      { productId: '71', wishlistCount: 1, purchases: 0, revenue: [], title: null, handle: null },
    ])
  })

  it('validates limit and the product id', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'limit=2.5', 'limit=-1']) {
      const res = await t.call('GET', `/v1/analytics/top-products?${q}`, { token: admin })
      expect(res.status, q).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect((await t.call('GET', '/v1/analytics/top-products?limit=100', { token: admin })).status).toBe(200)
    const bad = await t.call('GET', '/v1/analytics/product/abc', { token: admin })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('VALIDATION_ERROR')
  })
})

describe('a guest merged into a customer (as the wishlist module records it)', () => {
  it('counts both owners as shoppers, moves the holding, and converts only the customer add', async () => {
    const s = await t.createShop('growth')
    const token = await s.adminToken()
    const guest = { type: 'guest' as const, id: 'g_merge_0001' }
    const customer = { type: 'customer' as const, id: '900' }
    await applySteps(t.storage.db, s.id, [{ type: 'add', owner: guest, productId: '42', at: noon(3) }])
    // Merge (one transaction): the customer gains the item, the guest list is deleted.
    await applySteps(t.storage.db, s.id, [
      { type: 'add', owner: customer, productId: '42', at: noon(1) },
      { type: 'remove', owner: guest, productId: '42', at: noon(1) },
    ])
    await applySteps(t.storage.db, s.id, [{ type: 'cart_add', owner: customer, productId: '42', at: noon(1) + 5 }])
    // Adds 2 − removes 1 = 1; guest and customer are two owners; 1 of 2 adds converted → 50.
    expect((await t.call('GET', '/v1/analytics/overview?period=7d', { token })).body.data).toEqual({
      totalWishlistedItems: 1,
      activeShoppers: 2,
      wishlistToCartRate: 50,
    })
    expect((await t.call('GET', '/v1/analytics/product/42', { token })).body.data).toEqual({ wishlistCount: 1, purchases: 0, revenue: [] })
  })
})

describe('access', () => {
  const urls = ['/v1/analytics/overview', '/v1/analytics/top-products', '/v1/analytics/product/1', '/v1/analytics/daily']

  it('needs an admin token', async () => {
    const customer = await shop.customerToken('101')
    for (const url of urls) {
      expect((await t.call('GET', url)).status).toBe(401)
      const asCustomer = await t.call('GET', url, { token: customer })
      expect(asCustomer.status).toBe(403)
      expect(asCustomer.body.error.code).toBe('FORBIDDEN')
      expect((await t.call('GET', url, { headers: shop.guest('guest_aaaa1111') })).status).toBe(403)
      expect((await t.call('GET', url, { headers: { 'x-storefront-key': shop.storefrontKey } })).status).toBe(403)
    }
  })

  it('never shows another shop’s figures', async () => {
    const other = await t.createShop('scale')
    const token = await other.adminToken()
    expect((await t.call('GET', '/v1/analytics/overview?period=all', { token })).body.data.activeShoppers).toBe(0)
    expect((await t.call('GET', `/v1/analytics/product/${P2}`, { token })).body.data.wishlistCount).toBe(0)
  })
})
