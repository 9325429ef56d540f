/**
 * Shopify app mode, the embedded admin (docs/api.md, "Session tokens"): a Shopify session
 * token as the bearer credential of the admin routes, as the embedded dashboard sends one
 * fresh from App Bridge with every call; and the setup guide's `GET /v1/admin/platform-setup`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, forgeToken, type TestApp } from '../helpers/app.js'
import { newShopDomain, sendShopifyWebhook, sessionToken, SHOPIFY_API_KEY, SHOPIFY_ENV } from '../helpers/shopify.js'

let t: TestApp

beforeAll(async () => {
  t = await createTestApp({ env: SHOPIFY_ENV })
})
afterAll(() => t.close())

const shopOf = (token: string) => t.call('GET', '/v1/admin/shop', { token })
const nowS = () => Math.floor(Date.now() / 1000)

/** 401 INVALID_TOKEN, as every bearer token that does not hold is answered, and no shop made. */
async function refused(token: string) {
  const shopsBefore = (await t.storage.db.selectFrom('shops').select('id').execute()).length
  const res = await shopOf(token)
  expect(res.status, JSON.stringify(res.body)).toBe(401)
  expect(res.body).toEqual({ ok: false, error: { code: 'INVALID_TOKEN', message: expect.any(String) } })
  expect(res.headers['www-authenticate']).toMatch(/^Bearer /)
  expect((await t.storage.db.selectFrom('shops').select('id').execute()).length).toBe(shopsBefore)
}

describe('a session token as the bearer credential of the admin routes', () => {
  it("acts as an admin token of its shop's session key: the shop made on first use, the key the exchange uses", async () => {
    const domain = newShopDomain()
    const first = await shopOf(await sessionToken(domain))
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.data).toMatchObject({ domain, plan: 'free', uninstalledAt: null })
    expect(first.headers['cache-control']).toBe('private, no-store')

    // Each call a fresh token, as App Bridge gives them: the same shop, one session key.
    const settings = await t.call('PATCH', '/v1/admin/settings', { token: await sessionToken(domain), body: { share_link_ttl_days: 9 } })
    expect(settings.status).toBe(200)
    expect((await shopOf(await sessionToken(domain))).body.data.settings.share_link_ttl_days).toBe(9)
    const keys = await t.call('GET', '/v1/admin/api-keys', { token: await sessionToken(domain) })
    expect(keys.body.data.apiKeys).toEqual([expect.objectContaining({ name: 'Shopify embedded admin', scope: 'admin' })])

    // The exchange, kept for other clients, mints its admin token from that same key.
    const exchanged = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
    expect(exchanged.status).toBe(200)
    const viaToken = await t.call('GET', '/v1/admin/api-keys', { token: exchanged.body.data.token })
    expect(viaToken.body.data.apiKeys.map((k: { keyId: string }) => k.keyId)).toEqual(
      keys.body.data.apiKeys.map((k: { keyId: string }) => k.keyId),
    )
  })

  it("counts in the rate-limit bucket of the shop's session key, as the exchanged admin token does", async () => {
    const domain = newShopDomain()
    const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining'])
    const a = await shopOf(await sessionToken(domain))
    const b = await shopOf(await sessionToken(domain))
    expect(remaining(b)).toBe(remaining(a) - 1)
    const exchanged = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
    expect(remaining(await shopOf(exchanged.body.data.token))).toBe(remaining(b) - 1)
  })

  it("names its own shop only: another shop's token reads that shop, an issuer of another shop is refused", async () => {
    const mine = newShopDomain()
    const theirs = newShopDomain()
    await t.call('PATCH', '/v1/admin/settings', { token: await sessionToken(mine), body: { reviews_auto_approve: true } })
    const other = await shopOf(await sessionToken(theirs))
    expect(other.body.data).toMatchObject({ domain: theirs, settings: { reviews_auto_approve: false } })
    await refused(await sessionToken(mine, { iss: `https://${theirs}/admin` }))
    await refused(await sessionToken(mine, { dest: 'https://evil.example.com', iss: 'https://evil.example.com/admin' }))
  })

  it('is refused (401 INVALID_TOKEN, as any bearer token that does not hold) when signed for another app, with another secret, expired, not yet valid, or of another algorithm', async () => {
    const domain = newShopDomain()
    await refused(await sessionToken(domain, { aud: 'another-app-client-id' }))
    await refused(await sessionToken(domain, { secret: 'another-apps-secret' }))
    await refused(await sessionToken(domain, { exp: nowS() - 10 }))
    await refused(await sessionToken(domain, { nbf: nowS() + 10 }))
    await refused(await sessionToken(domain, { alg: 'HS512' }))
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
  })

  it('is refused once it has expired, though it was accepted (and cached) before', async () => {
    const domain = newShopDomain()
    const exp = nowS() + 2
    const token = await sessionToken(domain, { exp })
    expect((await shopOf(token)).status).toBe(200)
    expect((await shopOf(token)).status).toBe(200)
    // The clock moves past exp and its 5 s of leeway (vitest's fake Date; timers stay real).
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime((exp + 5) * 1000 + 50)
      await refused(token)
    } finally {
      vi.useRealTimers()
    }
  })

  it('issued before the uninstall: 403 FORBIDDEN, even for a token accepted before; one issued after installs the shop again', async () => {
    const domain = newShopDomain()
    const early = await sessionToken(domain, { iat: nowS() - 20, nbf: nowS() - 20 })
    expect((await shopOf(early)).status).toBe(200)
    const shop = (await t.app.services.shops.byDomain(domain))!
    await t.app.services.shops.uninstall(shop.id, Date.now(), '1')

    for (const token of [early, await sessionToken(domain, { iat: nowS() - 30, nbf: nowS() - 30 })]) {
      const res = await shopOf(token)
      expect(res.status).toBe(403)
      expect(res.body.error.code).toBe('FORBIDDEN')
    }
    expect((await t.app.services.shops.byDomain(domain))!.uninstalledAt).not.toBeNull()

    const after = await shopOf(await sessionToken(domain, { iat: nowS() + 1, nbf: nowS() }))
    expect(after.status).toBe(200)
    expect(after.body.data.uninstalledAt).toBeNull()
  })

  it("a token that is neither the service's nor a session token is the service's 401 INVALID_TOKEN; the service's own still work", async () => {
    const created = await t.createShop('growth')
    await refused(await forgeToken({ sub: 'key:x', shop: created.id, kid: created.keyId, scope: 'admin' }, { iss: 'someone-else' }))
    await refused(await forgeToken({ dest: 42 }, { secret: 'whatever-secret-whatever-secret', iss: 'someone-else' }))
    await refused('not.a.token')
    await refused('garbage')
    expect((await shopOf(await created.adminToken())).body.data.domain).toBe(created.domain)
  })
})

