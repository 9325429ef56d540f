/**
 * Analytics fed by the real wishlist API (adds, removes, lists, a guest merged into a
 * customer). Cart adds are recorded through recordFacts directly, as the events intake
 * (`POST /v1/events`, cart.item_added) records them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFactsApplier } from '../../src/modules/analytics/facts-applier.js'
import { applyPendingFacts, recordFacts } from '../../src/modules/analytics/facts.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('growth', { multi_wishlist_enabled: true })
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const cartAdd = (ownerType: 'customer' | 'guest', ownerId: string, productId: string) =>
  t.storage.db
    .transaction()
    .execute((trx) => recordFacts(trx, shop.id, [{ type: 'cart_add', ownerType, ownerId, productId, occurredAt: Date.now() }]))

const overview = async (period = '7d') => (await t.call('GET', `/v1/analytics/overview?period=${period}`, { token: admin })).body.data
const holders = async (productId: string) =>
  (await t.call('GET', `/v1/analytics/product/${productId}`, { token: admin })).body.data.wishlistCount

describe('analytics through the wishlist API', () => {
  it('follows adds, removes, a second list, a guest merge and cart adds', async () => {
    const alice = await shop.customerToken('201')
    const guestHeaders = shop.guest('g_e2e_guest_01')

    // A cart add before the wishlist add: must not count as a conversion.
    await cartAdd('customer', '201', '11')
    expect((await t.call('POST', '/v1/wishlists/201/items', { token: alice, body: { product_id: '11' } })).status).toBe(201)
    expect(
      (await t.call('POST', '/v1/wishlists/201/items', { token: alice, body: { product_id: 'gid://shopify/Product/12' } })).status,
    ).toBe(201)
    // The same add again changes nothing (no new item, no fact).
    expect((await t.call('POST', '/v1/wishlists/201/items', { token: alice, body: { product_id: '12' } })).status).toBe(200)

    // Product 12 in a second list too: still one holder.
    const list = await t.call('POST', '/v1/wishlists/201/lists', { token: alice, body: { name: 'Birthday' } })
    expect(list.status).toBe(201)
    const listId = list.body.data.wishlist.wishlistId as string
    expect(
      (await t.call('POST', `/v1/wishlists/201/items?wishlist_id=${listId}`, { token: alice, body: { product_id: '12' } })).status,
    ).toBe(201)
    expect(await holders('12')).toBe(1)

    // A guest wishlists 12 and 13, then logs in as customer 202: merge with guest_id.
    for (const p of ['12', '13'])
      expect((await t.call('POST', '/v1/wishlists/g_e2e_guest_01/items', { headers: guestHeaders, body: { product_id: p } })).status).toBe(
        201,
      )
    expect(await holders('12')).toBe(2)
    const merged = await t.call('POST', '/v1/wishlists/202/merge', { token: admin, body: { guest_id: 'g_e2e_guest_01', guest_items: [] } })
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(merged.body.data.merged_count).toBe(2)
    // The guest's holdings moved to the customer: still 2 holders of 12, 1 of 13.
    expect(await holders('12')).toBe(2)
    expect(await holders('13')).toBe(1)

    // Alice removes 12 from the second list (still holds it), then 11 for good.
    expect((await t.call('DELETE', `/v1/wishlists/201/items/12?wishlist_id=${listId}`, { token: alice })).body.data.removed).toBe(true)
    expect(await holders('12')).toBe(2)
    expect((await t.call('DELETE', '/v1/wishlists/201/items/11', { token: alice })).body.data.removed).toBe(true)
    expect(await holders('11')).toBe(0)

    // Customer 202 puts 13 in the cart: converts the customer's add, not the guest's.
    await cartAdd('customer', '202', '13')

    // Adds: alice 11, 12, 12 (list) = 3; guest 12, 13 = 2; merge 12, 13 = 2 → 7.
    // Removes: guest 12, 13 (merge) = 2; alice 12 (list), 11 = 2 → 4. Net 3.
    // Shoppers: alice, the guest, customer 202 → 3. Converted: 202's add of 13 → 1 of 7 = 14.29.
    expect(await overview()).toEqual({ totalWishlistedItems: 3, activeShoppers: 3, wishlistToCartRate: 14.29 })
    const { days } = (await t.call('GET', '/v1/analytics/daily?period=7d', { token: admin })).body.data
    expect(days).toHaveLength(7)
    expect(days[6]).toMatchObject({ items_added: 7, items_removed: 4, unique_shoppers: 3, cumulative_total: 3 })
    expect((await t.call('GET', '/v1/analytics/top-products', { token: admin })).body.data.products).toEqual([
      { productId: '12', wishlistCount: 2, purchases: 0, revenue: [], title: null, handle: null },
      { productId: '13', wishlistCount: 1, purchases: 0, revenue: [], title: null, handle: null },
    ])
  })

  it('counts a deleted list’s items as removes and keeps holders right', async () => {
    const bob = await shop.customerToken('301')
    const list = await t.call('POST', '/v1/wishlists/301/lists', { token: bob, body: { name: 'Later' } })
    const listId = list.body.data.wishlist.wishlistId as string
    expect((await t.call('POST', '/v1/wishlists/301/items', { token: bob, body: { product_id: '40' } })).status).toBe(201)
    expect((await t.call('POST', `/v1/wishlists/301/items?wishlist_id=${listId}`, { token: bob, body: { product_id: '40' } })).status).toBe(
      201,
    )
    expect((await t.call('POST', `/v1/wishlists/301/items?wishlist_id=${listId}`, { token: bob, body: { product_id: '41' } })).status).toBe(
      201,
    )
    const before = await overview()
    expect((await t.call('DELETE', `/v1/wishlists/301/lists/${listId}`, { token: bob })).status).toBe(200)
    const after = await overview()
    expect(after.totalWishlistedItems).toBe(before.totalWishlistedItems - 2)
    expect(await holders('40')).toBe(1)
    expect(await holders('41')).toBe(0)
  })
})

describe('the analytics inbox', () => {
  const pending = async (shopId: string) =>
    (await t.storage.db.selectFrom('analytics_inbox').select('id').where('shop_id', '=', shopId).execute()).length
  const logged = async (shopId: string) =>
    (await t.storage.db.selectFrom('analytics_events').select('id').where('shop_id', '=', shopId).execute()).length
  const dailyAdds = async (shopId: string) =>
    (await t.storage.db.selectFrom('analytics_daily').select('adds').where('shop_id', '=', shopId).execute()).reduce(
      (n, r) => n + r.adds,
      0,
    )
  const addItems = async (s: TestShop, customer: string, products: string[]) => {
    const token = await s.customerToken(customer)
    for (const p of products)
      expect((await t.call('POST', `/v1/wishlists/${customer}/items`, { token, body: { product_id: p } })).status).toBe(201)
  }

  it('holds a write’s facts until they are applied, and the next analytics read applies them', async () => {
    const s = await t.createShop('growth')
    await addItems(s, '501', ['1', '2', '3'])
    expect(await pending(s.id)).toBe(3)
    expect(await logged(s.id)).toBe(0)
    const token = await s.adminToken()
    expect((await t.call('GET', '/v1/analytics/overview?period=7d', { token })).body.data.totalWishlistedItems).toBe(3)
    expect(await pending(s.id)).toBe(0)
    expect(await logged(s.id)).toBe(3)
  })

  it('applies each fact once when several appliers run at the same time', async () => {
    const s = await t.createShop('growth')
    const products = Array.from({ length: 40 }, (_, i) => String(1000 + i))
    await addItems(s, '502', products)
    const applier = createFactsApplier({ db: t.storage.db, intervalMs: 1000 })
    const applied = await Promise.all([
      applyPendingFacts(t.storage.db, s.id),
      applyPendingFacts(t.storage.db, s.id, { wait: false }),
      applier.runOnce(),
      applyPendingFacts(t.storage.db, s.id),
    ])
    expect(applied.reduce((a, b) => a + b, 0)).toBe(40)
    expect(await logged(s.id)).toBe(40)
    expect(await dailyAdds(s.id)).toBe(40)
    expect(await pending(s.id)).toBe(0)
  })

  it('the background applier drains every shop’s inbox without a read', async () => {
    const shops = [await t.createShop('growth'), await t.createShop('growth')]
    for (const [i, s] of shops.entries()) await addItems(s, '503', ['7', String(8 + i)])
    const applier = createFactsApplier({ db: t.storage.db, intervalMs: 10 })
    expect(await applier.runOnce()).toBe(4) // one pass of the background applier
    for (const s of shops) {
      expect(await pending(s.id)).toBe(0)
      expect(await dailyAdds(s.id)).toBe(2)
    }
  })
})
