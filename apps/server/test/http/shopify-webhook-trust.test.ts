/**
 * The Shopify trust boundary: Shopify signs a webhook's body only, so a captured signed body
 * replayed under another topic, shop or event id must change nothing; the unsigned headers
 * are checked before the body is read, and the bodies in flight are capped together. Also
 * the uninstalled shop's customer tokens. Attacks played with Shopify's signing, on both
 * backends; the slow-body cases against a listening server with raw sockets.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookHmac } from '../../src/platforms/shopify/signatures.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { loggingApp } from '../helpers/logs.js'
import { portOf, rawRequest, requestHead } from '../helpers/raw-http.js'
import {
  newShopDomain,
  proxyCall,
  sendShopifyWebhook,
  sessionToken,
  SHOPIFY_ENV,
  SHOPIFY_SECRET,
  SHOPIFY_WEBHOOK_API_VERSION,
} from '../helpers/shopify.js'

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
  Number(
    (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where shop_id = ${shopId}`.execute(t.storage.db)).rows[0]!.n,
  )

/** A genuine signed delivery of shop A, as captured: (raw body, its HMAC). */
function captured(payload: unknown) {
  const raw = JSON.stringify(payload)
  return { raw, hmac: webhookHmac(raw, SHOPIFY_SECRET) }
}
const replay = (c: { raw: string; hmac: string }, topic: string, shop: string, eventId?: string) =>
  sendShopifyWebhook(t, c.raw, { topic, shop, hmac: c.hmac, ...(eventId === undefined ? {} : { eventId }) })

const productBody = (id: number) => ({
  id,
  title: 'Hat',
  handle: `hat-${id}`,
  variants: [{ id: id * 10, price: '5.00', inventory_quantity: 3 }],
})

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
    const order = captured({
      id: 5501,
      email: 'vi@example.com',
      customer: { id: 7101, email: 'vi@example.com' },
      line_items: [{ product_id: 8, variant_id: 80 }],
    })
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

