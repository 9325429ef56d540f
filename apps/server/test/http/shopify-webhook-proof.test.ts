/**
 * The webhooks the Admin API proves (docs/shopify.md, "What else a webhook must prove"),
 * against the local Shopify emulator on both backends: an `app/uninstalled` of a shop holding
 * a token is Shopify's to confirm (a working token makes the body stale, even one seen
 * before; a refused token lets it act; Shopify unreachable is 503 so Shopify retries), and
 * an `orders/create` must be an order the shop's Admin API knows, or carry the shop's own id
 * in its `order_status_url`.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webhookHmac } from '../../src/platforms/shopify/signatures.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { loggingApp } from '../helpers/logs.js'
import { catalogSyncOver, newShopDomain, sendShopifyWebhook, sessionToken, SHOPIFY_SECRET } from '../helpers/shopify.js'
import { type ShopifyEmulator, startShopifyEmulator } from '../helpers/shopify-emulator.js'

let emulator: ShopifyEmulator
let t: TestApp

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  t = await createTestApp({ env: emulator.env })
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

const shopOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!
const count = async (table: string, shopId: string) =>
  Number(
    (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where shop_id = ${shopId}`.execute(t.storage.db)).rows[0]!.n,
  )
const holdsToken = async (domain: string) => t.app.services.shops.byDomain(domain).then((s) => count('shopify_access_tokens', s!.id))
const callsOf = (domain: string, field: string) => emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields.includes(field))

/** A session of the shop's embedded admin: installs it, and exchanges its session token for Admin API tokens. */
async function session(domain: string) {
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(await holdsToken(domain)).toBe(1)
  // Its catalog sync's Admin API calls end before a test revokes the token (one meeting the revoked token would drop it first).
  await catalogSyncOver(t, (await shopOf(domain)).id)
}

/** A shop Shopify knows, installed through its first session and holding its tokens. */
async function installed(orders: { id: string }[] = []) {
  const domain = newShopDomain()
  emulator.addShop(domain, { orders })
  await session(domain)
  return { domain, shop: await shopOf(domain) }
}

/** A signed body exactly as Shopify sent it once, to send again. */
const uninstallBody = (domain: string, updatedAt: string) =>
  JSON.stringify({ id: Number(emulator.shop(domain).id), myshopify_domain: domain, name: 'Shop', updated_at: updatedAt })
const hook = (domain: string, topic: string, body: unknown) => sendShopifyWebhook(t, body, { topic, shop: domain })

describe('app/uninstalled for a shop holding an Admin API token', () => {
  it('while the token works the app is installed: 200 ignored and nothing changed, for a new body and for one processed before', async () => {
    const { domain, shop } = await installed()
    // A real uninstall (Shopify revoked the tokens), then the merchant installs again.
    const first = uninstallBody(domain, '2026-11-01T10:00:00Z')
    emulator.revokeTokens(domain)
    expect((await hook(domain, 'app/uninstalled', first)).body).toEqual({ ok: true, data: { result: 'processed' } })
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
    await session(domain)
    const receipts = await count('shopify_webhook_receipts', shop.id)

    // The first body replayed under a new event id, and a body never seen: both stale.
    for (const body of [first, uninstallBody(domain, '2026-11-02T10:00:00Z')]) {
      const res = await hook(domain, 'app/uninstalled', body)
      expect(res.body).toEqual({ ok: true, data: { result: 'ignored' } })
      expect((await shopOf(domain)).uninstalledAt).toBeNull()
      expect(await holdsToken(domain)).toBe(1)
      expect(callsOf(domain, 'currentAppInstallation').at(-1)).toMatchObject({ status: 200 })
    }
    expect(await count('shopify_webhook_receipts', shop.id)).toBe(receipts)
  })

  it('logs a warning when it ignores a stale uninstall', async () => {
    const logged = await loggingApp(emulator.env)
    try {
      const domain = newShopDomain()
      emulator.addShop(domain)
      const res = await logged.app.inject({
        method: 'POST',
        url: '/v1/auth/shopify-session',
        payload: { session_token: await sessionToken(domain) },
      })
      expect(res.statusCode).toBe(200)
      const raw = uninstallBody(domain, '2026-11-03T10:00:00Z')
      const delivery = await logged.app.inject({
        method: 'POST',
        url: '/v1/platforms/shopify/webhooks',
        headers: {
          'content-type': 'application/json',
          'x-shopify-topic': 'app/uninstalled',
          'x-shopify-shop-domain': domain,
          'x-shopify-hmac-sha256': webhookHmac(raw, SHOPIFY_SECRET),
        },
        payload: raw,
      })
      expect(delivery.json()).toEqual({ ok: true, data: { result: 'ignored' } })
      expect((await logged.app.services.shops.byDomain(domain))?.uninstalledAt).toBeNull()
      const warning = logged.lines
        .map((l) => JSON.parse(l) as { level: number; msg: string; shop?: string; topic?: string })
        .find((l) => l.level === 40 && l.topic === 'app/uninstalled')
      expect(warning).toMatchObject({ shop: domain, msg: expect.stringContaining('stale') })
    } finally {
      await logged.close()
    }
  })

  it('when Shopify refuses the token the uninstall proceeds, tokens deleted, even for a body processed before', async () => {
    const { domain, shop } = await installed()
    const body = uninstallBody(domain, '2026-11-04T10:00:00Z')
    emulator.revokeTokens(domain)
    expect((await hook(domain, 'app/uninstalled', body)).body.data.result).toBe('processed')
    await session(domain)

    // Uninstalled again at Shopify; its body is byte for byte the one processed before.
    emulator.revokeTokens(domain)
    expect((await hook(domain, 'app/uninstalled', body)).body).toEqual({ ok: true, data: { result: 'processed' } })
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
    expect(await holdsToken(domain)).toBe(0)
    // Refused before its query is read: the emulator records no field of a 401.
    expect(emulator.graphqlRequests.filter((r) => r.shop === domain).at(-1)).toMatchObject({ status: 401 })
    expect(await count('shopify_webhook_receipts', shop.id)).toBeGreaterThan(0)
  })

  it("while Shopify cannot be reached: 503 with Retry-After, nothing changed; Shopify's retry then acts", async () => {
    const { domain, shop } = await installed()
    const body = uninstallBody(domain, '2026-11-05T10:00:00Z')
    const eventId = `evt-${domain}`
    emulator.revokeTokens(domain)
    await emulator.goDown()
    let res: Awaited<ReturnType<typeof sendShopifyWebhook>>
    try {
      res = await sendShopifyWebhook(t, body, { topic: 'app/uninstalled', shop: domain, eventId })
    } finally {
      await emulator.comeBack()
    }
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('UNAVAILABLE')
    expect(res.headers['retry-after']).toEqual(expect.any(String))
    expect((await shopOf(domain)).uninstalledAt).toBeNull()
    expect(await holdsToken(domain)).toBe(1)
    expect(await count('shopify_webhook_receipts', shop.id)).toBe(0)

    const retry = await sendShopifyWebhook(t, body, { topic: 'app/uninstalled', shop: domain, eventId })
    expect(retry.body).toEqual({ ok: true, data: { result: 'processed' } })
    expect((await shopOf(domain)).uninstalledAt).not.toBeNull()
  })
})

