/**
 * Shopify app mode, webhooks from Shopify (docs/api.md, "Webhooks from Shopify"): every
 * topic with Shopify-shaped payloads, idempotency, refusals, and app/uninstalled.
 */
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { configuredPlatforms } from '../../src/app.js'
import { DAY_MS } from '../../src/lib/time.js'
import { shopErasureRepo } from '../../src/platforms/shopify/shop-erasure.repo.js'
import { createWebhookWorker, type WebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { newShopDomain, proxyCall, sendShopifyWebhook, sessionToken, SHOPIFY_ENV } from '../helpers/shopify.js'

let t: TestApp
let receiver: Receiver
let worker: WebhookWorker

beforeAll(async () => {
  // shop/redact erases at once here (Shopify sends it 48 h after the uninstall; its wait has its own test).
  t = await createTestApp({ env: { ...SHOPIFY_ENV, SHOPIFY_SHOP_REDACT_MIN_HOURS: '0' } })
  receiver = await startReceiver()
  worker = createWebhookWorker({
    storage: t.storage,
    webhooks: t.config.webhooks,
    leaseMs: 5_000,
    platforms: configuredPlatforms(t.config),
  })
})
afterAll(async () => {
  await worker.stop()
  await receiver.close()
  await t.close()
})

/** The merchant's admin token, from the embedded admin's session token (creates the shop when unknown). */
async function adminOf(domain: string): Promise<string> {
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.token as string
}

async function shopOf(domain: string) {
  const shop = await t.app.services.shops.byDomain(domain)
  if (!shop) throw new Error(`no shop ${domain}`)
  return shop
}

const product = (id: number, variants: [number, string, number][], handle = `product-${id}`) => ({
  id,
  title: `Product ${id}`,
  handle,
  status: 'active',
  admin_graphql_api_id: `gid://shopify/Product/${id}`,
  variants: variants.map(([vid, price, qty], i) => ({
    id: vid,
    product_id: id,
    title: `V${i}`,
    price,
    position: i + 1,
    inventory_quantity: qty,
    sku: '',
  })),
})

async function hook(domain: string, topic: string, payload: unknown, extra: { eventId?: string; webhookId?: string } = {}) {
  const res = await sendShopifyWebhook(t, payload, { topic, shop: domain, ...extra })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.result as string
}

/** Runs worker passes until the receiver holds `n` requests matching `filter`. */
async function pumpUntil(n: number, filter: (body: { event: string }) => boolean) {
  const deadline = Date.now() + 10_000
  for (;;) {
    await worker.runOnce()
    const hits = receiver.received.filter((r) => filter(JSON.parse(r.body)))
    if (hits.length >= n) return hits
    if (Date.now() > deadline) throw new Error(`expected ${n} deliveries, got ${hits.length}`)
    await receiver.waitFor(receiver.received.length + 1, () => true, 50).catch(() => undefined)
  }
}

const countRows = async (table: string, shopId?: string) =>
  Number(
    (
      await sql<{
        n: number
      }>`select count(*) as n from ${sql.table(table)} ${shopId === undefined ? sql`` : sql`where shop_id = ${shopId}`}`.execute(
        t.storage.db,
      )
    ).rows[0]!.n,
  )

describe('products/create and products/update: the catalog update of product.updated', () => {
  it('reaches a subscribed endpoint as back-in-stock, price-drop and low-stock events, Standard Webhooks signed', async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const created = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: {
        url: `${receiver.url}/shopify-signals`,
        events: ['wishlist.product.back_in_stock', 'wishlist.product.price_dropped', 'wishlist.product.low_stock'],
      },
    })
    expect(created.status).toBe(201)
    expect(
      (await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '6001' }, { body: { product_id: '9001' } })).status,
    ).toBe(201)

    expect(await hook(domain, 'products/create', product(9001, [[90011, '20.00', 0]]))).toBe('processed') // the baseline: nothing emitted
    expect(await hook(domain, 'products/update', product(9001, [[90011, '15.00', 8]]))).toBe('processed') // back in stock, price drop
    expect(await hook(domain, 'products/update', product(9001, [[90011, '15.00', 2]]))).toBe('processed') // low stock

    const hits = await pumpUntil(3, (b) => b.event.startsWith('wishlist.product.'))
    const verifier = new Webhook(created.body.data.secret)
    const events = hits.map(
      (h) =>
        verifier.verify(h.body, h.headers as Record<string, string>) as {
          event: string
          shopDomain: string
          data: Record<string, unknown>
        },
    )
    expect(events.map((e) => e.event).sort()).toEqual([
      'wishlist.product.back_in_stock',
      'wishlist.product.low_stock',
      'wishlist.product.price_dropped',
    ])
    for (const e of events)
      expect(e).toMatchObject({
        shopDomain: domain,
        data: { productId: '9001', variantId: '90011', wishlistCount: 1, customerIds: ['6001'] },
      })
    const drop = events.find((e) => e.event === 'wishlist.product.price_dropped')!
    expect(drop.data).toMatchObject({ before: { price: '20.00', inventoryQuantity: 0 }, after: { price: '15.00', inventoryQuantity: 8 } })
  })

  it('keeps the handle, the title and the image, and products/delete makes the catalog forget the product while items stay', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    await hook(domain, 'products/create', product(9100, [[91001, '5.00', 3]], 'red-hat'))
    const shop = await shopOf(domain)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '6002' }, { body: { product_id: '9100' } })
    const catalog = () =>
      t.storage.db
        .selectFrom('catalog_products')
        .selectAll()
        .where('shop_id', '=', shop.id)
        .where('product_id', '=', '9100')
        .executeTakeFirst()
    expect(await catalog()).toMatchObject({ handle: 'red-hat', title: 'Product 9100', default_variant_id: '91001', image_url: null })
    // The product's image (`image.src`, else the first of `images`) is kept; a later update without one keeps it; not a URL: ignored.
    const picture = 'https://cdn.shopify.com/s/files/1/red-hat.jpg'
    await hook(domain, 'products/update', { ...product(9100, [[91001, '5.00', 3]], 'red-hat'), images: [{ id: 1, src: picture }] })
    expect(await catalog()).toMatchObject({ image_url: picture })
    await hook(domain, 'products/update', {
      ...product(9100, [[91001, '5.00', 3]], 'red-hat'),
      image: { id: 2, src: 'javascript:alert(1)' },
    })
    expect(await catalog()).toMatchObject({ image_url: picture })
    expect(await hook(domain, 'products/delete', { id: 9100 })).toBe('processed')
    expect(await catalog()).toBeUndefined()
    expect(await countRows('wishlist_items', shop.id)).toBe(1)
    // A product GID names the same product as its digits, as in products/update.
    await hook(domain, 'products/update', product(9100, [[91001, '5.00', 3]], 'red-hat'))
    expect(await catalog()).toBeDefined()
    expect(await hook(domain, 'products/delete', { id: 'gid://shopify/Product/9100' })).toBe('processed')
    expect(await catalog()).toBeUndefined()
  })
})

