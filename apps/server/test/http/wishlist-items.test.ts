import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { loggedFacts } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('starter')
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
let nextCustomer = 5000
const newCustomer = () => String(++nextCustomer)

const add = (
  customer: string,
  body: Record<string, unknown>,
  opts: { token?: string; headers?: Record<string, string>; query?: string } = {},
) =>
  t.call('POST', `/v1/wishlists/${customer}/items${opts.query ?? ''}`, {
    token: opts.token ?? admin,
    ...(opts.headers ? { headers: opts.headers } : {}),
    body,
  })

const outbox = (shopId: string) =>
  t.storage.db.selectFrom('outbox').select(['event', 'payload']).where('shop_id', '=', shopId).orderBy('created_at').execute()

const facts = async (shopId: string, ownerId: string) =>
  (await loggedFacts(t.storage.db, shopId))
    .select(['type', 'product_id', 'owner_type'])
    .where('owner_id', '=', ownerId)
    .orderBy('id')
    .execute()

const ownerRow = (shopId: string, ownerId: string) =>
  t.storage.db
    .selectFrom('wishlist_owners')
    .select(['owner_type', 'item_count'])
    .where('shop_id', '=', shopId)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst()

describe('POST /v1/wishlists/{customerId}/items', () => {
  it('returns 201 with the item for a new product: handle and metadata only when set, the item fields always', async () => {
    const c = newCustomer()
    const res = await add(c, { product_id: '101' })
    expect(res.status).toBe(201)
    const item = {
      productId: '101',
      variantId: null,
      addedAt: expect.stringMatching(ISO_MS),
      quantity: 1,
      note: null,
      priority: 'normal',
      purchasedAt: null,
    }
    expect(res.body).toEqual({ ok: true, data: { item, count: 1 } })
    expect(Object.keys(res.body.data.item)).toEqual(['productId', 'variantId', 'addedAt', 'quantity', 'note', 'priority', 'purchasedAt'])
  })

  it('returns 200 for a present product, updating variant, handle and metadata and keeping addedAt', async () => {
    const c = newCustomer()
    const first = await add(c, { product_id: '102', handle: 'red-shoe' })
    const again = await add(c, { product_id: '102', variant_id: '9001', metadata: { size: 'M' } })
    expect(again.status).toBe(200)
    expect(again.body.data).toEqual({
      item: {
        productId: '102',
        variantId: '9001',
        handle: 'red-shoe',
        metadata: { size: 'M' },
        addedAt: first.body.data.item.addedAt,
        quantity: 1,
        note: null,
        priority: 'normal',
        purchasedAt: null,
      },
      count: 1,
    })
    const list = await t.call('GET', `/v1/wishlists/${c}`, { token: admin })
    expect(list.body.data.total).toBe(1)
  })

  it('stores platform GIDs as bare ids, in the body and in the path', async () => {
    const res = await add(encodeURIComponent('gid://shopify/Customer/7700'), {
      product_id: 'gid://shopify/Product/555',
      variant_id: 'gid://shopify/ProductVariant/556',
    })
    expect(res.status).toBe(201)
    expect(res.body.data.item).toMatchObject({ productId: '555', variantId: '556' })
    const read = await t.call('GET', '/v1/wishlists/7700', { token: admin })
    expect(read.body.data.items.map((i: { productId: string }) => i.productId)).toEqual(['555'])
  })

  it('validates product ids and metadata size', async () => {
    const c = newCustomer()
    const bad = await add(c, { product_id: 'abc' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('VALIDATION_ERROR')
    const missing = await add(c, {})
    expect(missing.body.error.details[0].path).toBe('body.product_id')
    // A platform GID must name the field's kind of object.
    const customerGid = await add(c, { product_id: 'gid://shopify/Customer/42' })
    expect(customerGid.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.product_id' }] })
    const productAsVariant = await add(c, { product_id: 'gid://shopify/Product/42', variant_id: 'gid://shopify/Product/43' })
    expect(productAsVariant.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.variant_id' }] })
    const kinds = await add(c, { product_id: 'gid://shopify/Product/42', variant_id: 'gid://shopify/ProductVariant/43' })
    expect(kinds.body.data.item).toMatchObject({ productId: '42', variantId: '43' })
    const productAsCustomer = await t.call('GET', `/v1/wishlists/${encodeURIComponent('gid://shopify/Product/111')}`, { token: admin })
    expect(productAsCustomer.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'params.customerId' }] })
    const big = await add(c, { product_id: '1', metadata: { note: 'x'.repeat(200) } })
    expect(big.status).toBe(400)
    expect(big.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.metadata' }] })
    const fits = await add(c, { product_id: '1', metadata: { n: 'x'.repeat(190) } })
    expect(fits.status).toBe(201)
    // 200 characters are code points: {"n":"…"} around 192 emoji is 200 of them (392 UTF-16 units).
    expect((await add(c, { product_id: '3', metadata: { n: '🎁'.repeat(192) } })).status).toBe(201)
    expect((await add(c, { product_id: '4', metadata: { n: '🎁'.repeat(193) } })).status).toBe(400)
    const notObject = await add(c, { product_id: '2', metadata: ['a'] })
    expect(notObject.status).toBe(400)
  })

  it('emits wishlist.item.added and records an analytics add for new items only', async () => {
    const s = await t.createShop('starter')
    await s.subscribe()
    const token = await s.adminToken()
    await add('42', { product_id: '7', variant_id: '70' }, { token })
    await add('42', { product_id: '7' }, { token })
    const events = await outbox(s.id)
    expect(events).toHaveLength(1)
    expect(events[0]!.event).toBe('wishlist.item.added')
    expect(JSON.parse(events[0]!.payload)).toMatchObject({ customerId: '42', productId: '7', variantId: '70' })
    expect(await facts(s.id, '42')).toEqual([{ type: 'add', product_id: '7', owner_type: 'customer' }])
  })
})

describe('GET /v1/wishlists/{customerId}', () => {
  it('pages newest first with count, total and has_more', async () => {
    const c = newCustomer()
    // Each add 2 ms after the one before: vitest's fake Date moves, nothing waits.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      for (const p of ['1', '2', '3', '4', '5']) {
        await add(c, { product_id: p })
        vi.advanceTimersByTime(2)
      }
    } finally {
      vi.useRealTimers()
    }
    const page1 = await t.call('GET', `/v1/wishlists/${c}?limit=2`, { token: admin })
    expect(page1.status).toBe(200)
    expect(page1.body.data.items.map((i: { productId: string }) => i.productId)).toEqual(['5', '4'])
    expect(page1.body.data).toMatchObject({ count: 2, total: 5, has_more: true })
    const page3 = await t.call('GET', `/v1/wishlists/${c}?limit=2&offset=4`, { token: admin })
    expect(page3.body.data).toMatchObject({ items: [{ productId: '1' }], count: 1, total: 5, has_more: false })
    const past = await t.call('GET', `/v1/wishlists/${c}?offset=10`, { token: admin })
    expect(past.body.data).toEqual({ items: [], count: 0, total: 5, has_more: false })
  })

  it('defaults to 50 per page and rejects out-of-range limits', async () => {
    const c = newCustomer()
    const empty = await t.call('GET', `/v1/wishlists/${c}`, { token: admin })
    expect(empty.body).toEqual({ ok: true, data: { items: [], count: 0, total: 0, has_more: false } })
    for (const q of ['limit=201', 'limit=0', 'offset=-1', 'limit=abc']) {
      const res = await t.call('GET', `/v1/wishlists/${c}?${q}`, { token: admin })
      expect(res.status, q).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect((await t.call('GET', `/v1/wishlists/${c}?limit=200`, { token: admin })).status).toBe(200)
  })

  it('breaks ties of addedAt deterministically', async () => {
    const c = newCustomer()
    const at = Date.now()
    await t.storage.db
      .insertInto('wishlist_items')
      .values(
        ['31', '33', '32'].map((p) => ({
          shop_id: shop.id,
          owner_type: 'customer' as const,
          owner_id: c,
          list_id: 'default',
          product_id: p,
          variant_id: null,
          handle: null,
          metadata: null,
          added_at: at,
        })),
      )
      .execute()
    const a = await t.call('GET', `/v1/wishlists/${c}?limit=2`, { token: admin })
    const b = await t.call('GET', `/v1/wishlists/${c}?limit=2&offset=2`, { token: admin })
    expect([...a.body.data.items, ...b.body.data.items].map((i: { productId: string }) => i.productId)).toEqual(['33', '32', '31'])
  })

  it('resolves the default variant from the catalog on read, null until the catalog knows the product', async () => {
    const c = newCustomer()
    await add(c, { product_id: '880' })
    await add(c, { product_id: '881', variant_id: '12' })
    let items = (await t.call('GET', `/v1/wishlists/${c}`, { token: admin })).body.data.items
    expect(items.find((i: { productId: string }) => i.productId === '880').variantId).toBeNull()
    await t.storage.db
      .insertInto('catalog_products')
      .values([
        { shop_id: shop.id, product_id: '880', handle: 'p880', default_variant_id: '8801', variants: '[]', updated_at: Date.now() },
        { shop_id: shop.id, product_id: '881', handle: 'p881', default_variant_id: '8811', variants: '[]', updated_at: Date.now() },
      ])
      .execute()
    items = (await t.call('GET', `/v1/wishlists/${c}`, { token: admin })).body.data.items
    expect(items.find((i: { productId: string }) => i.productId === '880').variantId).toBe('8801')
    expect(items.find((i: { productId: string }) => i.productId === '881').variantId).toBe('12')
  })
})

describe('DELETE /v1/wishlists/{customerId}/items/{productId}', () => {
  it('removes by product id, reports removed=false when absent, and emits wishlist.item.removed', async () => {
    const s = await t.createShop('starter')
    await s.subscribe()
    const token = await s.adminToken()
    await add('77', { product_id: '1' }, { token })
    await add('77', { product_id: '2' }, { token })
    const del = await t.call('DELETE', `/v1/wishlists/77/items/${encodeURIComponent('gid://shopify/Product/1')}`, { token })
    expect(del.body).toEqual({ ok: true, data: { removed: true, count: 1 } })
    const again = await t.call('DELETE', '/v1/wishlists/77/items/1', { token })
    expect(again.body).toEqual({ ok: true, data: { removed: false, count: 1 } })
    const events = await outbox(s.id)
    expect(events.map((e) => e.event)).toEqual(['wishlist.item.added', 'wishlist.item.added', 'wishlist.item.removed'])
    expect(JSON.parse(events[2]!.payload)).toMatchObject({ customerId: '77', productId: '1' })
    expect((await facts(s.id, '77')).map((f) => f.type)).toEqual(['add', 'add', 'remove'])
    expect(await ownerRow(s.id, '77')).toMatchObject({ item_count: 1 })
  })

  it('removes by handle with by=handle, only items that carry that handle', async () => {
    const c = newCustomer()
    await add(c, { product_id: '1', handle: 'blue-hat' })
    await add(c, { product_id: '2' })
    const none = await t.call('DELETE', `/v1/wishlists/${c}/items/2?by=handle`, { token: admin })
    expect(none.body.data).toEqual({ removed: false, count: 2 })
    const res = await t.call('DELETE', `/v1/wishlists/${c}/items/blue-hat?by=handle`, { token: admin })
    expect(res.body.data).toEqual({ removed: true, count: 1 })
  })

  it('removes by a handle as long as add accepts (255 characters, non-ASCII percent-encoded)', async () => {
    const c = newCustomer()
    const long = `${'h'.repeat(250)}-été!`
    expect(long).toHaveLength(255)
    await add(c, { product_id: '1', handle: long })
    const res = await t.call('DELETE', `/v1/wishlists/${c}/items/${encodeURIComponent(long)}?by=handle`, { token: admin })
    expect(res.body.data).toEqual({ removed: true, count: 0 })
    const tooLong = await t.call('DELETE', `/v1/wishlists/${c}/items/${'h'.repeat(256)}?by=handle`, { token: admin })
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.error.code).toBe('VALIDATION_ERROR')
  })

  it('rejects an unknown by and a malformed product id', async () => {
    const c = newCustomer()
    expect((await t.call('DELETE', `/v1/wishlists/${c}/items/1?by=sku`, { token: admin })).status).toBe(400)
    const bad = await t.call('DELETE', `/v1/wishlists/${c}/items/not-an-id`, { token: admin })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('VALIDATION_ERROR')
  })
})