describe('stale signed bodies: replayed, late or of another shop', () => {
  const UNINSTALL_ID = 548380009

  it("a shop's own earlier app/uninstalled and shop/redact bodies, resent after a reinstall under new event ids, change nothing", async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '7501' }, { body: { product_id: '1' } })
    const shop = await shopOf(domain)
    // The genuine uninstall, captured by the attacker; the merchant installs the app again.
    const uninstall = captured({ id: UNINSTALL_ID, name: 'Shop', myshopify_domain: domain, updated_at: '2026-11-20T10:00:00-05:00' })
    expect((await replay(uninstall, 'app/uninstalled', domain, 'evt-genuine-uninstall')).body.data.result).toBe('processed')
    expect((await shopOf(domain)).shopifyShopId).toBe(String(UNINSTALL_ID))
    await adminOf(domain)
    expect((await shopOf(domain)).uninstalledAt).toBeNull()

    const replayed = await replay(uninstall, 'app/uninstalled', domain, 'evt-attacker-1')
    expect(replayed.body).toEqual({ ok: true, data: { result: 'duplicate' } })
    const redact = await replay(captured({ shop_id: UNINSTALL_ID, shop_domain: domain }), 'shop/redact', domain, 'evt-attacker-2')
    expect(redact.body).toEqual({ ok: true, data: { result: 'ignored' } })
    // Online, every row kept: the storefront key and the proxy answer.
    expect((await shopOf(domain)).uninstalledAt).toBeNull()
    expect((await t.call('GET', '/api/v1/products/1/reviews', { headers: { 'x-storefront-key': shop.storefrontKey } })).status).toBe(200)
    expect((await proxyCall(t, 'GET', '/v1/wishlists/me', { shop: domain, customerId: '7501' })).body.data.items).toHaveLength(1)
  })

  it('shop/redact erases only after SHOPIFY_SHOP_REDACT_MIN_HOURS (48) of uninstall, and only for the shop id its app/uninstalled named', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    const shop = await shopOf(domain)
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '7601' }, { body: { product_id: '1' } })
    expect((await replay(captured({ id: UNINSTALL_ID, myshopify_domain: domain }), 'app/uninstalled', domain)).body.data.result).toBe(
      'processed',
    )
    const redactBody = (shopId: number) => captured({ shop_id: shopId, shop_domain: domain })
    // At once (the probe's order), then 47 h later: too early.
    expect((await replay(redactBody(UNINSTALL_ID), 'shop/redact', domain)).body.data.result).toBe('ignored')
    await t.storage.db
      .updateTable('shops')
      .set({ uninstalled_at: Date.now() - 47 * 3_600_000 })
      .where('id', '=', shop.id)
      .execute()
    t.app.services.shops.forget(shop)
    expect((await replay(redactBody(UNINSTALL_ID), 'shop/redact', domain)).body.data.result).toBe('ignored')
    // 49 h: another shop id is still ignored; the shop's own erases it.
    await t.storage.db
      .updateTable('shops')
      .set({ uninstalled_at: Date.now() - 49 * 3_600_000 })
      .where('id', '=', shop.id)
      .execute()
    expect((await replay(redactBody(UNINSTALL_ID + 1), 'shop/redact', domain)).body.data.result).toBe('ignored')
    expect(await count('wishlist_items', shop.id)).toBe(1)
    expect((await replay(redactBody(UNINSTALL_ID), 'shop/redact', domain)).body.data.result).toBe('processed')
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
    expect(await count('wishlist_items', shop.id)).toBe(0)
  })

  it('no webhook re-installs an uninstalled shop: a products/update (even a delete-shaped body) is ignored and shop/redact still erases', async () => {
    const domain = newShopDomain()
    await adminOf(domain)
    const shop = await shopOf(domain)
    expect((await replay(captured({ id: UNINSTALL_ID, myshopify_domain: domain }), 'app/uninstalled', domain)).body.data.result).toBe(
      'processed',
    )
    expect((await replay(captured({ id: 1 }), 'products/delete', domain)).body.data.result).toBe('ignored')
    expect((await replay(captured(productBody(4701)), 'products/update', domain)).body.data.result).toBe('ignored')
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
    await t.storage.db
      .updateTable('shops')
      .set({ uninstalled_at: Date.now() - 49 * 3_600_000 })
      .where('id', '=', shop.id)
      .execute()
    t.app.services.shops.forget(shop)
    expect((await replay(captured({ shop_id: UNINSTALL_ID, shop_domain: domain }), 'shop/redact', domain)).body.data.result).toBe(
      'processed',
    )
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
  })

  it('an older products/update than the catalog holds is ignored: no rollback, no back-in-stock', async () => {
    const domain = newShopDomain()
    const admin = await adminOf(domain)
    const shop = await shopOf(domain)
    await t.app.services.shops.setPlan(shop.id, 'growth')
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '7701' }, { body: { product_id: '4801' } })
    const hooked = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: 'https://hooks.example.com/stock', events: ['wishlist.product.back_in_stock'] },
    })
    expect(hooked.status).toBe(201)
    const at = (hour: number, quantity: number) =>
      captured({
        ...productBody(4801),
        updated_at: `2026-11-20T${String(hour).padStart(2, '0')}:00:00-05:00`,
        variants: [{ id: 48010, price: '5.00', inventory_quantity: quantity }],
      })
    const earlier = at(9, 5)
    expect((await replay(at(8, 0), 'products/update', domain)).body.data.result).toBe('processed')
    expect((await replay(at(10, 0), 'products/update', domain)).body.data.result).toBe('processed') // sold out at 10:00
    // The 09:00 state (in stock) delivered late, or replayed: older than the catalog's.
    expect((await replay(earlier, 'products/update', domain)).body.data.result).toBe('ignored')
    expect((await replay(at(10, 0), 'products/update', domain)).body.data.result).toBe('duplicate') // the same body again
    const row = await t.storage.db
      .selectFrom('catalog_products')
      .select(['variants', 'source_updated_at'])
      .where('shop_id', '=', shop.id)
      .where('product_id', '=', '4801')
      .executeTakeFirstOrThrow()
    expect(JSON.parse(row.variants)).toEqual([expect.objectContaining({ inventory_quantity: 0 })])
    expect(Number(row.source_updated_at)).toBe(Date.parse('2026-11-20T15:00:00Z'))
    expect((await count('outbox', shop.id)) + (await count('outbox_fan_outs', shop.id))).toBe(0)
    // A newer one applies, and signals.
    expect((await replay(at(11, 4), 'products/update', domain)).body.data.result).toBe('processed')
    expect((await count('outbox', shop.id)) + (await count('outbox_fan_outs', shop.id))).toBeGreaterThan(0)
  })

  it("orders/create whose order_status_url names another shop id is refused 400; another shop's order for an unknown domain is ignored", async () => {
    const a = newShopDomain()
    const b = newShopDomain()
    await adminOf(b)
    const shopB = await shopOf(b)
    // B's Shopify id is known from its uninstall; the merchant installs again.
    expect((await replay(captured({ id: 1111, myshopify_domain: b }), 'app/uninstalled', b)).body.data.result).toBe('processed')
    await adminOf(b)
    const order = (shopId: number) => ({
      id: 9100 + shopId,
      order_status_url: `https://${a}/${shopId}/orders/abc123/authenticate?key=k`,
      customer: { id: 7801 },
      line_items: [{ product_id: 4901 }],
    })
    const foreign = await replay(captured(order(2222)), 'orders/create', b)
    expect(foreign.status).toBe(400)
    expect(foreign.body.error.details).toEqual([{ path: 'body.order_status_url', message: expect.any(String) }])
    expect(await count('orders', shopB.id)).toBe(0)
    expect((await replay(captured(order(1111)), 'orders/create', b)).body.data.result).toBe('processed')
    expect(await count('orders', shopB.id)).toBe(1)
    // A's order for a domain the app does not know: 200 ignored, no shop created.
    const unknown = newShopDomain()
    expect((await replay(captured(order(2222)), 'orders/create', unknown)).body.data.result).toBe('ignored')
    expect(await t.app.services.shops.byDomain(unknown)).toBeUndefined()
  })
})