describe('orders/create: exactly order.created', () => {
  it("verifies the customer's review, removes the bought product and writes review invitations", async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const shop = await shopOf(domain)
    await t.app.services.shops.updateSettings(shop.id, { remove_on_purchase: true, reviews_auto_approve: true })
    const me = { shop: domain, customerId: '6101' }
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9201' } })
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9202' } })
    const review = await proxyCall(t, 'POST', '/api/v1/reviews', me, {
      body: { productId: '9201', customerEmail: 'bo@example.com', customerName: 'Bo', rating: 4, body: 'Good' },
    })
    expect(review.body).toEqual({ id: expect.any(Number), status: 'approved' })
    expect((await proxyCall(t, 'GET', `/api/v1/reviews/${review.body.id}`, me)).body.verifiedPurchase).toBe(false)

    const order = {
      id: 820982911946154500,
      admin_graphql_api_id: 'gid://shopify/Order/820982911946154500',
      email: 'bo@example.com',
      customer: { id: 6101, email: 'bo@example.com', first_name: 'Bo' },
      line_items: [
        { id: 1, product_id: 9201, variant_id: 92011, quantity: 1, price: '4.00' },
        { id: 2, product_id: null, variant_id: null, title: 'Gift wrap (custom item)', quantity: 1, price: '1.00' },
      ],
    }
    // Shopify's order ids can be larger than a double holds exactly: read as the digits sent.
    const raw = JSON.stringify(order).replace('"id":820982911946154500', '"id":820982911946154508')
    expect(raw).toContain('"id":820982911946154508,')
    expect(await hook(domain, 'orders/create', raw)).toBe('processed')

    const after = await proxyCall(t, 'GET', `/api/v1/reviews/${review.body.id}`, me)
    expect(after.body.verifiedPurchase).toBe(true)
    const list = await proxyCall(t, 'GET', '/v1/wishlists/me', me)
    expect(list.body.data.items.map((i: { productId: string }) => i.productId)).toEqual(['9202'])
    const invitations = await t.call('GET', '/v1/admin/review-invitations?order_id=820982911946154508', { token: admin })
    expect(invitations.status).toBe(200)
    expect(invitations.body.data.invitations).toEqual([
      expect.objectContaining({ orderId: '820982911946154508', customerId: '6101', productId: '9201' }),
    ])
  })
  it('maps currency, time, quantities and prices field for field: purchase state and conversions; a redelivered order id applies once', async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const me = { shop: domain, customerId: '6102' }
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9211', quantity: 2 } })
    // Shopify's time, with its offset (after the add: the product was held when bought).
    const processedAt = new Date()
    const order = {
      id: 820982911946154600,
      email: 'di@example.com',
      currency: 'EUR',
      created_at: new Date(Date.now() - 120_000).toISOString(),
      processed_at: processedAt.toISOString().replace('Z', '+00:00'),
      customer: { id: 6102 },
      line_items: [
        { id: 1, product_id: 9211, variant_id: 92111, quantity: 2, price: '19.95' },
        { id: 2, product_id: 9212, variant_id: 92121, quantity: 1, price: '5.00' },
      ],
    }
    expect(await hook(domain, 'orders/create', order, { eventId: 'ev-order-1' })).toBe('processed')
    // The same body under a new event id: a duplicate. Another body of the same order (Shopify
    // added a field): processed, and the order id applies once.
    expect(await hook(domain, 'orders/create', order, { eventId: 'ev-order-2' })).toBe('duplicate')
    expect(await hook(domain, 'orders/create', { ...order, note: 'gift' }, { eventId: 'ev-order-3' })).toBe('processed')
    const list = await proxyCall(t, 'GET', '/v1/wishlists/me', me)
    expect(list.body.data.items).toEqual([
      expect.objectContaining({ productId: '9211', quantity: 2, purchasedAt: processedAt.toISOString() }),
    ])
    const conv = await t.call('GET', '/v1/admin/analytics/conversions?period=7d', { token: admin })
    // 9211 was wishlisted: 2 × 19.95 = 39.90; 9212 was not.
    expect(conv.body.data).toMatchObject({
      ordersInfluenced: 1,
      linesInfluenced: 1,
      revenueInfluenced: [{ currency: 'EUR', amount: '39.90' }],
      wishlistToPurchaseRate: 100,
      medianDaysToPurchase: 0,
    })
  })
})