describe('GET /v1/admin/platform-setup', () => {
  it('tells the setup guide where the shop stands: catalog, plan and the theme editor link to the app embed', async () => {
    const domain = newShopDomain()
    const setup = async () => t.call('GET', '/v1/admin/platform-setup', { token: await sessionToken(domain) })
    const first = await setup()
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.data).toEqual({
      catalog: { state: 'not_started', products: 0, updatedAt: null, sync: null },
      plan: { current: 'free', subscription: null },
      appEmbed: { editorUrl: `https://${domain}/admin/themes/current/editor?context=apps&activateAppId=${SHOPIFY_API_KEY}/app-embed` },
    })

    // Products Shopify sent: known and counted, though no sync has read the whole catalog yet
    // (this shop holds no Admin API token: the emulator is not running).
    const before = Date.now()
    for (const id of [7001, 7002]) {
      const res = await sendShopifyWebhook(
        t,
        {
          id,
          title: `P${id}`,
          handle: `p-${id}`,
          updated_at: new Date().toISOString(),
          variants: [{ id: id * 10, price: '5.00', inventory_quantity: 3 }],
        },
        { topic: 'products/create', shop: domain },
      )
      expect(res.body.data.result).toBe('processed')
    }
    await t.app.services.shops.setPlan((await t.app.services.shops.byDomain(domain))!.id, 'growth')
    const known = await setup()
    expect(known.body.data.catalog).toEqual({ state: 'not_started', products: 2, updatedAt: expect.any(String), sync: null })
    expect(Date.parse(known.body.data.catalog.updatedAt)).toBeGreaterThanOrEqual(before - 1000)
    expect(known.body.data.plan).toEqual({ current: 'growth', subscription: null })
  })

  it('is for admins of Shopify shops: none is 401, a storefront key 403, a shop elsewhere 404', async () => {
    expect((await t.call('GET', '/v1/admin/platform-setup')).status).toBe(401)
    const other = await t.app.services.shops.create({ domain: `elsewhere-${Date.now()}.example.com`, plan: 'scale' })
    const token = await t.call('POST', '/v1/auth/token', { body: { api_key: other.apiKey.keyId, api_secret: other.apiKey.secret } })
    const res = await t.call('GET', '/v1/admin/platform-setup', { token: token.body.data.token })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('NOT_FOUND')
    const storefront = await t.call('GET', '/v1/admin/platform-setup', { headers: { 'x-storefront-key': other.shop.storefrontKey } })
    expect(storefront.status).toBe(403)
  })

  it('gives no theme editor link while SHOPIFY_API_KEY is unset', async () => {
    const noKey = await createTestApp({ env: { SHOPIFY_API_SECRET: SHOPIFY_ENV.SHOPIFY_API_SECRET } })
    try {
      const shop = await noKey.app.services.shops.create({ domain: newShopDomain(), plan: 'free' })
      const token = await noKey.call('POST', '/v1/auth/token', { body: { api_key: shop.apiKey.keyId, api_secret: shop.apiKey.secret } })
      const res = await noKey.call('GET', '/v1/admin/platform-setup', { token: token.body.data.token })
      expect(res.body.data.appEmbed).toEqual({ editorUrl: null })
    } finally {
      await noKey.close()
    }
  })
})
