import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, forgeToken, type TestApp, type TestShop, unsignedToken } from '../helpers/app.js'

let t: TestApp
let shop: TestShop

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('starter')
})
afterAll(() => t.close())

describe('POST /v1/auth/token', () => {
  it('mints an admin token with the documented fields and claims', async () => {
    const res = await t.call('POST', '/v1/auth/token', { body: { api_key: shop.keyId, api_secret: shop.secret } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, data: { token: expect.any(String), expires_in: 86400, token_type: 'Bearer', scope: 'admin' } })
    expect(res.headers['cache-control']).toBe('private, no-store')
    const claims = decodeJwt(res.body.data.token)
    expect(decodeProtectedHeader(res.body.data.token).alg).toBe('HS256')
    expect(claims).toMatchObject({ sub: `key:${shop.keyId}`, shop: shop.id, kid: shop.keyId, scope: 'admin' })
    expect(claims.exp! - claims.iat!).toBe(86400)
    expect(typeof claims.jti).toBe('string')
    expect(claims.iss).toBeTruthy()
    expect(claims.aud).toBeTruthy()
  })

  it('mints a customer token bound to customer_id, normalising a platform GID', async () => {
    const res = await t.call('POST', '/v1/auth/token', {
      body: { api_key: shop.keyId, api_secret: shop.secret, customer_id: 'gid://shopify/Customer/777' },
    })
    expect(res.status).toBe(200)
    expect(res.body.data.scope).toBe('customer')
    expect(decodeJwt(res.body.data.token)).toMatchObject({ sub: 'customer:777', scope: 'customer', shop: shop.id })
  })

  it('refuses a customer_id that is a GID of another kind', async () => {
    const res = await t.call('POST', '/v1/auth/token', {
      body: { api_key: shop.keyId, api_secret: shop.secret, customer_id: 'gid://shopify/Product/5' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'body.customer_id' }] })
  })

  it('refuses an unknown key and a wrong secret with the same 401', async () => {
    const unknown = await t.call('POST', '/v1/auth/token', { body: { api_key: 'ak_nope', api_secret: shop.secret } })
    const wrong = await t.call('POST', '/v1/auth/token', { body: { api_key: shop.keyId, api_secret: 'sk_wrong' } })
    for (const res of [unknown, wrong]) {
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/)
    }
    expect(unknown.body).toEqual(wrong.body)
    expect(unknown.body.error.code).toBe('INVALID_CREDENTIALS')
  })

  it('creates an admin key from an empty request, its secret not cacheable', async () => {
    const admin = await shop.adminToken()
    const created = await t.call('POST', '/v1/admin/api-keys', { token: admin })
    expect(created.status).toBe(201)
    expect(created.headers['cache-control']).toBe('private, no-store')
    expect(created.body.data).toEqual({
      keyId: expect.stringMatching(/^ak_/),
      secret: expect.stringMatching(/^sk_/),
      name: 'Admin key',
      scope: 'admin',
      createdAt: expect.any(String),
    })
    const token = await t.call('POST', '/v1/auth/token', {
      body: { api_key: created.body.data.keyId, api_secret: created.body.data.secret },
    })
    expect(token.body.data.scope).toBe('admin')
  })

  it('lets a customer-scope key mint customer tokens only', async () => {
    const admin = await shop.adminToken()
    const created = await t.call('POST', '/v1/admin/api-keys', { token: admin, body: { scope: 'customer', name: 'storefront server' } })
    expect(created.status).toBe(201)
    const { keyId, secret } = created.body.data
    const asAdmin = await t.call('POST', '/v1/auth/token', { body: { api_key: keyId, api_secret: secret } })
    expect(asAdmin.status).toBe(403)
    expect(asAdmin.body.error.code).toBe('FORBIDDEN')
    const asCustomer = await t.call('POST', '/v1/auth/token', { body: { api_key: keyId, api_secret: secret, customer_id: '42' } })
    expect(asCustomer.status).toBe(200)
    expect(asCustomer.body.data.scope).toBe('customer')
  })

  it('validates the body', async () => {
    const missing = await t.call('POST', '/v1/auth/token', { body: { api_key: shop.keyId } })
    expect(missing.status).toBe(400)
    expect(missing.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'body.api_secret', message: expect.any(String) }],
    })
    const badCustomer = await t.call('POST', '/v1/auth/token', {
      body: { api_key: shop.keyId, api_secret: shop.secret, customer_id: 'abc' },
    })
    expect(badCustomer.status).toBe(400)
    expect(badCustomer.body.error.code).toBe('VALIDATION_ERROR')
  })
})

