/**
 * The Shopify trust boundary: Shopify signs a webhook's body only, so a captured signed body
 * replayed under another topic, shop or event id must change nothing; the unsigned headers
 * are checked before the body is read, and the bodies in flight are capped together. Also
 * the uninstalled shop's customer tokens. Attacks played with Shopify's signing, on both
 * backends; the slow-body cases against a listening server with raw sockets.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookHmac } from '../../src/modules/shopify/signatures.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { loggingApp } from '../helpers/logs.js'
import { portOf, rawRequest, requestHead } from '../helpers/raw-http.js'
import { newShopDomain, proxyCall, sendShopifyWebhook, sessionToken, SHOPIFY_ENV, SHOPIFY_SECRET } from '../helpers/shopify.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ env: SHOPIFY_ENV })
})
afterAll(() => t.close())

async function adminOf(domain: string): Promise<string> {
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.token as string
}
const shopOf = async (domain: string) => {
  const shop = await t.app.services.shops.byDomain(domain)
  if (!shop) throw new Error(`no shop ${domain}`)
  return shop
}
const count = async (table: string, shopId: string) =>
  Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where shop_id = ${shopId}`.execute(t.storage.db)).rows[0]!.n)

/** A genuine signed delivery of shop A, as captured: (raw body, its HMAC). */
function captured(payload: unknown) {
  const raw = JSON.stringify(payload)
  return { raw, hmac: webhookHmac(raw, SHOPIFY_SECRET) }
}
const replay = (c: { raw: string; hmac: string }, topic: string, shop: string, eventId?: string) =>
  sendShopifyWebhook(t, c.raw, { topic, shop, hmac: c.hmac, ...(eventId === undefined ? {} : { eventId }) })

const productBody = (id: number) => ({ id, title: 'Hat', handle: `hat-${id}`, variants: [{ id: id * 10, price: '5.00', inventory_quantity: 3 }] })

describe('a captured signed body replayed under other headers', () => {
  it('a products/update body of shop A, resent as app/uninstalled and then shop/redact for shop B, is refused and B keeps every row', async () => {
    const a = newShopDomain()
    const b = newShopDomain()
    await adminOf(a)
    await adminOf(b)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: b, customerId: '7001' }, { body: { product_id: '1' } })
    const shopB = await shopOf(b)
    const body = captured(productBody(4401))
    expect((await replay(body, 'products/update', a)).status).toBe(200) // genuine

    for (const topic of ['app/uninstalled', 'shop/redact', 'customers/redact', 'customers/data_request', 'orders/create']) {
      const res = await replay(body, topic, b, `evt-replay-${topic}`)
      expect({ topic, status: res.status }).toEqual({ topic, status: 400 })
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(/^body\./) })]))
    }
    expect((await shopOf(b)).uninstalledAt).toBeNull()
    expect(await count('wishlist_items', shopB.id)).toBe(1)
    expect(await count('shopify_webhook_receipts', shopB.id)).toBe(0)
    expect(await count('privacy_requests', shopB.id)).toBe(0)
  })

  it('an orders/create body resent as customers/redact erases nobody', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '7101' }, { body: { product_id: '9' } })
    const order = captured({ id: 5501, email: 'vi@example.com', customer: { id: 7101, email: 'vi@example.com' }, line_items: [{ product_id: 8, variant_id: 80 }] })
    const res = await replay(order, 'customers/redact', domain)
    expect(res.status).toBe(400)
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(['body.shop_domain', 'body.orders_to_redact'])
    expect(await count('wishlist_items', (await shopOf(domain)).id)).toBe(1)
  })

  it('a compliance body naming shop A is refused when resent for shop B', async () => {
    const a = newShopDomain()
    const b = newShopDomain()
    await adminOf(b)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: b, customerId: '7201' }, { body: { product_id: '9' } })
    const redact = captured({ shop_id: 1, shop_domain: a, customer: { id: 7201, email: 'x@example.com' }, orders_to_redact: [] })
    const res = await replay(redact, 'customers/redact', b)
    expect(res.status).toBe(400)
    expect(res.body.error.details).toEqual([{ path: 'body.shop_domain', message: 'must be the X-Shopify-Shop-Domain of the delivery' }])
    expect(await count('wishlist_items', (await shopOf(b)).id)).toBe(1)
    const shopRedact = captured({ shop_id: 1, shop_domain: a })
    expect((await replay(shopRedact, 'shop/redact', b)).status).toBe(400)
    const uninstall = captured({ id: 1, myshopify_domain: a })
    expect((await replay(uninstall, 'app/uninstalled', b)).status).toBe(400)
    expect((await shopOf(b)).uninstalledAt).toBeNull()
  })

  it('a refused body does not burn its event id: the genuine delivery with that id is processed', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    const wrong = captured(productBody(4501))
    expect((await replay(wrong, 'orders/create', domain, 'evt-shared')).status).toBe(400)
    const genuine = captured({ id: 5601, customer: { id: 7301 }, line_items: [{ product_id: 4501 }] })
    const res = await replay(genuine, 'orders/create', domain, 'evt-shared')
    expect(res.body).toEqual({ ok: true, data: { result: 'processed' } })
  })

  it('an unknown shop is not created by a refused body', async () => {
    const domain = newShopDomain()
    expect((await replay(captured(productBody(4601)), 'app/uninstalled', domain)).status).toBe(400)
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
  })
})