describe('orders/create beyond the intake bounds', () => {
  it('a wholesale line (20,000 units, a price past 10^9) is processed: bought, the quantity at 10,000, no revenue from the price out of bounds', async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const me = { shop: domain, customerId: '6111' }
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9221' } })
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9222' } })
    const order = {
      id: 820982911946155000,
      currency: 'USD',
      customer: { id: 6111 },
      line_items: [
        { id: 1, product_id: 9221, variant_id: 92211, quantity: 20_000, price: '2.50' },
        { id: 2, product_id: 9222, variant_id: 92221, quantity: 1, price: '1234567890.00' },
      ],
    }
    expect(await hook(domain, 'orders/create', order)).toBe('processed')
    const list = await proxyCall(t, 'GET', '/v1/wishlists/me', me)
    expect(list.body.data.items.map((i: { purchasedAt: string | null }) => i.purchasedAt)).toEqual([expect.any(String), expect.any(String)])
    const conv = await t.call('GET', '/v1/admin/analytics/conversions?period=7d', { token: admin })
    expect(conv.body.data).toMatchObject({
      ordersInfluenced: 1,
      linesInfluenced: 2,
      revenueInfluenced: [{ currency: 'USD', amount: '25000.00' }],
    })
  })
})

describe('customers/redact and customers/data_request', () => {
  it('customers/redact erases the customer (the privacy erasure)', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    const me = { shop: domain, customerId: '6201' }
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9301' } })
    const review = await proxyCall(t, 'POST', '/api/v1/reviews', me, {
      body: { productId: '9301', customerEmail: 'cy@example.com', customerName: 'Cy', rating: 3, body: 'Fine' },
    })
    const shop = await shopOf(domain)
    expect(await countRows('wishlist_items', shop.id)).toBe(1)
    const redact = {
      shop_id: 954889,
      shop_domain: domain,
      customer: { id: 6201, email: 'cy@example.com', phone: '555-625-1199' },
      orders_to_redact: [],
    }
    expect(await hook(domain, 'customers/redact', redact)).toBe('processed')
    expect(await countRows('wishlist_items', shop.id)).toBe(0)
    const row = await t.storage.db
      .selectFrom('reviews')
      .select(['customer_name', 'customer_email'])
      .where('shop_id', '=', shop.id)
      .where('id', '=', review.body.id)
      .executeTakeFirstOrThrow()
    expect(row.customer_name).toBe('Anonymous')
    expect(row.customer_email).not.toBe('cy@example.com')
  })

  it("customers/data_request is listed newest first, with the customer's export", async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '6301' }, { body: { product_id: '9401' } })
    const request = (id: number, email: string, dataRequestId: number) => ({
      shop_id: 954889,
      shop_domain: domain,
      orders_requested: [299938, 280263],
      customer: { id, email, phone: '555-625-1199' },
      data_request: { id: dataRequestId },
    })
    expect(await hook(domain, 'customers/data_request', request(6301, 'di@example.com', 9999))).toBe('processed')
    expect(await hook(domain, 'customers/data_request', request(6302, 'ed@example.com', 10000))).toBe('processed')

    const listed = await t.call('GET', '/v1/admin/privacy-requests', { token: admin })
    expect(listed.status).toBe(200)
    expect(listed.body.data.privacyRequests).toEqual([
      { id: expect.stringMatching(/^pr_/), customerId: '6302', email: 'ed@example.com', receivedAt: expect.any(String) },
      { id: expect.stringMatching(/^pr_/), customerId: '6301', email: 'di@example.com', receivedAt: expect.any(String) },
    ])
    const first = listed.body.data.privacyRequests[1]
    const exported = await t.call('GET', `/v1/admin/privacy-requests/${first.id}/export`, { token: admin })
    expect(exported.status).toBe(200)
    expect(exported.body.data).toMatchObject({ customerId: '6301', lists: [{ items: [{ productId: '9401' }] }] })
    expect((await t.call('GET', '/v1/admin/privacy-requests/pr_unknown/export', { token: admin })).status).toBe(404)
    // Another shop's admin sees none of them.
    const other = await adminOf(newShopDomain())
    expect((await t.call('GET', '/v1/admin/privacy-requests', { token: other })).body.data.privacyRequests).toEqual([])
    expect((await t.call('GET', `/v1/admin/privacy-requests/${first.id}/export`, { token: other })).status).toBe(404)
  })
})