describe('bearer verification', () => {
  const get = (token: string | undefined, headers: Record<string, string> = {}) =>
    t.call('GET', '/v1/admin/shop', { ...(token ? { token } : {}), headers })

  it('accepts a valid admin token', async () => {
    const res = await get(await shop.adminToken())
    expect(res.status).toBe(200)
    expect(res.body.data.id).toBe(shop.id)
  })

  it('answers 401 UNAUTHORIZED without credentials, with WWW-Authenticate', async () => {
    const res = await get(undefined)
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } })
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/)
  })

  it('answers 401 UNAUTHORIZED for a non-bearer Authorization header', async () => {
    const res = await get(undefined, { authorization: 'Basic Zm9vOmJhcg==' })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('UNAUTHORIZED')
  })

  const claims = () => ({ sub: `key:${shop.keyId}`, shop: shop.id, kid: shop.keyId, scope: 'admin' })

  it.each([
    ['a bad signature', () => forgeToken(claims(), { secret: 'another-secret-another-secret-another-secret' })],
    ['alg none', async () => unsignedToken(claims())],
    ['another HMAC algorithm', () => forgeToken(claims(), { alg: 'HS384' })],
    ['a wrong audience', () => forgeToken(claims(), { aud: 'someone-else' })],
    ['a wrong issuer', () => forgeToken(claims(), { iss: 'https://evil.example' })],
    ['garbage', async () => 'not.a.jwt'],
    ['a sub that does not match the key', () => forgeToken({ ...claims(), sub: 'key:ak_other' })],
  ])('answers 401 INVALID_TOKEN for %s', async (_name, make) => {
    const res = await get(await make())
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('INVALID_TOKEN')
    expect(res.headers['www-authenticate']).toBe('Bearer realm="wishlist", error="invalid_token"')
  })

  it('refuses a token carrying the signature of a token accepted (and cached) before', async () => {
    const token = await shop.adminToken()
    expect((await get(token)).status).toBe(200)
    const [, payload, signature] = token.split('.')
    const forgedHeader = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
    for (const forged of [`${forgedHeader}.${payload}.${signature}`, `${token.split('.')[0]}.${payload}x.${signature}`]) {
      const res = await get(forged)
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe('INVALID_TOKEN')
    }
    expect((await get(token)).status).toBe(200)
  })

  it('answers 401 TOKEN_EXPIRED past exp', async () => {
    const res = await get(await forgeToken(claims(), { exp: Math.floor(Date.now() / 1000) - 10 }))
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('TOKEN_EXPIRED')
  })

  it('answers 401 TOKEN_EXPIRED once a token accepted before (and cached) passes exp', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2
    const token = await forgeToken(claims(), { exp })
    expect((await get(token)).status).toBe(200)
    // The clock moves past exp (vitest's fake Date; timers stay real) instead of waiting for it.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(exp * 1000 + 50)
      const res = await get(token)
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe('TOKEN_EXPIRED')
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses a token whose shop claim names another shop than its key', async () => {
    const other = await t.createShop('scale')
    const res = await get(await forgeToken({ ...claims(), shop: other.id }))
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('INVALID_TOKEN')
  })

  it('revoking a key invalidates every token minted from it at once', async () => {
    const admin = await shop.adminToken()
    const created = await t.call('POST', '/v1/admin/api-keys', { token: admin, body: { name: 'to revoke' } })
    const { keyId, secret } = created.body.data
    const minted = await t.call('POST', '/v1/auth/token', { body: { api_key: keyId, api_secret: secret } })
    const victim = minted.body.data.token
    expect((await get(victim)).status).toBe(200)
    const del = await t.call('DELETE', `/v1/admin/api-keys/${keyId}`, { token: admin })
    expect(del.body).toEqual({ ok: true, data: { deleted: true } })
    const after = await get(victim)
    expect(after.status).toBe(401)
    expect(after.body.error.code).toBe('INVALID_TOKEN')
    const again = await t.call('POST', '/v1/auth/token', { body: { api_key: keyId, api_secret: secret } })
    expect(again.status).toBe(401)
    expect(again.body.error.code).toBe('INVALID_CREDENTIALS')
  })

  it('keeps 50 active API keys per shop: the 51st is 400 KEY_LIMIT, concurrent creates included; revoked keys do not count', async () => {
    const own = await t.createShop('starter')
    const admin = await own.adminToken()
    const create = () => t.call('POST', '/v1/admin/api-keys', { token: admin, body: { name: 'bulk' } })
    // The shop's first key counts; 49 more, 30 of them racing each other, fill it.
    for (let i = 0; i < 19; i++) expect((await create()).status).toBe(201)
    const raced = await Promise.all(Array.from({ length: 32 }, create))
    expect(raced.filter((r) => r.status === 201)).toHaveLength(30)
    const refused = raced.filter((r) => r.status !== 201)
    expect(refused.map((r) => r.body)).toEqual(
      [0, 1].map(() => ({ ok: false, error: { code: 'KEY_LIMIT', message: expect.stringContaining('50'), details: { limit: 50 } } })),
    )
    expect(refused.map((r) => r.status)).toEqual([400, 400])
    const listed = await t.call('GET', '/v1/admin/api-keys', { token: admin })
    expect(listed.body.data.apiKeys).toHaveLength(50)
    // Nothing stored for the refused ones, and no fresh budget from them.
    expect((await create()).body.error.code).toBe('KEY_LIMIT')
    // Revoking frees a place.
    const last = listed.body.data.apiKeys.at(-1).keyId as string
    expect((await t.call('DELETE', `/v1/admin/api-keys/${last}`, { token: admin })).status).toBe(200)
    expect((await create()).status).toBe(201)
    expect((await create()).body.error.code).toBe('KEY_LIMIT')
    // Another shop is not affected.
    expect((await t.call('POST', '/v1/admin/api-keys', { token: await shop.adminToken() })).status).toBe(201)
  })

  it('refuses a customer token on admin endpoints with 403 FORBIDDEN', async () => {
    const res = await get(await shop.customerToken('5'))
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('FORBIDDEN')
  })
})