describe('shop/redact', () => {
  it('for a shop the app is installed on answers 200 ignored, erases nothing and logs a warning', async () => {
    const logged = await loggingApp(SHOPIFY_ENV)
    try {
      const domain = newShopDomain()
      const session = await logged.app.inject({
        method: 'POST',
        url: '/v1/auth/shopify-session',
        payload: { session_token: await sessionToken(domain) },
      })
      expect(session.statusCode).toBe(200)
      const raw = JSON.stringify({ shop_id: 1, shop_domain: domain })
      const res = await logged.app.inject({
        method: 'POST',
        url: '/v1/platforms/shopify/webhooks',
        headers: {
          'content-type': 'application/json',
          'x-shopify-topic': 'shop/redact',
          'x-shopify-shop-domain': domain,
          'x-shopify-hmac-sha256': webhookHmac(raw, SHOPIFY_SECRET),
        },
        payload: raw,
      })
      expect(res.json()).toEqual({ ok: true, data: { result: 'ignored' } })
      expect(await logged.app.services.shops.byDomain(domain)).toBeDefined()
      const warning = logged.lines
        .map((l) => JSON.parse(l) as { level: number; msg: string; shop?: string })
        .find((l) => l.level === 40 && l.msg.includes('shop/redact'))
      expect(warning).toMatchObject({ shop: domain })
    } finally {
      await logged.close()
    }
  })
})