describe('shop/redact', () => {
  it('deletes every row of the shop in every table, the shop included, and nothing of another shop', async () => {
    // Every table but the migration bookkeeping carries shop_id (or is `shops`): a table
    // without it could not be erased by shop, and must make this test fail.
    const allTables =
      t.storage.backend === 'postgres'
        ? (
            await sql<{
              name: string
            }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(
              t.storage.db,
            )
          ).rows
        : (
            await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(
              t.storage.db,
            )
          ).rows
    const scoped = await shopErasureRepo.scopedTables(t.storage.db)
    const unscoped = allTables.map((r) => r.name).filter((n) => !scoped.includes(n) && n !== 'shops' && !n.startsWith('kysely_'))
    expect(unscoped).toEqual([])

    const populate = async (domain: string) => {
      const admin = await adminOf(domain)
      const shop = await shopOf(domain)
      await t.app.services.shops.setPlan(shop.id, 'scale')
      await t.app.services.shops.updateSettings(shop.id, { multi_wishlist_enabled: true })
      await t.call('POST', '/v1/webhooks', {
        token: admin,
        body: { url: `${receiver.url}/redact`, events: ['wishlist.item.added', 'wishlist.product.back_in_stock', 'review.requested'] },
      })
      const me = { shop: domain, customerId: '6401' }
      await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9501', handle: 'a' } })
      await proxyCall(t, 'POST', '/v1/wishlists/me/lists', me, { body: { name: 'Gifts' } })
      await proxyCall(
        t,
        'POST',
        '/v1/wishlists/me/items',
        { shop: domain },
        { query: { guest_id: 'g_redact_guest' }, body: { product_id: '9502' } },
      )
      await proxyCall(t, 'GET', '/v1/wishlists/me/share', me)
      const review = await proxyCall(t, 'POST', '/api/v1/reviews', me, {
        body: { productId: '9501', customerEmail: 'fa@example.com', customerName: 'Fa', rating: 5, body: 'Yes' },
      })
      await t.call('POST', `/api/v1/reviews/${review.body.id}/approve`, { token: admin })
      await proxyCall(t, 'PUT', `/api/v1/reviews/${review.body.id}/helpful`, { shop: domain, customerId: '6402' })
      await hook(domain, 'products/create', product(9501, [[95011, '3.00', 0]]))
      await hook(domain, 'products/update', product(9501, [[95011, '3.00', 5]]))
      await hook(domain, 'orders/create', {
        id: 777,
        email: 'fa@example.com',
        customer: { id: 6401 },
        line_items: [{ product_id: 9501, variant_id: 95011 }],
      })
      await hook(domain, 'customers/data_request', {
        shop_domain: domain,
        customer: { id: 6401, email: 'fa@example.com' },
        data_request: { id: 1 },
      })
      await t.call('POST', '/v1/events', {
        token: admin,
        body: { events: [{ type: 'cart.item_added', customer_id: '6401', product_id: '9501' }] },
      })
      await t.call('GET', '/v1/analytics?period=30d', { token: admin })
      return shop
    }
    const doomed = await populate(newShopDomain())
    const kept = await populate(newShopDomain())
    await worker.runOnce() // fan-outs and deliveries exist for both

    const before: Record<string, number> = {}
    for (const table of scoped) before[table] = await countRows(table, doomed.id)
    // The populated shop has rows in most tables: the check below is not vacuous.
    expect(Object.values(before).filter((n) => n > 0).length).toBeGreaterThanOrEqual(12)
    const keptBefore: Record<string, number> = {}
    for (const table of scoped) keptBefore[table] = await countRows(table, kept.id)

    // Shopify sends shop/redact 48 hours after the app is uninstalled.
    expect(await hook(doomed.domain, 'app/uninstalled', { id: 954889, myshopify_domain: doomed.domain })).toBe('processed')
    expect(await hook(doomed.domain, 'shop/redact', { shop_id: 954889, shop_domain: doomed.domain })).toBe('processed')
    for (const table of scoped) expect(await countRows(table, doomed.id), table).toBe(0)
    expect(await t.storage.db.selectFrom('shops').select('id').where('id', '=', doomed.id).executeTakeFirst()).toBeUndefined()
    for (const table of scoped) expect(await countRows(table, kept.id), table).toBe(keptBefore[table])

    // A redelivery finds no shop: ignored; a later signed request creates the shop again, empty.
    expect(await hook(doomed.domain, 'shop/redact', { shop_id: 954889, shop_domain: doomed.domain })).toBe('ignored')
    const again = await proxyCall(t, 'GET', '/v1/wishlists/me', { shop: doomed.domain, customerId: '6401' })
    expect(again.status).toBe(200)
    expect(again.body.data.items).toEqual([])
    const reborn = await shopOf(doomed.domain)
    expect(reborn.id).not.toBe(doomed.id)
    expect(reborn.plan).toBe('free')
  })
})