describe('storefront key', () => {
  it('refuses an unknown storefront key with 401', async () => {
    const res = await t.call('GET', '/v1/admin/shop', { headers: { 'x-storefront-key': 'sfk_unknown', 'x-guest-id': 'guest-123456' } })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('INVALID_CREDENTIALS')
  })

  it('refuses guest mode on admin endpoints with 403', async () => {
    const res = await t.call('GET', '/v1/admin/shop', { headers: shop.guest('guest-123456') })
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('FORBIDDEN')
  })

  it('rejects a malformed guest id with 400', async () => {
    const res = await t.call('GET', '/v1/admin/shop', { headers: shop.guest('bad id!') })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'headers.x-guest-id' }] })
    // The query form is named as such.
    const { 'x-guest-id': _, ...keyOnly } = shop.guest('unused-guest')
    const viaQuery = await t.call('GET', '/v1/wishlists/me?guest_id=short', { headers: keyOnly })
    expect(viaQuery.status).toBe(400)
    expect(viaQuery.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'query.guest_id' }] })
  })

  it('stops accepting the old storefront key after rotation', async () => {
    const s = await t.createShop('starter')
    const before = await t.call('GET', '/v1/admin/shop', { headers: s.guest('guest-123456') })
    expect(before.status).toBe(403) // known key, wrong route: proves the key was accepted
    const rotated = await t.call('POST', '/v1/admin/storefront-key/rotate', { token: await s.adminToken() })
    expect(rotated.status).toBe(200)
    expect(rotated.body.data.storefrontKey).toMatch(/^sfk_/)
    expect(rotated.body.data.storefrontKey).not.toBe(s.storefrontKey)
    const old = await t.call('GET', '/v1/admin/shop', { headers: s.guest('guest-123456') })
    expect(old.status).toBe(401)
    const shopView = await t.call('GET', '/v1/admin/shop', { token: await s.adminToken() })
    expect(shopView.body.data.storefrontKey).toBe(rotated.body.data.storefrontKey)
  })
})