describe('POST /v1/wishlists/{customerId}/items/bulk-delete', () => {
  it('removes product ids and handles together and counts what was really removed', async () => {
    const c = newCustomer()
    await add(c, { product_id: '1' })
    await add(c, { product_id: '2', handle: 'two' })
    await add(c, { product_id: '3' })
    const res = await t.call('POST', `/v1/wishlists/${c}/items/bulk-delete`, {
      token: admin,
      body: { product_ids: ['1', '99'], handles: ['two', 'nope'] },
    })
    expect(res.body).toEqual({ ok: true, data: { removed_count: 2, count: 1 } })
  })

  it('needs at least one non-empty array and at most 100 entries combined', async () => {
    const c = newCustomer()
    for (const body of [{}, { product_ids: [] }, { product_ids: [], handles: [] }]) {
      const res = await t.call('POST', `/v1/wishlists/${c}/items/bulk-delete`, { token: admin, body })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    const ids = Array.from({ length: 60 }, (_, i) => String(i + 1))
    const tooMany = await t.call('POST', `/v1/wishlists/${c}/items/bulk-delete`, {
      token: admin,
      body: { product_ids: ids, handles: ids.map((i) => `h${i}`) },
    })
    expect(tooMany.status).toBe(400)
    const hundred = await t.call('POST', `/v1/wishlists/${c}/items/bulk-delete`, {
      token: admin,
      body: { product_ids: ids, handles: ids.slice(0, 40).map((i) => `h${i}`) },
    })
    expect(hundred.body.data).toEqual({ removed_count: 0, count: 0 })
  })
})

describe('access', () => {
  it('lets a customer token use its own wishlist and `me`, and refuses another customer', async () => {
    const token = await shop.customerToken('gid://shopify/Customer/321')
    expect((await add('me', { product_id: '5' }, { token })).status).toBe(201)
    const own = await t.call('GET', '/v1/wishlists/321', { token })
    expect(own.body.data.items).toEqual([expect.objectContaining({ productId: '5' })])
    const other = await t.call('GET', '/v1/wishlists/322', { token })
    expect(other.status).toBe(403)
    expect(other.body.error.code).toBe('FORBIDDEN')
    expect((await t.call('GET', '/v1/wishlists/322', { token: admin })).body.data.total).toBe(0)
  })

  it('serves guests on their own id, creating the guest owner on the first write only', async () => {
    const s = await t.createShop('free')
    await s.subscribe()
    const guest = s.guest('g_guest_0001')
    const read = await t.call('GET', '/v1/wishlists/g_guest_0001', { headers: guest })
    expect(read.body.data.total).toBe(0)
    expect(await ownerRow(s.id, 'g_guest_0001')).toBeUndefined()
    const del = await t.call('DELETE', '/v1/wishlists/me/items/1', { headers: guest })
    expect(del.body.data).toEqual({ removed: false, count: 0 })
    expect(await ownerRow(s.id, 'g_guest_0001')).toBeUndefined()
    const added = await t.call('POST', '/v1/wishlists/me/items', { headers: guest, body: { product_id: '8' } })
    expect(added.status).toBe(201)
    expect(await ownerRow(s.id, 'g_guest_0001')).toEqual({ owner_type: 'guest', item_count: 1 })
    const event = (await outbox(s.id))[0]!
    expect(JSON.parse(event.payload)).toMatchObject({ customerId: null, guestId: 'g_guest_0001', productId: '8' })
    expect((await t.call('GET', '/v1/wishlists/g_other_0002', { headers: guest })).status).toBe(403)
  })

  it('keeps the headless bearer API to starter and above, guest mode on every plan', async () => {
    const s = await t.createShop('free')
    const res = await t.call('GET', '/v1/wishlists/1', { token: await s.adminToken() })
    expect(res.status).toBe(403)
    expect(res.body.error).toMatchObject({ code: 'PLAN_UPGRADE_REQUIRED', details: { required_plan: 'starter', current_plan: 'free' } })
    expect((await t.call('GET', '/v1/wishlists/g_guest_0003', { headers: s.guest('g_guest_0003') })).status).toBe(200)
  })

  it('refuses calls without credentials', async () => {
    const res = await t.call('GET', '/v1/wishlists/1')
    expect(res.status).toBe(401)
  })
})

describe('functions for other modules', () => {
  it("removeProductsForCustomer removes bought products from every list in the caller's transaction", async () => {
    const s = await t.createShop('growth', { multi_wishlist_enabled: true })
    await s.subscribe()
    const token = await s.adminToken()
    const list = (await t.call('POST', '/v1/wishlists/55/lists', { token, body: { name: 'Other' } })).body.data.wishlist.wishlistId
    await add('55', { product_id: '1' }, { token })
    await add('55', { product_id: '1' }, { token, query: `?wishlist_id=${list}` })
    await add('55', { product_id: '2' }, { token })
    const removed = await t.storage.db
      .transaction()
      .execute((trx) => t.app.services.wishlists.removeProductsForCustomer(trx, s.id, '55', ['gid://shopify/Product/1', '3']))
    expect(removed).toBe(2)
    expect(await ownerRow(s.id, '55')).toMatchObject({ item_count: 1 })
    const events = (await outbox(s.id)).filter((e) => e.event === 'wishlist.item.removed').map((e) => JSON.parse(e.payload))
    expect(events).toHaveLength(2)
    expect(events[0]).toMatchObject({ customerId: '55', productId: '1', reason: 'purchased' })
    expect((await facts(s.id, '55')).filter((f) => f.type === 'remove')).toHaveLength(2)
    expect(
      await t.storage.db.transaction().execute((trx) => t.app.services.wishlists.removeProductsForCustomer(trx, s.id, '56', ['1'])),
    ).toBe(0)
    expect(await ownerRow(s.id, '56')).toBeUndefined()
  })

  it('holdersOfProduct counts distinct owners and lists customer ids with truncation', async () => {
    const s = await t.createShop('starter')
    const token = await s.adminToken()
    for (const c of ['3', '1', '2']) await add(c, { product_id: '900' }, { token })
    await t.call('POST', '/v1/wishlists/me/items', { headers: s.guest('g_holder_0001'), body: { product_id: '900' } })
    const all = await t.app.services.wishlists.holdersOfProduct(s.id, '900')
    expect(all).toEqual({ wishlistCount: 4, customerIds: ['1', '2', '3'], truncated: false })
    expect(await t.app.services.wishlists.holdersOfProduct(s.id, '900', { limit: 2 })).toEqual({
      wishlistCount: 4,
      customerIds: ['1', '2'],
      truncated: true,
    })
    expect(await t.app.services.wishlists.holdersOfProduct(s.id, '901')).toEqual({ wishlistCount: 0, customerIds: [], truncated: false })
  })
})
