import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string
let n = 0
const newCustomer = () => String(5000 + ++n)

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('scale', { multi_wishlist_enabled: true })
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const add = (c: string, body: Record<string, unknown>, query = '') =>
  t.call('POST', `/v1/wishlists/${c}/items${query}`, { token: admin, body })
const patch = (c: string, key: string, body: Record<string, unknown>, query = '') =>
  t.call('PATCH', `/v1/wishlists/${c}/items/${key}${query}`, { token: admin, body })
const page = async (c: string, query = '') => {
  const res = await t.call('GET', `/v1/wishlists/${c}${query}`, { token: admin })
  expect(res.status).toBe(200)
  return res.body.data.items as Record<string, unknown>[]
}

describe('item fields: quantity, note, priority', () => {
  it('a new item carries the defaults; re-add updates only the given fields (200, addedAt kept)', async () => {
    const c = newCustomer()
    const first = await add(c, { product_id: '1' })
    expect(first.status).toBe(201)
    expect(first.body.data.item).toMatchObject({ productId: '1', quantity: 1, note: null, priority: 'normal', purchasedAt: null })
    const again = await add(c, { product_id: '1', quantity: 3, note: '  Size M, navy  ' })
    expect(again.status).toBe(200)
    expect(again.body.data.item).toMatchObject({
      quantity: 3,
      note: 'Size M, navy',
      priority: 'normal',
      addedAt: first.body.data.item.addedAt,
    })
    const third = await add(c, { product_id: '1', priority: 'high' })
    expect(third.body.data.item).toMatchObject({ quantity: 3, note: 'Size M, navy', priority: 'high' })
    expect(await page(c)).toEqual([
      {
        productId: '1',
        variantId: null,
        addedAt: first.body.data.item.addedAt,
        quantity: 3,
        note: 'Size M, navy',
        priority: 'high',
        purchasedAt: null,
      },
    ])
  })

  it('PATCH changes the given fields; note null clears it; by=handle and wishlist_id pick the item', async () => {
    const c = newCustomer()
    await add(c, { product_id: '7', handle: 'wool-scarf', note: 'grey', quantity: 2 })
    const res = await patch(c, '7', { quantity: 5, priority: 'low' })
    expect(res.status).toBe(200)
    expect(res.body.data.item).toMatchObject({ productId: '7', handle: 'wool-scarf', quantity: 5, note: 'grey', priority: 'low' })
    const cleared = await patch(c, 'wool-scarf', { note: null, variant_id: '71' }, '?by=handle')
    expect(cleared.status).toBe(200)
    expect(cleared.body.data.item).toMatchObject({ productId: '7', variantId: '71', quantity: 5, note: null, priority: 'low' })

    const list = await t.call('POST', `/v1/wishlists/${c}/lists`, { token: admin, body: { name: 'Gifts' } })
    const listId = list.body.data.wishlist.wishlistId as string
    await add(c, { product_id: '8' }, `?wishlist_id=${listId}`)
    const inList = await patch(c, '8', { note: 'for Ann' }, `?wishlist_id=${listId}`)
    expect(inList.body.data.item).toMatchObject({ productId: '8', note: 'for Ann' })
    // The default list does not hold 8: 404, and nothing changed.
    const absent = await patch(c, '8', { note: 'x' })
    expect(absent.status).toBe(404)
    expect(absent.body.error.code).toBe('NOT_FOUND')
    expect((await patch(c, 'no-such-handle', { quantity: 2 }, '?by=handle')).status).toBe(404)
    expect((await patch(newCustomer(), '8', { quantity: 2 })).status).toBe(404)

    // Move keeps the fields.
    const moved = await t.call('POST', `/v1/wishlists/${c}/items/move`, {
      token: admin,
      body: { product_id: '7', from: 'default', to: listId },
    })
    expect(moved.status).toBe(200)
    const items = await page(c, `?wishlist_id=${listId}`)
    expect(items.find((i) => i.productId === '7')).toMatchObject({
      quantity: 5,
      note: null,
      priority: 'low',
      variantId: '71',
      handle: 'wool-scarf',
    })
  })

  it('bad input is 400 VALIDATION_ERROR naming the field, and nothing is written', async () => {
    const c = newCustomer()
    await add(c, { product_id: '9', quantity: 4, note: 'keep' })
    const cases: [Record<string, unknown>, string][] = [
      [{ product_id: '10', quantity: 0 }, 'body.quantity'],
      [{ product_id: '10', quantity: 100 }, 'body.quantity'],
      [{ product_id: '10', quantity: 1.5 }, 'body.quantity'],
      [{ product_id: '10', note: 'x'.repeat(281) }, 'body.note'],
      [{ product_id: '10', priority: 'urgent' }, 'body.priority'],
    ]
    for (const [body, path] of cases) {
      const res = await add(c, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
      const p = await patch(c, '9', { ...body, product_id: undefined })
      expect(p.status).toBe(400)
      expect(p.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
    }
    // 280 characters after trimming are fine.
    expect((await patch(c, '9', { note: ` ${'y'.repeat(280)} ` })).status).toBe(200)
    const items = await page(c)
    expect(items).toHaveLength(1)
    expect(items[0]).toMatchObject({ productId: '9', quantity: 4, note: 'y'.repeat(280) })
  })

  it('merge and import accept the fields; a present item is kept as it is', async () => {
    const c = newCustomer()
    await add(c, { product_id: '20', quantity: 2, note: 'mine' })
    const merged = await t.call('POST', `/v1/wishlists/${c}/merge`, {
      token: admin,
      body: {
        guest_items: [
          { product_id: '20', quantity: 9, note: 'guest' },
          { product_id: '21', quantity: 3, note: ' for dad ', priority: 'high', added_at: '2026-01-01T10:00:00.000Z' },
        ],
      },
    })
    expect(merged.status).toBe(200)
    expect(merged.body.data.merged_count).toBe(1)
    const byId = Object.fromEntries((merged.body.data.items as Record<string, unknown>[]).map((i) => [i.productId, i]))
    expect(byId['20']).toMatchObject({ quantity: 2, note: 'mine', priority: 'normal' })
    expect(byId['21']).toMatchObject({ quantity: 3, note: 'for dad', priority: 'high', addedAt: '2026-01-01T10:00:00.000Z' })
    const badMerge = await t.call('POST', `/v1/wishlists/${c}/merge`, {
      token: admin,
      body: { guest_items: [{ product_id: '22' }, { product_id: '23', note: 'z'.repeat(281) }] },
    })
    expect(badMerge.status).toBe(400)
    expect(badMerge.body.error.details[0]).toMatchObject({ path: 'body.guest_items.1.note', index: 1 })
    expect((await page(c)).map((i) => i.productId).sort()).toEqual(['20', '21'])

    const c2 = newCustomer()
    const bad = await t.call('POST', '/v1/wishlists/import', {
      token: admin,
      body: {
        items: [
          { customer_id: c2, product_id: '30' },
          { customer_id: c2, product_id: '31', quantity: 100 },
        ],
      },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.details[0].path).toBe('body.items.1.quantity')
    expect(await page(c2)).toEqual([])
    const ok = await t.call('POST', '/v1/wishlists/import', {
      token: admin,
      body: {
        items: [
          { customer_id: c2, product_id: '30', quantity: 2, note: 'imported', priority: 'low', added_at: '2026-01-02T00:00:00.000Z' },
        ],
      },
    })
    expect(ok.body.data.imported).toBe(1)
    expect(await page(c2)).toEqual([
      {
        productId: '30',
        variantId: null,
        addedAt: '2026-01-02T00:00:00.000Z',
        quantity: 2,
        note: 'imported',
        priority: 'low',
        purchasedAt: null,
      },
    ])
  })

  it('the shared read, the customer export and the CSV carry the fields', async () => {
    const c = newCustomer()
    await add(c, { product_id: '40', quantity: 2, note: '=SUM(A1)', priority: 'high', handle: 'mug', metadata: { x: 1 } })
    const share = await t.call('GET', `/v1/wishlists/${c}/share`, { token: admin })
    const token = (share.body.data.share_url as string).split('/').pop() as string
    const shared = await t.call('GET', `/v1/wishlists/shared/${token}`)
    expect(shared.status).toBe(200)
    expect(shared.body.data.items).toEqual([
      { productId: '40', variantId: null, addedAt: expect.any(String), quantity: 2, note: '=SUM(A1)', priority: 'high', purchasedAt: null },
    ])

    const exported = await t.call('GET', `/v1/admin/customers/${c}/export`, { token: admin })
    expect(exported.status).toBe(200)
    expect(exported.body.data.lists[0].items[0]).toMatchObject({
      productId: '40',
      quantity: 2,
      note: '=SUM(A1)',
      priority: 'high',
      purchasedAt: null,
    })

    const csv = await t.call('GET', '/v1/admin/export/wishlists.csv', { token: admin })
    const lines = (csv.body as string).split('\r\n')
    expect(lines[0]).toBe('customer_id,wishlist_id,list_name,product_id,variant_id,handle,added_at,note,purchased_at,quantity,priority')
    const row = lines.find((l) => l.startsWith(`${c},`)) as string
    expect(row).toMatch(new RegExp(`^${c},default,My Wishlist,40,,mug,[^,]+,'=SUM\\(A1\\),,2,high$`))
  })
})