describe('orders/create must be an order of the shop', () => {
  const order = (id: string, extra: Record<string, unknown> = {}) => ({
    id: Number(id),
    customer: { id: 7901 },
    line_items: [{ product_id: 4911, quantity: 1 }],
    ...extra,
  })

  it("another shop's order, unknown to this shop's Admin API, is 400 and writes nothing; the shop's own is processed", async () => {
    const other = await installed([{ id: 'gid://shopify/Order/5550001' }])
    const { domain, shop } = await installed([{ id: 'gid://shopify/Order/5550002' }])

    const foreign = await hook(domain, 'orders/create', order('5550001'))
    expect(foreign.status).toBe(400)
    expect(foreign.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.id', message: expect.any(String) }] })
    expect(callsOf(domain, 'order').at(-1)).toMatchObject({ status: 200, variables: { id: 'gid://shopify/Order/5550001' } })
    expect(await count('orders', shop.id)).toBe(0)
    expect(await count('shopify_webhook_receipts', shop.id)).toBe(0)

    expect((await hook(domain, 'orders/create', order('5550002'))).body).toEqual({ ok: true, data: { result: 'processed' } })
    expect(await count('orders', shop.id)).toBe(1)
    // Its own shop takes it.
    expect((await hook(other.domain, 'orders/create', order('5550001'))).body.data.result).toBe('processed')
    expect(await count('orders', other.shop.id)).toBe(1)
  })

  it('while Shopify cannot be reached: 503, nothing written', async () => {
    const { domain, shop } = await installed([{ id: 'gid://shopify/Order/5550003' }])
    await emulator.goDown()
    try {
      const res = await hook(domain, 'orders/create', order('5550003'))
      expect(res.status).toBe(503)
      expect(res.body.error.code).toBe('UNAVAILABLE')
    } finally {
      await emulator.comeBack()
    }
    expect(await count('orders', shop.id)).toBe(0)
    expect(await count('shopify_webhook_receipts', shop.id)).toBe(0)
  })

  it("order_status_url decides: the shop's Shopify id is read from the Admin API first when unknown", async () => {
    const { domain, shop } = await installed()
    const own = emulator.shop(domain).id
    await t.storage.db.updateTable('shops').set({ shopify_shop_id: null }).where('id', '=', shop.id).execute()
    t.app.services.shops.forget(shop)
    const statusUrl = (shopifyId: string) => `https://${domain}/${shopifyId}/orders/0a1b2c/authenticate?key=k`

    const foreign = await hook(domain, 'orders/create', order('5550004', { order_status_url: statusUrl('99887766') }))
    expect(foreign.status).toBe(400)
    expect(foreign.body.error.details).toEqual([{ path: 'body.order_status_url', message: expect.any(String) }])
    expect((await shopOf(domain)).shopifyShopId).toBe(own)
    expect(await count('orders', shop.id)).toBe(0)

    // The URL names the shop: processed without asking for the order.
    const res = await hook(domain, 'orders/create', order('5550005', { order_status_url: statusUrl(own) }))
    expect(res.body).toEqual({ ok: true, data: { result: 'processed' } })
    expect(await count('orders', shop.id)).toBe(1)
    expect(callsOf(domain, 'order')).toEqual([])
  })
})