describe('app/uninstalled', () => {
  it('refuses the storefront key and the proxy with 403 and holds outbound webhooks, until another signed request', async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const created = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: `${receiver.url}/uninstalled`, events: ['wishlist.item.added'] },
    })
    expect(created.status).toBe(201)
    const shop = await shopOf(domain)
    await t.app.services.shops.setPlan(shop.id, 'starter') // the merchant's own API (bearer tokens) below
    const me = { shop: domain, customerId: '6501' }

    expect(await hook(domain, 'app/uninstalled', { id: 954889, name: 'Shop', domain, myshopify_domain: domain })).toBe('processed')
    const view = await t.call('GET', '/v1/admin/shop', { token: admin })
    expect(view.body.data.uninstalledAt).toEqual(expect.any(String))

    // A proxy request Shopify signed before the uninstall (still in flight) is refused, and installs nothing.
    const before = { ...me, timestamp: Math.floor(Date.now() / 1000) - 30 }
    const viaProxy = await proxyCall(t, 'POST', '/v1/wishlists/me/items', before, { body: { product_id: '9601' } })
    expect(viaProxy.status).toBe(403)
    expect(viaProxy.body.error.code).toBe('FORBIDDEN')
    const viaPublicProxy = await proxyCall(t, 'GET', '/api/v1/products/1/reviews', { shop: domain, timestamp: before.timestamp })
    expect(viaPublicProxy.status).toBe(403)
    const viaKey = await t.call('GET', '/api/v1/products/1/reviews', { headers: { 'x-storefront-key': shop.storefrontKey } })
    expect(viaKey.status).toBe(403)
    expect(viaKey.body.error.code).toBe('FORBIDDEN')

    // An event of the shop made meanwhile (the merchant's own API) waits.
    expect((await t.call('POST', '/v1/wishlists/6501/items', { token: admin, body: { product_id: '9602' } })).status).toBe(201)
    await worker.runOnce()
    await worker.runOnce()
    expect(receiver.received.filter((r) => r.path === '/uninstalled')).toHaveLength(0)
    const pending = await t.call('GET', `/v1/webhooks/${created.body.data.webhookId}/deliveries`, { token: admin })
    expect(pending.body.data.deliveries.map((d: { status: string }) => d.status)).toEqual(['pending'])
    // Compliance topics, which Shopify sends after an uninstall too, change nothing.
    expect(
      await hook(domain, 'customers/data_request', {
        shop_domain: domain,
        customer: { id: 1, email: 'x@example.com' },
        data_request: { id: 2 },
      }),
    ).toBe('processed')
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
    // No webhook installs a shop again: another topic is ignored and writes nothing.
    expect(await hook(domain, 'products/update', product(9602, [[96021, '1.00', 1]]))).toBe('ignored')
    expect(await hook(domain, 'orders/create', { id: 4242, customer: { id: 6501 }, line_items: [{ product_id: 9602 }] })).toBe('ignored')
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
    expect(await countRows('catalog_products', shop.id)).toBe(0)
    expect(await countRows('orders', shop.id)).toBe(0)

    // Installed again: a fresh signed request to the app (here the proxy).
    expect((await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '9601' } })).status).toBe(201)
    expect((await t.call('GET', '/v1/admin/shop', { token: admin })).body.data.uninstalledAt).toBeNull()
    expect((await t.call('GET', '/api/v1/products/1/reviews', { headers: { 'x-storefront-key': shop.storefrontKey } })).status).toBe(200)
    await pumpUntil(2, (b) => b.event === 'wishlist.item.added' && receiver.received.some((r) => r.path === '/uninstalled'))
    expect(receiver.received.filter((r) => r.path === '/uninstalled').length).toBeGreaterThanOrEqual(2)
  })

  it('is installed again by the merchant opening the app (a session token)', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    await hook(domain, 'app/uninstalled', { id: 1, domain, myshopify_domain: domain })
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
    await adminOf(domain)
    expect((await shopOf(domain)).uninstalledAt).toBeNull()
  })
})

