import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loggedFacts } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('growth', { multi_wishlist_enabled: true, share_link_ttl_days: 7 })
  await shop.subscribe()
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const DAY = 86_400_000
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1)
const add = (c: string, body: Record<string, unknown>, token = admin, query = '') =>
  t.call('POST', `/v1/wishlists/${c}/items${query}`, { token, body })
const sharedRead = (url: string) => t.call('GET', new URL(url).pathname)

describe('share links', () => {
  it('creates a link with the shop TTL, reuses the active one, and emits wishlist.shared once', async () => {
    const before = Date.now()
    const first = await t.call('GET', '/v1/wishlists/1/share', { token: admin })
    expect(first.status).toBe(200)
    expect(first.body.data).toEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/),
      share_url: expect.stringMatching(/^http:\/\/wishlist\.test\/v1\/wishlists\/shared\/[A-Za-z0-9_-]{22,}$/),
      expires_at: expect.any(String),
    })
    // The token on its own, so a client need not parse it out of the URL.
    expect(first.body.data.share_url.endsWith(`/shared/${first.body.data.token}`)).toBe(true)
    expect((await t.call('GET', `/v1/wishlists/shared/${first.body.data.token}`)).status).toBe(200)
    // ≥ 128 random bits in base64url: at least 22 characters.
    expect(Buffer.from(tokenOf(first.body.data.share_url), 'base64url').length).toBeGreaterThanOrEqual(16)
    const expires = Date.parse(first.body.data.expires_at)
    expect(expires).toBeGreaterThanOrEqual(before + 7 * DAY)
    expect(expires).toBeLessThanOrEqual(Date.now() + 7 * DAY)
    const second = await t.call('GET', '/v1/wishlists/1/share', { token: admin })
    expect(second.body.data).toEqual(first.body.data)
    const shared = await t.storage.db
      .selectFrom('outbox')
      .select('payload')
      .where('shop_id', '=', shop.id)
      .where('event', '=', 'wishlist.shared')
      .execute()
    expect(shared).toHaveLength(1)
    expect(JSON.parse(shared[0]!.payload)).toMatchObject({ customerId: '1', wishlistId: 'default' })
  })

  it('serves the list as it is now with only productId, variantId, addedAt and the item fields, without authentication', async () => {
    await add('2', { product_id: '10', handle: 'ten', metadata: { secret: 'x' } })
    const link = (await t.call('GET', '/v1/wishlists/2/share', { token: admin })).body.data
    await add('2', { product_id: '11', variant_id: '111' })
    const res = await sharedRead(link.share_url)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      ok: true,
      data: {
        name: 'My Wishlist',
        items: [
          {
            productId: '11',
            variantId: '111',
            addedAt: expect.any(String),
            quantity: 1,
            priority: 'normal',
            note: null,
            purchasedAt: null,
          },
          { productId: '10', variantId: null, addedAt: expect.any(String), quantity: 1, priority: 'normal', note: null, purchasedAt: null },
        ],
        count: 2,
        created_at: expect.any(String),
        expires_at: link.expires_at,
      },
    })
  })

  it('shares a named list with wishlist_id, one link per list', async () => {
    const list = (await t.call('POST', '/v1/wishlists/3/lists', { token: admin, body: { name: 'Wedding' } })).body.data.wishlist.wishlistId
    await add('3', { product_id: '20' }, admin, `?wishlist_id=${list}`)
    const named = (await t.call('GET', `/v1/wishlists/3/share?wishlist_id=${list}`, { token: admin })).body.data
    const dflt = (await t.call('GET', '/v1/wishlists/3/share', { token: admin })).body.data
    expect(named.share_url).not.toBe(dflt.share_url)
    const res = await sharedRead(named.share_url)
    expect(res.body.data).toMatchObject({ name: 'Wedding', count: 1, items: [{ productId: '20' }] })
    expect((await t.call('GET', '/v1/wishlists/3/share?wishlist_id=wl_nope', { token: admin })).status).toBe(404)
  })

  it('revokes: the old link answers 404 and the next GET share makes a new one', async () => {
    const link = (await t.call('GET', '/v1/wishlists/4/share', { token: admin })).body.data
    const revoked = await t.call('DELETE', '/v1/wishlists/4/share', { token: admin })
    expect(revoked.body).toEqual({ ok: true, data: { revoked: true } })
    expect((await t.call('DELETE', '/v1/wishlists/4/share', { token: admin })).body.data).toEqual({ revoked: false })
    const gone = await sharedRead(link.share_url)
    expect(gone.status).toBe(404)
    expect(gone.body.error.code).toBe('NOT_FOUND')
    const fresh = (await t.call('GET', '/v1/wishlists/4/share', { token: admin })).body.data
    expect(fresh.share_url).not.toBe(link.share_url)
    expect((await sharedRead(fresh.share_url)).status).toBe(200)
  })

  it('answers 410 SHARE_EXPIRED after expires_at, then creates a new link on the next GET share', async () => {
    const link = (await t.call('GET', '/v1/wishlists/5/share', { token: admin })).body.data
    await t.storage.db
      .updateTable('share_links')
      .set({ expires_at: Date.now() - 1 })
      .where('shop_id', '=', shop.id)
      .where('token', '=', tokenOf(link.share_url))
      .execute()
    const res = await sharedRead(link.share_url)
    expect(res.status).toBe(410)
    expect(res.body.error.code).toBe('SHARE_EXPIRED')
    const next = (await t.call('GET', '/v1/wishlists/5/share', { token: admin })).body.data
    expect(next.share_url).not.toBe(link.share_url)
  })

  it('answers 404 for an unknown token and is not mistaken for a customer route', async () => {
    const res = await t.call('GET', '/v1/wishlists/shared/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('NOT_FOUND')
    // With credentials it is still the public read, not GET /v1/wishlists/{customerId}.
    expect((await t.call('GET', '/v1/wishlists/shared/abc', { token: admin })).status).toBe(404)
  })

  it('works for guests and customers, and needs the starter plan in every mode', async () => {
    const guest = shop.guest('g_share_guest1')
    const g = await t.call('GET', '/v1/wishlists/me/share', { headers: guest })
    expect(g.status).toBe(200)
    expect((await t.call('GET', '/v1/wishlists/me/share', { token: await shop.customerToken('6') })).status).toBe(200)
    const free = await t.createShop('free')
    const refused = await t.call('GET', '/v1/wishlists/me/share', { headers: free.guest('g_share_guest2') })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ code: 'PLAN_UPGRADE_REQUIRED', details: { required_plan: 'starter' } })
    expect((await t.call('DELETE', '/v1/wishlists/me/share', { headers: free.guest('g_share_guest2') })).status).toBe(403)
  })
})

