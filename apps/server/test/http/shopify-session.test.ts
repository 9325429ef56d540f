/**
 * Shopify app mode, the embedded admin (docs/api.md, "Session tokens"): a Shopify session
 * token exchanged for the service's admin token of its shop, and each rejection.
 */
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { newShopDomain, proxyCall, sessionToken, SHOPIFY_API_KEY, SHOPIFY_ENV, SHOPIFY_SECRET } from '../helpers/shopify.js'

let t: TestApp

beforeAll(async () => {
  t = await createTestApp({ env: SHOPIFY_ENV })
})
afterAll(() => t.close())

const exchange = (token: string) => t.call('POST', '/v1/auth/shopify-session', { body: { session_token: token } })

async function refused(token: string) {
  const shopsBefore = (await t.storage.db.selectFrom('shops').select('id').execute()).length
  const res = await exchange(token)
  expect(res.status, JSON.stringify(res.body)).toBe(401)
  expect(res.body).toEqual({ ok: false, error: { code: 'INVALID_SIGNATURE', message: expect.any(String) } })
  expect((await t.storage.db.selectFrom('shops').select('id').execute()).length).toBe(shopsBefore)
}

describe('POST /v1/auth/shopify-session', () => {
  it('exchanges a valid session token for an admin token of its shop, creating the shop when unknown', async () => {
    const domain = newShopDomain()
    const res = await exchange(await sessionToken(domain))
    expect(res.status).toBe(200)
    expect(res.headers['cache-control']).toBe('private, no-store')
    expect(res.body).toEqual({ ok: true, data: { token: expect.any(String), expires_in: 86400, token_type: 'Bearer', scope: 'admin' } })
    const view = await t.call('GET', '/v1/admin/shop', { token: res.body.data.token })
    expect(view.status).toBe(200)
    expect(view.body.data).toMatchObject({ domain, plan: 'free', uninstalledAt: null, storefrontKey: expect.stringMatching(/^sfk_/) })

    // The same shop the proxy serves; the next exchange reuses its session key.
    const again = await exchange(await sessionToken(domain))
    expect((await t.call('GET', '/v1/admin/shop', { token: again.body.data.token })).body.data.id).toBe(view.body.data.id)
    const keys = await t.call('GET', '/v1/admin/api-keys', { token: again.body.data.token })
    expect(keys.body.data.apiKeys).toEqual([expect.objectContaining({ name: 'Shopify embedded admin', scope: 'admin' })])
    expect((await proxyCall(t, 'GET', '/api/v1/products/1/reviews', { shop: domain })).status).toBe(200)
    expect((await t.app.services.shops.byDomain(domain))!.id).toBe(view.body.data.id)
  })

  it('installs an uninstalled shop again, unless the token was issued before the uninstall (403, still uninstalled)', async () => {
    const domain = newShopDomain()
    expect((await exchange(await sessionToken(domain))).status).toBe(200)
    const shop = (await t.app.services.shops.byDomain(domain))!
    await t.app.services.shops.uninstall(shop.id, Date.now(), '1')
    const nowS = Math.floor(Date.now() / 1000)
    const stale = await exchange(await sessionToken(domain, { iat: nowS - 30, nbf: nowS - 30 }))
    expect(stale.status).toBe(403)
    expect(stale.body.error.code).toBe('FORBIDDEN')
    expect((await t.app.services.shops.byDomain(domain))!.uninstalledAt).not.toBeNull()
    expect((await exchange(await sessionToken(domain))).status).toBe(200)
    expect((await t.app.services.shops.byDomain(domain))!.uninstalledAt).toBeNull()
  })

  it('accepts exp and nbf within the 5 s leeway', async () => {
    const nowS = Math.floor(Date.now() / 1000)
    expect((await exchange(await sessionToken(newShopDomain(), { exp: nowS - 3 }))).status).toBe(200)
    expect((await exchange(await sessionToken(newShopDomain(), { nbf: nowS + 3 }))).status).toBe(200)
  })

  it('rejects a wrong secret, audience, destination or issuer, an expired or not-yet-valid token, another algorithm, and garbage', async () => {
    const domain = newShopDomain()
    const nowS = Math.floor(Date.now() / 1000)
    await refused(await sessionToken(domain, { secret: 'another-apps-secret' }))
    await refused(await sessionToken(domain, { aud: 'another-app-client-id' }))
    await refused(await sessionToken(domain, { dest: 'https://evil.example.com', iss: 'https://evil.example.com/admin' }))
    await refused(await sessionToken(domain, { dest: `http://${domain}`, iss: `http://${domain}/admin` }))
    await refused(await sessionToken(domain, { iss: `https://${newShopDomain()}/admin` }))
    await refused(await sessionToken(domain, { exp: nowS - 10 }))
    await refused(await sessionToken(domain, { nbf: nowS + 10 }))
    await refused(await sessionToken(domain, { alg: 'HS512' }))
    // Unsigned (`alg: none`).
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
    await refused(
      `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: `https://${domain}/admin`, dest: `https://${domain}`, aud: SHOPIFY_API_KEY, exp: nowS + 60, nbf: nowS })}.`,
    )
    // Without exp or nbf.
    await refused(
      await new SignJWT({ dest: `https://${domain}` })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(`https://${domain}/admin`)
        .setAudience(SHOPIFY_API_KEY)
        .setExpirationTime(nowS + 60)
        .sign(new TextEncoder().encode(SHOPIFY_SECRET)),
    )
    await refused('not.a.token')
    expect(await t.app.services.shops.byDomain(domain)).toBeUndefined()
    // A body that is not the documented shape is a validation error, not a signature one.
    expect((await t.call('POST', '/v1/auth/shopify-session', { body: {} })).status).toBe(400)
  })

  it('refuses every session token when SHOPIFY_API_KEY is not configured', async () => {
    const noKey = await createTestApp({ env: { SHOPIFY_API_SECRET: SHOPIFY_SECRET } })
    try {
      const res = await noKey.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(newShopDomain()) } })
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe('INVALID_SIGNATURE')
    } finally {
      await noKey.close()
    }
  })
})