describe('idempotency and refusals', () => {
  it('processes a repeated X-Shopify-Event-Id (or, without it, X-Shopify-Webhook-Id) once', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    expect(await hook(domain, 'products/update', product(9701, [[97011, '10.00', 5]]), { eventId: 'evt-1' })).toBe('processed')
    const shop = await shopOf(domain)
    const state = () =>
      t.storage.db
        .selectFrom('catalog_products')
        .select(['variants'])
        .where('shop_id', '=', shop.id)
        .where('product_id', '=', '9701')
        .executeTakeFirstOrThrow()
    const first = await state()
    // The same event again (even with another body): 200, nothing changes.
    expect(await hook(domain, 'products/update', product(9701, [[97011, '7.00', 1]]), { eventId: 'evt-1' })).toBe('duplicate')
    expect(await state()).toEqual(first)
    // The same event id under another topic is another event.
    expect(await hook(domain, 'products/create', product(9701, [[97011, '9.00', 5]]), { eventId: 'evt-1' })).toBe('processed')
    expect(await state()).not.toEqual(first)
    const second = await state()
    // Without an event id, the webhook id.
    expect(await hook(domain, 'products/update', product(9701, [[97011, '8.00', 5]]), { webhookId: 'whid-1' })).toBe('processed')
    const third = await state()
    expect(third).not.toEqual(second)
    expect(await hook(domain, 'products/update', product(9701, [[97011, '1.00', 5]]), { webhookId: 'whid-1' })).toBe('duplicate')
    expect(await state()).toEqual(third)
  })

  it('answers 200 ignored for a shop the app does not know, of every topic, and creates or writes nothing', async () => {
    const domain = newShopDomain()
    const tables = ['shops', 'catalog_products', 'orders', 'shopify_webhook_receipts', 'privacy_requests']
    const before = await Promise.all(tables.map((n) => countRows(n)))
    const bodies: Record<string, unknown> = {
      'products/create': product(9751, [[97511, '1.00', 1]]),
      'products/update': product(9751, [[97511, '1.00', 1]]),
      'products/delete': { id: 9751 },
      'orders/create': { id: 97510, customer: { id: 1 }, line_items: [{ product_id: 9751 }] },
      'customers/redact': { shop_id: 1, shop_domain: domain, customer: { id: 1 }, orders_to_redact: [] },
      'customers/data_request': { shop_id: 1, shop_domain: domain, customer: { id: 1 }, data_request: { id: 1 } },
      'shop/redact': { shop_id: 1, shop_domain: domain },
      'app/uninstalled': { id: 1, myshopify_domain: domain },
    }
    for (const [topic, body] of Object.entries(bodies)) expect(await hook(domain, topic, body), topic).toBe('ignored')
    expect(await Promise.all(tables.map((n) => countRows(n)))).toEqual(before)
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
  })

  it('answers 200 to an unknown topic and does nothing (not even create the shop)', async () => {
    const domain = newShopDomain()
    expect(await hook(domain, 'carts/update', { id: 'abc' })).toBe('ignored')
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
  })

  it('refuses a wrong, missing or foreign HMAC with 401 INVALID_SIGNATURE and writes nothing', async () => {
    const domain = newShopDomain()
    const tables = ['shops', 'catalog_products', 'shopify_webhook_receipts', 'privacy_requests']
    const before = await Promise.all(tables.map((n) => countRows(n)))
    const body = product(9801, [[98011, '1.00', 1]])
    for (const variant of [
      { hmac: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' },
      { hmac: null },
      { secret: 'another-apps-secret' },
      { hmac: 'not base64' },
    ]) {
      const res = await sendShopifyWebhook(t, body, { topic: 'products/create', shop: domain, eventId: 'evt-x', ...variant })
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ ok: false, error: { code: 'INVALID_SIGNATURE', message: expect.any(String) } })
    }
    // A body changed after signing.
    const raw = JSON.stringify(body)
    const signed = await sendShopifyWebhook(t, raw.replace('"1.00"', '"0.01"'), {
      topic: 'products/create',
      shop: domain,
      hmac: (await import('../../src/platforms/shopify/signatures.js')).webhookHmac(raw, SHOPIFY_ENV.SHOPIFY_API_SECRET),
    })
    expect(signed.status).toBe(401)
    expect(await Promise.all(tables.map((n) => countRows(n)))).toEqual(before)
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
  })

  it('refuses a signed delivery without a *.myshopify.com shop domain with 401 INVALID_SIGNATURE', async () => {
    const res = await sendShopifyWebhook(t, { id: 1 }, { topic: 'products/delete', shop: 'evil.example.com' })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('INVALID_SIGNATURE')
  })
})