describe('the delivery log', () => {
  it("names each delivery's X-Shopify-Api-Version beside its shop, topic and result", async () => {
    const logged = await loggingApp(SHOPIFY_ENV)
    try {
      const domain = newShopDomain()
      const session = await logged.app.inject({
        method: 'POST',
        url: '/v1/auth/shopify-session',
        payload: { session_token: await sessionToken(domain) },
      })
      expect(session.statusCode).toBe(200)
      const raw = JSON.stringify({ id: 8123, variants: [], updated_at: '2026-11-01T10:00:00Z' })
      const res = await logged.app.inject({
        method: 'POST',
        url: '/v1/platforms/shopify/webhooks',
        headers: {
          'content-type': 'application/json',
          'x-shopify-topic': 'products/update',
          'x-shopify-shop-domain': domain,
          'x-shopify-api-version': SHOPIFY_WEBHOOK_API_VERSION,
          'x-shopify-hmac-sha256': webhookHmac(raw, SHOPIFY_SECRET),
        },
        payload: raw,
      })
      expect(res.statusCode).toBe(200)
      const line = logged.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'Shopify webhook')
      expect(line).toMatchObject({
        level: 30,
        shop: domain,
        topic: 'products/update',
        apiVersion: SHOPIFY_WEBHOOK_API_VERSION,
        result: res.json().data.result,
      })
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
    server = await createTestApp({ env: { ...SHOPIFY_ENV, SHOPIFY_WEBHOOK_BUFFER_MB: '5', METRICS_TOKEN: 'metrics-test-token' } })
    port = portOf(await server.app.listen({ port: 0, host: '127.0.0.1' }))
  })
  afterAll(() => server.close())

  const head = (headers: Record<string, string | number>) =>
    requestHead('POST', '/v1/platforms/shopify/webhooks', {
      'content-type': 'application/json',
      'x-shopify-topic': 'products/update',
      ...headers,
    })
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

  /** A signed products/update of a shop `server` knows, whole, from `localAddress`. */
  async function genuineDelivery(localAddress: string) {
    const domain = newShopDomain()
    expect((await server.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })).status).toBe(
      200,
    )
    const raw = JSON.stringify(productBody(5001))
    const ex = await rawRequest(
      port,
      head({
        'x-shopify-shop-domain': domain,
        'x-shopify-hmac-sha256': webhookHmac(raw, SHOPIFY_SECRET),
        'content-length': Buffer.byteLength(raw),
      }),
      raw,
      { localAddress },
    )
    const res = await ex.response
    ex.socket.destroy()
    return res
  }
  /** A sample of the server's /metrics, by its full name (labels included). */
  const metric = async (name: string) => {
    const lines = ((await server.call('GET', '/metrics', { token: 'metrics-test-token' })).body as string).split('\n')
    const line = lines.find((l) => l.startsWith(`${name} `))
    return line === undefined ? NaN : Number(line.slice(name.length + 1))
  }

  it("64 idle senders declaring 1 MiB and sending 1 byte: 60 refused 429 at once, the address's 4 dropped 408 after a second, Shopify's deliveries answered meanwhile", async () => {
    const idle = await Promise.all(
      Array.from({ length: 64 }, () =>
        rawRequest(
          port,
          head({ 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': goodHmac, 'content-length': 1024 * 1024 }),
          ' ',
          { localAddress: '127.0.0.5' },
        ),
      ),
    )
    const started = Date.now()
    const answered: { status: number; at: number }[] = []
    const settled = idle.map((ex) => ex.response.then((r) => answered.push({ status: r.status, at: Date.now() - started })))
    // Wait for the 60 refusals: they come at once.
    for (let i = 0; i < 500 && answered.length < 60; i++) await new Promise((r) => setImmediate(r))
    await Promise.race([Promise.all(settled), new Promise((r) => setTimeout(r, 500))])
    const refusedAtOnce = answered.filter((a) => a.status === 429)
    expect(refusedAtOnce).toHaveLength(60)
    // The 4 held hold 4 bytes of the budget: a genuine delivery from Shopify's address is answered.
    expect(await metric('wishlist_shopify_webhook_body_bytes')).toBe(4)
    const genuine = await genuineDelivery('127.0.0.6')
    expect(JSON.parse(genuine.body)).toEqual({ ok: true, data: { result: 'processed' } })
    await Promise.all(settled)
    const dropped = answered.filter((a) => a.status === 408)
    expect(dropped).toHaveLength(4)
    for (const d of dropped) expect(d.at).toBeGreaterThanOrEqual(1_000)
    await Promise.all(idle.map((ex) => ex.closed))
    expect(await metric('wishlist_shopify_webhook_body_bytes')).toBe(0)
    expect(await metric('wishlist_shopify_webhook_refused_total{reason="per_client"}')).toBeGreaterThanOrEqual(60)
    expect(await metric('wishlist_shopify_webhook_refused_total{reason="slow"}')).toBeGreaterThanOrEqual(4)
  })

  it('counts the budget (SHOPIFY_WEBHOOK_BUFFER_MB) in bytes received: a body that would exceed it is refused 503, smaller ones pass, the bytes come back when the holder goes', async () => {
    // One sender delivers 4 MiB of a declared 5 MiB at a fair pace, and keeps its connection.
    const holder = await rawRequest(
      port,
      head({ 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': goodHmac, 'content-length': 5 * 1024 * 1024 }),
      Buffer.alloc(4 * 1024 * 1024, ' '),
      { localAddress: '127.0.0.7' },
    )
    for (let i = 0; i < 200 && (await metric('wishlist_shopify_webhook_body_bytes')) < 4 * 1024 * 1024; i++)
      await new Promise((r) => setTimeout(r, 10))
    expect(await metric('wishlist_shopify_webhook_body_bytes')).toBe(4 * 1024 * 1024)
    // 2 MiB more would pass the 5 MiB: refused while they arrive, with Retry-After.
    const big = await rawRequest(
      port,
      head({ 'x-shopify-shop-domain': newShopDomain(), 'x-shopify-hmac-sha256': goodHmac, 'content-length': 2 * 1024 * 1024 }),
      Buffer.alloc(2 * 1024 * 1024, ' '),
      { localAddress: '127.0.0.8' },
    )
    const busy = await big.response
    expect(busy.status).toBe(503)
    expect(JSON.parse(busy.body).error.code).toBe('UNAVAILABLE')
    expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0)
    big.socket.destroy()
    // A delivery of a few hundred bytes fits beside the holder's 4 MiB.
    expect((await genuineDelivery('127.0.0.9')).status).toBe(200)
    holder.socket.destroy()
    await holder.closed
    for (let i = 0; i < 200 && (await metric('wishlist_shopify_webhook_body_bytes')) > 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(await metric('wishlist_shopify_webhook_body_bytes')).toBe(0)
  })
})
