import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('growth', { multi_wishlist_enabled: true })
  await shop.subscribe()
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const add = (customer: string, productId: string, query = '') =>
  t.call('POST', `/v1/wishlists/${customer}/items${query}`, { token: admin, body: { product_id: productId } })

/** Fills a customer's default list through the import API, in calls of at most 500. */
async function fill(customer: string, count: number, firstProduct = 1_000_000): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    const items = Array.from({ length: Math.min(500, count - start) }, (_, i) => ({
      customer_id: customer,
      product_id: String(firstProduct + start + i),
    }))
    const res = await t.call('POST', '/v1/wishlists/import', { token: admin, body: { items } })
    expect(res.status).toBe(200)
  }
}

async function stored(customer: string, ownerType: 'customer' | 'guest' = 'customer') {
  const owner = await t.storage.db
    .selectFrom('wishlist_owners')
    .select('item_count')
    .where('shop_id', '=', shop.id)
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', customer)
    .executeTakeFirst()
  const rows = await t.storage.db
    .selectFrom('wishlist_items')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('shop_id', '=', shop.id)
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', customer)
    .executeTakeFirstOrThrow()
  return { itemCount: owner?.item_count, rows: Number(rows.n) }
}

describe('item limit (2,500 across lists)', () => {
  it('refuses the 2,501st item across lists with ITEM_LIMIT, but still updates present items', async () => {
    const c = '900001'
    await fill(c, 2_499)
    const list = await t.call('POST', `/v1/wishlists/${c}/lists`, { token: admin, body: { name: 'Gifts' } })
    const gifts = list.body.data.wishlist.wishlistId
    expect((await add(c, '1', `?wishlist_id=${gifts}`)).status).toBe(201)
    const over = await add(c, '2')
    expect(over.status).toBe(400)
    expect(over.body.error.code).toBe('ITEM_LIMIT')
    const overOther = await add(c, '2', `?wishlist_id=${gifts}`)
    expect(overOther.body.error.code).toBe('ITEM_LIMIT')
    expect((await add(c, '1', `?wishlist_id=${gifts}`)).status).toBe(200)
    expect(await stored(c)).toEqual({ itemCount: 2_500, rows: 2_500 })
    // Room again after a removal.
    expect((await t.call('DELETE', `/v1/wishlists/${c}/items/1?wishlist_id=${gifts}`, { token: admin })).body.data.removed).toBe(true)
    expect((await add(c, '2')).status).toBe(201)
  })

  it('20 parallel adds of different products never pass the limit and never lose an item', async () => {
    const c = '900002'
    await fill(c, 2_490)
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => add(c, String(500 + i))))
    const created = results.filter((r) => r.status === 201)
    const refused = results.filter((r) => r.status === 400)
    expect(created).toHaveLength(10)
    expect(refused).toHaveLength(10)
    for (const r of refused) expect(r.body.error.code).toBe('ITEM_LIMIT')
    expect(await stored(c)).toEqual({ itemCount: 2_500, rows: 2_500 })
    const page = await t.call('GET', `/v1/wishlists/${c}?limit=20`, { token: admin })
    const ids = new Set(page.body.data.items.map((i: { productId: string }) => i.productId))
    for (const r of created) expect(ids.has(r.body.data.item.productId)).toBe(true)
  })

  it('20 parallel adds below the limit all land and keep item_count exact', async () => {
    const c = '900003'
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => add(c, String(700 + i))))
    expect(results.every((r) => r.status === 201)).toBe(true)
    expect(await stored(c)).toEqual({ itemCount: 20, rows: 20 })
  })
})