describe('POST /v1/wishlists/import', () => {
  const run = (body: Record<string, unknown>, token = admin) => t.call('POST', '/v1/wishlists/import', { token, body })

  it('imports into default lists, deduplicating within the call and against stored items', async () => {
    await add('700', { product_id: '1' })
    const body = {
      items: [
        { customer_id: '700', product_id: '1' },
        {
          customer_id: '700',
          product_id: '2',
          variant_id: '22',
          handle: 'two',
          added_at: '2025-03-04T05:06:07.890Z',
          metadata: { from: 'csv' },
        },
        { customer_id: 'gid://shopify/Customer/700', product_id: 'gid://shopify/Product/2' },
        { customer_id: '701', product_id: '3' },
      ],
    }
    const res = await run(body)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, data: { customers: 2, imported: 2, skipped: 2, dry_run: false } })
    const items = (await t.call('GET', '/v1/wishlists/700', { token: admin })).body.data.items
    expect(items).toContainEqual({
      productId: '2',
      variantId: '22',
      handle: 'two',
      metadata: { from: 'csv' },
      addedAt: '2025-03-04T05:06:07.890Z',
      quantity: 1,
      priority: 'normal',
      note: null,
      purchasedAt: null,
    })
    const again = await run(body)
    expect(again.body.data).toEqual({ customers: 2, imported: 0, skipped: 4, dry_run: false })
  })

  it('records analytics adds and emits no webhooks', async () => {
    const s = await t.createShop('scale')
    await s.subscribe()
    const token = await s.adminToken()
    await run(
      {
        items: [
          { customer_id: '1', product_id: '1' },
          { customer_id: '2', product_id: '1' },
        ],
      },
      token,
    )
    expect(await t.storage.db.selectFrom('outbox').select('id').where('shop_id', '=', s.id).execute()).toEqual([])
    const facts = await (await loggedFacts(t.storage.db, s.id)).select(['type', 'owner_id']).orderBy('owner_id').execute()
    expect(facts).toEqual([
      { type: 'add', owner_id: '1' },
      { type: 'add', owner_id: '2' },
    ])
  })

  it('dry_run returns the same figures and writes nothing', async () => {
    const body = {
      items: [
        { customer_id: '710', product_id: '1' },
        { customer_id: '710', product_id: '1' },
        { customer_id: '711', product_id: '5' },
      ],
    }
    const dry = await run({ ...body, dry_run: true })
    expect(dry.body.data).toEqual({ customers: 2, imported: 2, skipped: 1, dry_run: true })
    expect((await t.call('GET', '/v1/wishlists/710', { token: admin })).body.data.total).toBe(0)
    const owners = await t.storage.db
      .selectFrom('wishlist_owners')
      .select('owner_id')
      .where('shop_id', '=', shop.id)
      .where('owner_id', 'in', ['710', '711'])
      .execute()
    expect(owners).toEqual([])
    const real = await run(body)
    expect(real.body.data).toEqual({ customers: 2, imported: 2, skipped: 1, dry_run: false })
  })

  it('validates atomically: one bad item refuses the call with its index and writes nothing', async () => {
    const items = [
      { customer_id: '720', product_id: '1' },
      { customer_id: '720', product_id: 'nope' },
    ]
    const res = await run({ items })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.items.1.product_id', index: 1 }] })
    const meta = await run({
      items: [
        { customer_id: '720', product_id: '1' },
        { customer_id: '720', product_id: '2' },
        { customer_id: '720', product_id: '3', metadata: { x: 'y'.repeat(300) } },
      ],
    })
    expect(meta.status).toBe(400)
    expect(meta.body.error.details).toEqual([expect.objectContaining({ path: 'body.items.2.metadata', index: 2 })])
    expect((await t.call('GET', '/v1/wishlists/720', { token: admin })).body.data.total).toBe(0)
    const missing = await run({ items: [{ product_id: '1' }] })
    expect(missing.body.error.details[0]).toMatchObject({ path: 'body.items.0.customer_id', index: 0 })
  })

  it('takes at most 500 items per call', async () => {
    const items = Array.from({ length: 501 }, (_, i) => ({ customer_id: '730', product_id: String(i + 1) }))
    expect((await run({ items })).status).toBe(400)
    expect((await run({ items: items.slice(0, 500) })).body.data.imported).toBe(500)
    expect((await run({ items: [] })).status).toBe(400)
  })

  it('skips items beyond the 2,500 limit', async () => {
    for (let k = 0; k < 5; k++) {
      await run({ items: Array.from({ length: 500 }, (_, i) => ({ customer_id: '740', product_id: String(k * 500 + i + 1) })) })
    }
    const res = await run({
      items: [
        { customer_id: '740', product_id: '999999' },
        { customer_id: '741', product_id: '1' },
      ],
    })
    expect(res.body.data).toEqual({ customers: 2, imported: 1, skipped: 1, dry_run: false })
    const owner = await t.storage.db
      .selectFrom('wishlist_owners')
      .select('item_count')
      .where('shop_id', '=', shop.id)
      .where('owner_id', '=', '740')
      .executeTakeFirst()
    expect(owner?.item_count).toBe(2_500)
  })

  it('needs an admin token and the growth plan', async () => {
    const body = { items: [{ customer_id: '1', product_id: '1' }] }
    expect((await run(body, await shop.customerToken('1'))).status).toBe(403)
    const guest = await t.call('POST', '/v1/wishlists/import', { headers: shop.guest('g_import_guest'), body })
    expect(guest.status).toBe(403)
    const starter = await t.createShop('starter')
    const res = await run(body, await starter.adminToken())
    expect(res.status).toBe(403)
    expect(res.body.error).toMatchObject({ code: 'PLAN_UPGRADE_REQUIRED', details: { required_plan: 'growth', current_plan: 'starter' } })
  })
})