describe('webhook receipts', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("are kept 7 days, a redelivery inside them being a duplicate, then deleted by the delivery worker's hourly housekeeping", async () => {
    // Only Date is faked (lib/time.ts reads it): timers and I/O run as usual.
    vi.useFakeTimers({ toFake: ['Date'] })
    const start = Date.now()
    const domain = newShopDomain()
    await adminOf(domain)
    expect(await hook(domain, 'products/update', product(9901, [[99011, '10.00', 5]]), { eventId: 'evt-old' })).toBe('processed')
    vi.setSystemTime(start + 3 * DAY_MS)
    expect(await hook(domain, 'products/update', product(9901, [[99011, '9.00', 5]]), { eventId: 'evt-recent' })).toBe('processed')
    const shop = await shopOf(domain)
    // Each delivery is recorded under its event id and under its body's digest (topic `body:…`).
    const receipts = async () =>
      (
        await t.storage.db
          .selectFrom('shopify_webhook_receipts')
          .select('event_id')
          .where('shop_id', '=', shop.id)
          .where('topic', '=', 'products/update')
          .orderBy('event_id')
          .execute()
      ).map((r) => r.event_id)
    const bodyReceipts = async () =>
      (
        await t.storage.db
          .selectFrom('shopify_webhook_receipts')
          .select('event_id')
          .where('shop_id', '=', shop.id)
          .where('topic', '=', 'body:products/update')
          .execute()
      ).length
    expect(await bodyReceipts()).toBe(2)
    const catalog = () =>
      t.storage.db
        .selectFrom('catalog_products')
        .select(['variants'])
        .where('shop_id', '=', shop.id)
        .where('product_id', '=', '9901')
        .executeTakeFirstOrThrow()

    // An hour past the first one's 7 days: a starting worker's first pass is its housekeeping.
    vi.setSystemTime(start + 7 * DAY_MS + 3_600_000)
    const housekeeper = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, platforms: configuredPlatforms(t.config) })
    housekeeper.start()
    await housekeeper.stop() // resolves after the pass in progress: the first, which purges
    expect(await receipts()).toEqual(['evt-recent'])
    expect(await bodyReceipts()).toBe(1)
    // The other one is 4 days old: Shopify's redelivery of it is still a duplicate.
    const before = await catalog()
    expect(await hook(domain, 'products/update', product(9901, [[99011, '1.00', 5]]), { eventId: 'evt-recent' })).toBe('duplicate')
    expect(await catalog()).toEqual(before)
    expect(await worker.purgePlatformRecords()).toEqual({ purged: 0, more: false })

    // Three days later it has had its 7 days too.
    vi.setSystemTime(start + 10 * DAY_MS + 3_600_000)
    expect(await worker.purgePlatformRecords()).toEqual({ purged: 2, more: false })
    expect(await receipts()).toEqual([])
    expect(await bodyReceipts()).toBe(0)
  })

  it('of app/uninstalled, shop/redact and customers/redact are kept as long as the shop: a body replayed a year later is a duplicate', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const start = Date.now()
    const domain = newShopDomain()
    await adminOf(domain)
    const shop = await shopOf(domain)
    const redact = { shop_id: 954889, shop_domain: domain, customer: { id: 6901 }, orders_to_redact: [] }
    const uninstall = { id: 954889, myshopify_domain: domain, updated_at: '2026-11-01T10:00:00-05:00' }
    expect(await hook(domain, 'customers/redact', redact, { eventId: 'evt-redact' })).toBe('processed')
    expect(await hook(domain, 'app/uninstalled', uninstall, { eventId: 'evt-uninstall' })).toBe('processed')
    vi.setSystemTime(start + 60_000)
    await adminOf(domain) // the merchant installs the app again
    vi.setSystemTime(start + 365 * DAY_MS)
    expect(await worker.purgePlatformRecords()).toMatchObject({ more: false })
    // Captured bodies, replayed with new event ids: duplicates; the shop stays installed.
    expect(await hook(domain, 'app/uninstalled', uninstall, { eventId: 'evt-replay-1' })).toBe('duplicate')
    expect(await hook(domain, 'customers/redact', redact, { eventId: 'evt-replay-2' })).toBe('duplicate')
    expect((await shopOf(domain)).uninstalledAt).toBeNull()
    const kept = await t.storage.db.selectFrom('shopify_webhook_receipts').select('topic').where('shop_id', '=', shop.id).execute()
    expect(kept.map((r) => r.topic).sort()).toEqual([
      'app/uninstalled',
      'body:app/uninstalled',
      'body:customers/redact',
      'customers/redact',
    ])
  })
})