describe('shop/redact', () => {
  it('for a shop the app is installed on answers 200 ignored, erases nothing and logs a warning', async () => {
    const logged = await loggingApp(SHOPIFY_ENV)
    try {
      const domain = newShopDomain()
      const session = await logged.app.inject({ method: 'POST', url: '/v1/auth/shopify-session', payload: { session_token: await sessionToken(domain) } })
      expect(session.statusCode).toBe(200)
      const raw = JSON.stringify({ shop_id: 1, shop_domain: domain })
      const res = await logged.app.inject({
        method: 'POST',
        url: '/v1/platforms/shopify/webhooks',
        headers: { 'content-type': 'application/json', 'x-shopify-topic': 'shop/redact', 'x-shopify-shop-domain': domain, 'x-shopify-hmac-sha256': webhookHmac(raw, SHOPIFY_SECRET) },
        payload: raw,
      })
      expect(res.json()).toEqual({ ok: true, data: { result: 'ignored' } })
      expect(await logged.app.services.shops.byDomain(domain)).toBeDefined()
      const warning = logged.lines.map((l) => JSON.parse(l) as { level: number; msg: string; shop?: string }).find((l) => l.level === 40 && l.msg.includes('shop/redact'))
      expect(warning).toMatchObject({ shop: domain })
    } finally {
      await logged.close()
    }
  })
})

describe('an uninstalled shop', () => {
  it('refuses its customer tokens and their exchange with 403; admin tokens keep working (the merchant can still export)', async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const shop = await shopOf(domain)
    await t.app.services.shops.setPlan(shop.id, 'starter')
    const key = await t.app.services.shops.createApiKey(shop.id, { name: 'headless', scope: 'admin' })
    const exchange = () => t.call('POST', '/v1/auth/token', { body: { api_key: key.keyId, api_secret: key.secret, customer_id: '7401' } })
    const issued = await exchange()
    expect(issued.status).toBe(200)
    const customer = issued.body.data.token as string
    expect((await t.call('GET', '/v1/wishlists/me', { token: customer })).status).toBe(200)

    const raw = JSON.stringify({ id: 1, myshopify_domain: domain })
    expect((await sendShopifyWebhook(t, raw, { topic: 'app/uninstalled', shop: domain })).status).toBe(200)

    const refused = await t.call('GET', '/v1/wishlists/me', { token: customer })
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe('FORBIDDEN')
    const again = await exchange()
    expect(again.status).toBe(403)
    expect(again.body.error.code).toBe('FORBIDDEN')
    // The merchant's admin tokens: the shop, its items, its export.
    expect((await t.call('GET', '/v1/admin/shop', { token: admin })).status).toBe(200)
    expect((await t.call('GET', '/v1/wishlists/7401', { token: admin })).status).toBe(200)
    expect((await t.call('GET', '/v1/admin/export/wishlists.csv', { token: admin })).status).toBe(200)
    const adminExchange = await t.call('POST', '/v1/auth/token', { body: { api_key: key.keyId, api_secret: key.secret } })
    expect(adminExchange.status).toBe(200)
  })
})

describe('before the body is read (a listening server, raw sockets)', () => {
  let server: TestApp
  let port: number
  beforeAll(async () => {
    // The smallest budget of bodies in flight: one body of Shopify's 5 MiB limit.
    server = await createTestApp({ env: { ...SHOPIFY_ENV, SHOPIFY_WEBHOOK_BUFFER_MB: '5' } })
    port = portOf(await server.app.listen({ port: 0, host: '127.0.0.1' }))
  })
  afterAll(() => server.close())

  const head = (headers: Record<string, string | number>) =>
    requestHead('POST', '/v1/platforms/shopify/webhooks', { 'content-type': 'application/json', 'x-shopify-topic': 'products/update', ...headers })
  const goodHmac = webhookHmac('{}', SHOPIFY_SECRET)

  it('refuses a missing or malformed HMAC header, or a domain that is not *.myshopify.com, with 401 at once (the body never awaited)', async () => {
    const cases: Record<string, string | number>[] = [
      { 'x-shopify-shop-domain': newShopDomain() },
      { 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': 'bm90IGEgbWFj' },
      { 'x-shopify-shop-domain': 'victim.example.com', 'x-shopify-hmac-sha256': goodHmac },
    ]
    for (const headers of cases) {
      const ex = await rawRequest(port, head({ ...headers, 'content-length': 4 * 1024 * 1024 }))
      const res = await ex.response
      expect(res.status).toBe(401)
      expect(JSON.parse(res.body).error.code).toBe('INVALID_SIGNATURE')
      ex.socket.destroy()
    }
  })

  it('caps the bodies in flight together: beyond SHOPIFY_WEBHOOK_BUFFER_MB, 503 with Retry-After, until they are gone', async () => {
    const stalled = await rawRequest(port, head({ 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': goodHmac, 'content-length': 5 * 1024 * 1024 }), Buffer.alloc(64 * 1024, ' '))
    const next = await rawRequest(port, head({ 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': goodHmac, 'content-length': 2 }), '{}')
    const busy = await next.response
    expect(busy.status).toBe(503)
    expect(JSON.parse(busy.body).error.code).toBe('UNAVAILABLE')
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0)
    next.socket.destroy()
    // The stalled sender goes away: its reservation is given back when its connection closes.
    stalled.socket.destroy()
    await stalled.closed
    let status = 503
    for (let attempt = 0; attempt < 50 && status === 503; attempt++) {
      const retry = await rawRequest(port, head({ 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': goodHmac, 'content-length': 2 }), '{}')
      status = (await retry.response).status
      retry.socket.destroy()
    }
    expect(status).toBe(400) // accepted, read, and refused by products/update's shape
  })
})