describe('POST /v1/wishlists/{customerId}/merge', () => {
  it('merges guest items deduplicated, keeps present products as they are, and returns the whole list', async () => {
    const c = '910001'
    await t.call('POST', `/v1/wishlists/${c}/items`, { token: admin, body: { product_id: '1', handle: 'kept', metadata: { a: 1 } } })
    const res = await t.call('POST', `/v1/wishlists/${c}/merge`, {
      token: admin,
      body: {
        guest_items: [
          { product_id: '1', handle: 'ignored', added_at: '2025-01-01T00:00:00.000Z' },
          { product_id: '2', handle: 'two', added_at: '2025-02-01T00:00:00.123Z' },
          { product_id: 'gid://shopify/Product/2' },
          { product_id: '3' },
        ],
      },
    })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ merged_count: 2, skipped_count: 0, count: 3 })
    const byId = Object.fromEntries(res.body.data.items.map((i: { productId: string }) => [i.productId, i]))
    expect(byId['1']).toMatchObject({ handle: 'kept', metadata: { a: 1 } })
    expect(byId['2']).toEqual({
      productId: '2',
      variantId: null,
      handle: 'two',
      addedAt: '2025-02-01T00:00:00.123Z',
      quantity: 1,
      note: null,
      priority: 'normal',
      purchasedAt: null,
    })
    expect(res.body.data.items.map((i: { productId: string }) => i.productId)).toEqual(['3', '1', '2'])
    // Merged handles allow delete by handle.
    expect((await t.call('DELETE', `/v1/wishlists/${c}/items/two?by=handle`, { token: admin })).body.data.removed).toBe(true)
  })

  it('is safe to retry: a retried merge adds nothing and emits nothing new', async () => {
    const c = '910002'
    const body = { guest_items: [{ product_id: '5' }, { product_id: '6' }] }
    const first = await t.call('POST', `/v1/wishlists/${c}/merge`, { token: admin, body })
    const second = await t.call('POST', `/v1/wishlists/${c}/merge`, { token: admin, body })
    expect(first.body.data.merged_count).toBe(2)
    expect(second.body.data).toMatchObject({ merged_count: 0, count: 2 })
    const events = await t.storage.db
      .selectFrom('outbox')
      .select('payload')
      .where('shop_id', '=', shop.id)
      .where('event', '=', 'wishlist.item.added')
      .execute()
    expect(
      events
        .map((e) => JSON.parse(e.payload))
        .filter((p) => p.customerId === c)
        .map((p) => p.productId)
        .sort(),
    ).toEqual(['5', '6'])
  })

  it('merges the stored wishlist of guest_id too, then deletes it', async () => {
    const c = '910003'
    const guest = shop.guest('g_merge_guest_1')
    for (const p of ['7', '8']) await t.call('POST', '/v1/wishlists/me/items', { headers: guest, body: { product_id: p, handle: `h${p}` } })
    const res = await t.call('POST', `/v1/wishlists/${c}/merge`, {
      token: admin,
      body: { guest_items: [{ product_id: '9' }], guest_id: 'g_merge_guest_1' },
    })
    expect(res.body.data).toMatchObject({ merged_count: 3, count: 3 })
    expect(res.body.data.items.find((i: { productId: string }) => i.productId === '7')).toMatchObject({ handle: 'h7' })
    expect(await stored('g_merge_guest_1', 'guest')).toEqual({ itemCount: undefined, rows: 0 })
    expect((await t.call('GET', '/v1/wishlists/me', { headers: guest })).body.data.total).toBe(0)
  })

  it('keeps the variant a guest chose: a missing variant_id never erases a known one', async () => {
    const c = '910010'
    const guest = shop.guest('g_merge_variant_1')
    // The stored guest list knows the variant of 21; the browser's kept items know 22's.
    await t.call('POST', '/v1/wishlists/me/items', { headers: guest, body: { product_id: '21', variant_id: '2101' } })
    await t.call('POST', '/v1/wishlists/me/items', { headers: guest, body: { product_id: '22' } })
    const res = await t.call('POST', `/v1/wishlists/${c}/merge`, {
      token: admin,
      body: {
        guest_items: [
          { product_id: '21', handle: 'twenty-one' },
          { product_id: '22', variant_id: 'gid://shopify/ProductVariant/2202' },
          { product_id: '23' },
          { product_id: '23', variant_id: '2303' },
        ],
        guest_id: 'g_merge_variant_1',
      },
    })
    expect(res.status).toBe(200)
    const byId = Object.fromEntries(res.body.data.items.map((i: { productId: string }) => [i.productId, i]))
    expect(byId['21']).toMatchObject({ variantId: '2101', handle: 'twenty-one' })
    expect(byId['22']).toMatchObject({ variantId: '2202' })
    expect(byId['23']).toMatchObject({ variantId: '2303' })
    // What a later read shows, and what the item-added events carried.
    const read = await t.call('GET', `/v1/wishlists/${c}`, { token: admin })
    expect(
      Object.fromEntries(read.body.data.items.map((i: { productId: string; variantId: string }) => [i.productId, i.variantId])),
    ).toEqual({ '21': '2101', '22': '2202', '23': '2303' })
    const events = await t.storage.db
      .selectFrom('outbox')
      .select('payload')
      .where('shop_id', '=', shop.id)
      .where('event', '=', 'wishlist.item.added')
      .execute()
    const added = events.map((e) => JSON.parse(e.payload)).filter((p) => p.customerId === c)
    expect(Object.fromEntries(added.map((p) => [p.productId, p.variantId]))).toEqual({ '21': '2101', '22': '2202', '23': '2303' })
  })

  it('refuses a guest item variant_id that is not an id', async () => {
    const res = await t.call('POST', '/v1/wishlists/910011/merge', {
      token: admin,
      body: { guest_items: [{ product_id: '1', variant_id: 'large' }] },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
  })

  it('skips new items beyond the item limit and counts them', async () => {
    const c = '910004'
    await fill(c, 2_498)
    const res = await t.call('POST', `/v1/wishlists/${c}/merge`, {
      token: admin,
      body: { guest_items: ['11', '12', '13', '1000000'].map((p) => ({ product_id: p })) },
    })
    expect(res.body.data).toMatchObject({ merged_count: 2, skipped_count: 1, count: 2_500 })
    expect(await stored(c)).toEqual({ itemCount: 2_500, rows: 2_500 })
  })

  it('merges into wishlist_id when given, the default list otherwise', async () => {
    const c = '910005'
    const list = await t.call('POST', `/v1/wishlists/${c}/lists`, { token: admin, body: { name: 'Later' } })
    const id = list.body.data.wishlist.wishlistId
    const res = await t.call('POST', `/v1/wishlists/${c}/merge?wishlist_id=${id}`, {
      token: admin,
      body: { guest_items: [{ product_id: '21' }] },
    })
    expect(res.body.data.count).toBe(1)
    expect((await t.call('GET', `/v1/wishlists/${c}`, { token: admin })).body.data.total).toBe(0)
    expect((await t.call('GET', `/v1/wishlists/${c}?wishlist_id=${id}`, { token: admin })).body.data.total).toBe(1)
  })

  it('parallel merges of the same guest items add each product once', async () => {
    const c = '910006'
    const body = { guest_items: Array.from({ length: 10 }, (_, i) => ({ product_id: String(300 + i) })) }
    const results = await Promise.all(Array.from({ length: 6 }, () => t.call('POST', `/v1/wishlists/${c}/merge`, { token: admin, body })))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(results.reduce((n, r) => n + r.body.data.merged_count, 0)).toBe(10)
    expect(await stored(c)).toEqual({ itemCount: 10, rows: 10 })
    const added = await t.storage.db
      .selectFrom('outbox')
      .select('payload')
      .where('shop_id', '=', shop.id)
      .where('event', '=', 'wishlist.item.added')
      .execute()
    expect(added.map((e) => JSON.parse(e.payload)).filter((p) => p.customerId === c)).toHaveLength(10)
  })

  it('is for customer and admin tokens only, and validates guest items', async () => {
    const guest = await t.call('POST', '/v1/wishlists/me/merge', { headers: shop.guest('g_merge_guest_2'), body: { guest_items: [] } })
    expect(guest.status).toBe(403)
    const customer = await t.call('POST', '/v1/wishlists/me/merge', {
      token: await shop.customerToken('910007'),
      body: { guest_items: [{ product_id: '1' }] },
    })
    expect(customer.body.data.merged_count).toBe(1)
    const bad = await t.call('POST', '/v1/wishlists/910007/merge', {
      token: admin,
      body: { guest_items: [{ product_id: '1' }, { handle: 'x' }] },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.details[0]).toMatchObject({ path: 'body.guest_items.1.product_id', index: 1 })
    // Nothing to merge at all is a mistake; an empty guest_items is an explicit "nothing".
    const empty = await t.call('POST', '/v1/wishlists/910007/merge', { token: admin, body: {} })
    expect(empty.status).toBe(400)
    expect(empty.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.guest_items' }] })
  })

  it('keeps a past added_at as the item addedAt and stores a future one as now', async () => {
    const before = Date.now()
    const res = await t.call('POST', '/v1/wishlists/910008/merge', {
      token: admin,
      body: {
        guest_items: [
          { product_id: '1', added_at: '2026-01-02T03:04:05.678Z' },
          { product_id: '2', added_at: '2099-01-01T00:00:00.000Z' },
        ],
      },
    })
    const byId = Object.fromEntries(
      res.body.data.items.map((i: { productId: string; addedAt: string }) => [i.productId, Date.parse(i.addedAt)]),
    )
    expect(byId['1']).toBe(Date.parse('2026-01-02T03:04:05.678Z'))
    expect(byId['2']).toBeGreaterThanOrEqual(before)
    expect(byId['2']).toBeLessThanOrEqual(Date.now())
    const imported = await t.call('POST', '/v1/wishlists/import', {
      token: admin,
      body: { items: [{ customer_id: '910009', product_id: '3', added_at: '2099-01-01T00:00:00Z' }] },
    })
    expect(imported.body.data.imported).toBe(1)
    const page = await t.call('GET', '/v1/wishlists/910009', { token: admin })
    expect(Date.parse(page.body.data.items[0].addedAt)).toBeLessThanOrEqual(Date.now())
  })
})
