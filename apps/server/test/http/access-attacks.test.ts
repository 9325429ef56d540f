/**
 * Object-level access (BOLA) over every route and credential kind, JWT attacks beyond the
 * route-level matrix (security-matrix.test.ts), SSRF in every address form, and a whole
 * scenario's log output searched for secrets.
 */
import { generateKeyPairSync } from 'node:crypto'
import type { InjectOptions } from 'fastify'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JWT_AUDIENCE, JWT_ISSUER } from '../../src/modules/auth/auth.service.js'
import type { RouteEntry } from '../../src/plugins/auth.js'
import type { ResolveHost } from '../../src/modules/webhooks/ssrf-guard.js'
import { createTestApp, forgeToken, type TestApp, type TestShop } from '../helpers/app.js'
import { loggingApp } from '../helpers/logs.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

let t: TestApp
let a: TestShop
let b: TestShop
const tok: Record<string, string> = {}
const foreign: Record<string, string> = {}
const CUSTOMER = '1001'
const NEIGHBOUR = '1002'
const GUEST = 'guest-bola-0001'
const B_CUSTOMER = '900'
const PRODUCT = '42'

beforeAll(async () => {
  t = await createTestApp()
  a = await t.createShop('scale', { multi_wishlist_enabled: true })
  b = await t.createShop('scale', { multi_wishlist_enabled: true })
  tok.aAdmin = await a.adminToken()
  tok.aCustomer = await a.customerToken(CUSTOMER)
  tok.bAdmin = await b.adminToken()
  // Shop B's objects.
  foreign.bList = (
    await t.call('POST', `/v1/wishlists/${B_CUSTOMER}/lists`, { token: tok.bAdmin, body: { name: 'B list' } })
  ).body.data.wishlist.wishlistId
  await t.call('POST', `/v1/wishlists/${B_CUSTOMER}/items?wishlist_id=${foreign.bList}`, {
    token: tok.bAdmin,
    body: { product_id: PRODUCT },
  })
  foreign.bWebhook = (
    await t.call('POST', '/v1/webhooks', { token: tok.bAdmin, body: { url: 'http://127.0.0.1:9/hook', events: ['wishlist.shared'] } })
  ).body.data.webhookId
  foreign.bKey = (await t.call('POST', '/v1/admin/api-keys', { token: tok.bAdmin, body: { name: 'B key' } })).body.data.keyId
  const review = await t.call('POST', '/api/v1/reviews', {
    headers: { 'x-storefront-key': b.storefrontKey },
    body: { productId: PRODUCT, customerEmail: 'b@example.com', customerName: 'B', rating: 5, body: 'Shop B review' },
  })
  foreign.bReview = String(review.body.id)
  await t.call('POST', `/api/v1/reviews/${foreign.bReview}/approve`, { token: tok.bAdmin })
  foreign.bShare = (
    await t.call('GET', `/v1/wishlists/${B_CUSTOMER}/share?wishlist_id=${foreign.bList}`, { token: tok.bAdmin })
  ).body.data.share_url
    .split('/')
    .pop()
  // Shop A: a list of another customer, and one of a guest.
  foreign.neighbourList = (
    await t.call('POST', `/v1/wishlists/${NEIGHBOUR}/lists`, { token: tok.aAdmin, body: { name: 'Neighbour' } })
  ).body.data.wishlist.wishlistId
  foreign.guestList = (
    await t.call('POST', `/v1/wishlists/${GUEST}/lists`, { headers: a.guest(GUEST), body: { name: 'Guest list' } })
  ).body.data.wishlist.wishlistId
})
afterAll(() => t.close())

type Kind = 'admin' | 'customer' | 'guest' | 'storefront'
function headersOf(kind: Kind): Record<string, string> {
  if (kind === 'admin') return { authorization: `Bearer ${tok.aAdmin}` }
  if (kind === 'customer') return { authorization: `Bearer ${tok.aCustomer}` }
  if (kind === 'guest') return a.guest('guest-bola-0002')
  return { 'x-storefront-key': a.storefrontKey }
}
const ownOwner = (kind: Kind) => (kind === 'admin' ? CUSTOMER : 'me')

// Valid bodies, so that a refusal is about the object, not the input.
const BODIES: Record<string, unknown> = {
  'PUT /v1/wishlists/:customerId/lists/:listId': { name: 'Hijacked' },
  'PUT /api/v1/reviews/:id/reply': { body: 'Hijacked reply' },
}

/** The foreign ids a path parameter can name. */
function foreignIds(param: string, kind: Kind): string[] {
  switch (param) {
    case 'listId':
      // Another shop's list, another customer's list and a guest's list of this shop.
      return kind === 'admin'
        ? [foreign.bList as string]
        : [foreign.bList as string, foreign.neighbourList as string, foreign.guestList as string]
    case 'webhookId':
      return [foreign.bWebhook as string]
    case 'keyId':
      return [foreign.bKey as string]
    case 'id':
      return [foreign.bReview as string]
    default:
      return []
  }
}

describe('object-level access (BOLA) over every route and credential kind', () => {
  it("answers 404 for every other tenant's or owner's object id, and changes nothing", async () => {
    let checked = 0
    const routes = t.app.routeCatalog.filter((r) => /:(listId|webhookId|keyId|id)\b/.test(r.url))
    expect(routes.length).toBeGreaterThanOrEqual(12)
    for (const route of routes) {
      for (const kind of route.access.filter((k): k is Kind => k !== 'public')) {
        const param = /:(listId|webhookId|keyId|id)\b/.exec(route.url)?.[1] as string
        for (const id of foreignIds(param, kind)) {
          const url = route.url.replace(`:${param}`, id).replace(':customerId', ownOwner(kind))
          const body = BODIES[`${route.method} ${route.url}`]
          const headers = headersOf(kind)
          // Votes need a voter (guest mode or a customer token): without one they are 400 first.
          const res = await t.inject({
            method: route.method as InjectOptions['method'],
            url,
            headers,
            ...(body ? { payload: body as object } : {}),
          })
          const code = (res.json() as { error?: { code?: string } }).error?.code
          const where = `${kind} ${route.method} ${url}`
          if ((kind === 'storefront' || kind === 'admin') && /helpful$/.test(route.url))
            expect({ where, status: res.statusCode }).toEqual({ where, status: 400 }) // no voter
          else expect({ where, status: res.statusCode, code }).toEqual({ where, status: 404, code: 'NOT_FOUND' })
          expect(res.statusCode).toBeLessThan(500)
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(30)

    // Shop B's objects are untouched.
    const lists = await t.call('GET', `/v1/wishlists/${B_CUSTOMER}/lists`, { token: tok.bAdmin })
    expect(lists.body.data.wishlists.find((l: { wishlistId: string }) => l.wishlistId === foreign.bList)).toMatchObject({
      name: 'B list',
      itemCount: 1,
    })
    expect(
      (await t.call('GET', '/v1/webhooks', { token: tok.bAdmin })).body.data.webhooks.map((w: { webhookId: string }) => w.webhookId),
    ).toContain(foreign.bWebhook)
    expect(
      (await t.call('GET', '/v1/admin/api-keys', { token: tok.bAdmin })).body.data.apiKeys.map((k: { keyId: string }) => k.keyId),
    ).toContain(foreign.bKey)
    expect(
      (await t.call('GET', `/api/v1/reviews/${foreign.bReview}`, { headers: { 'x-storefront-key': b.storefrontKey } })).body,
    ).toMatchObject({ replyBody: null, helpfulCount: 0 })
    expect((await t.call('GET', `/v1/wishlists/shared/${foreign.bShare}`)).status).toBe(200)
    // Shop A's neighbour still has the list.
    const neighbour = await t.call('GET', `/v1/wishlists/${NEIGHBOUR}/lists`, { token: tok.aAdmin })
    expect(neighbour.body.data.wishlists.map((l: { name: string }) => l.name)).toContain('Neighbour')
  })

  it('refuses foreign list ids in query strings and bodies with 404', async () => {
    for (const kind of ['admin', 'customer', 'guest'] as const) {
      const o = ownOwner(kind)
      const h = headersOf(kind)
      const ids = foreignIds('listId', kind)
      for (const id of ids) {
        const attempts: [string, string, unknown?][] = [
          ['GET', `/v1/wishlists/${o}?wishlist_id=${id}`],
          ['POST', `/v1/wishlists/${o}/items?wishlist_id=${id}`, { product_id: '7' }],
          ['DELETE', `/v1/wishlists/${o}/items/${PRODUCT}?wishlist_id=${id}`],
          ['POST', `/v1/wishlists/${o}/items/bulk-delete?wishlist_id=${id}`, { product_ids: [PRODUCT] }],
          ['GET', `/v1/wishlists/${o}/share?wishlist_id=${id}`],
          ['DELETE', `/v1/wishlists/${o}/share?wishlist_id=${id}`],
          ['POST', `/v1/wishlists/${o}/items/move`, { product_id: PRODUCT, from: id, to: 'default' }],
          ['POST', `/v1/wishlists/${o}/items/move`, { product_id: PRODUCT, from: 'default', to: id }],
        ]
        for (const [method, url, body] of attempts) {
          const res = await t.inject({
            method: method as InjectOptions['method'],
            url,
            headers: h,
            ...(body ? { payload: body as object } : {}),
          })
          expect({ kind, method, url, status: res.statusCode }).toEqual({ kind, method, url, status: 404 })
        }
      }
    }
    // B's list still holds its item.
    const items = await t.call('GET', `/v1/wishlists/${B_CUSTOMER}?wishlist_id=${foreign.bList}`, { token: tok.bAdmin })
    expect(items.body.data.total).toBe(1)
  })

  it("shows nothing of another shop's data under the same customer or product ids", async () => {
    expect((await t.call('GET', `/v1/wishlists/${B_CUSTOMER}`, { token: tok.aAdmin })).body.data.total).toBe(0)
    expect((await t.call('GET', `/v1/wishlists/${B_CUSTOMER}/lists`, { token: tok.aAdmin })).body.data.wishlists).toHaveLength(1)
    expect((await t.call('GET', `/v1/analytics/product/${PRODUCT}`, { token: tok.aAdmin })).body.data.wishlistCount).toBe(0)
    const sf = { 'x-storefront-key': a.storefrontKey }
    expect((await t.call('GET', `/api/v1/products/${PRODUCT}/reviews`, { headers: sf })).body.data).toEqual([])
    expect((await t.call('GET', `/api/v1/products/${PRODUCT}/reviews/summary`, { headers: sf })).body.reviewCount).toBe(0)
    expect((await t.call('GET', '/api/v1/admin/reviews', { token: tok.aAdmin })).body.data).toEqual([])
    const exportCsv = await t.call('GET', `/v1/admin/customers/${B_CUSTOMER}/export`, { token: tok.aAdmin })
    expect(exportCsv.status === 404 || !JSON.stringify(exportCsv.body).includes('B list')).toBe(true)
  })
})

describe('JWT attacks on every non-public route', () => {
  let routes: RouteEntry[]
  const attacks: [string, () => Promise<string>][] = [
    // The HS/RS confusion: an HMAC token keyed with a public key in PEM form.
    [
      'HS256 keyed with a public-key PEM',
      async () => {
        const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
        return forgeToken(claimsOf(), { secret: publicKey.export({ type: 'spki', format: 'pem' }).toString() })
      },
    ],
    [
      'RS256 signed with an attacker key',
      async () => {
        const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
        const iat = Math.floor(Date.now() / 1000)
        return new SignJWT(claimsOf())
          .setProtectedHeader({ alg: 'RS256' })
          .setIssuer(JWT_ISSUER)
          .setAudience(JWT_AUDIENCE)
          .setIssuedAt(iat)
          .setExpirationTime(iat + 600)
          .setJti('rs')
          .sign(privateKey)
      },
    ],
    ['HS384 with the right secret (algorithm pinned)', () => forgeToken(claimsOf(), { alg: 'HS384' })],
    ['a token of shop A naming shop B', () => forgeToken({ ...claimsOf(), shop: b.id })],
    [
      'an admin claim on a customer token',
      async () => forgeToken({ ...claimsOf(), sub: `customer:${CUSTOMER}`, scope: 'admin', customer: CUSTOMER }),
    ],
  ]
  function claimsOf() {
    return { sub: `key:${a.keyId}`, shop: a.id, kid: a.keyId, scope: 'admin' }
  }
  beforeAll(() => {
    routes = t.app.routeCatalog.filter((r) => !r.access.includes('public'))
  })

  it.each(attacks.slice(0, 4))('refuses %s with 401 INVALID_TOKEN everywhere', async (_name, make) => {
    const token = await make()
    for (const route of routes) {
      const url = route.url.replace(/:(\w+)/g, (_m, p: string) => (p === route.owner ? CUSTOMER : '1'))
      const res = await t.inject({ method: route.method as InjectOptions['method'], url, headers: { authorization: `Bearer ${token}` } })
      const where = `${route.method} ${route.url}`
      expect({ where, status: res.statusCode, code: res.json().error?.code }).toEqual({ where, status: 401, code: 'INVALID_TOKEN' })
    }
  })

  it('does not let a forged scope claim turn a customer token into an admin one', async () => {
    const token = await (attacks[4] as [string, () => Promise<string>])[1]()
    const res = await t.call('GET', '/v1/admin/shop', { token })
    expect(res.status).not.toBe(200)
    expect([401, 403]).toContain(res.status)
  })
})

describe('SSRF in every address form', () => {
  let s: TestApp
  let admin: string
  let receiver: Receiver
  // Names the test controls, resolving to private addresses.
  const names: Record<string, string[]> = {
    'rebind-loopback.example.test': ['127.0.0.1'],
    'metadata.example.test': ['169.254.169.254'],
    'private10.example.test': ['10.1.2.3'],
    'cgnat.example.test': ['100.100.100.200'],
    'v6-loopback.example.test': ['::1'],
    'mapped.example.test': ['::ffff:127.0.0.1'],
    'unspecified.example.test': ['0.0.0.0'],
    'v4-compatible.example.test': ['::7f00:1'],
  }
  const resolve: ResolveHost = async (host) => (names[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))

  beforeAll(async () => {
    s = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_ALLOW_INSECURE: 'true' }, webhookResolve: resolve })
    const shop = await s.createShop('free')
    admin = await shop.adminToken()
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await s.close()
  })

  it.each([
    ['decimal', 'http://2130706433:{port}/'],
    ['octal', 'http://0177.0.0.1:{port}/'],
    ['hex', 'http://0x7f000001:{port}/'],
    ['short form', 'http://127.1:{port}/'],
    ['0.0.0.0', 'http://0.0.0.0:{port}/'],
    ['IPv6 unspecified', 'http://[::]:{port}/'],
    ['IPv6 loopback', 'http://[::1]:{port}/'],
    ['IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]:{port}/'],
    ['IPv4-mapped IPv6 in hex', 'http://[::ffff:7f00:1]:{port}/'],
    ['link-local metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['metadata, IPv4-mapped', 'http://[::ffff:a9fe:a9fe]/'],
    ['IPv6 link-local', 'http://[fe80::1]/'],
    ['CGNAT', 'http://100.64.0.1/'],
    ['private 10/8', 'http://10.0.0.1/'],
    ['private 172.16/12', 'http://172.16.0.1/'],
    ['private 192.168/16', 'http://192.168.1.1/'],
    ['unique local', 'http://[fd12:3456::1]/'],
    ['localhost', 'http://localhost:{port}/'],
    ['localhost with a trailing dot', 'http://localhost.:{port}/'],
    ['a .internal name', 'http://metadata.google.internal/'],
  ])('refuses %s at creation', async (_name, template) => {
    const res = await s.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: template.replace('{port}', String(receiver.port)), events: ['wishlist.shared'] },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
  })

  it.each(Object.keys(names))('refuses to deliver to %s (a DNS name resolving to a private address)', async (host) => {
    const created = await s.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: `http://${host}:${receiver.port}/hook`, events: ['wishlist.shared'] },
    })
    expect(created.status).toBe(201)
    const test = await s.call('POST', `/v1/webhooks/${created.body.data.webhookId}/test`, { token: admin })
    expect(test.body.data).toMatchObject({ delivered: false, error: 'target not allowed' })
    for (const address of names[host] ?? []) expect(JSON.stringify(test.body)).not.toContain(address)
    expect(receiver.received).toHaveLength(0)
    await s.call('DELETE', `/v1/webhooks/${created.body.data.webhookId}`, { token: admin })
  })
})

describe('secrets in logs', () => {
  it('a whole scenario at trace level logs no API secret, token, webhook secret, storefront key or share token', async () => {
    const { app, lines, close } = await loggingApp()
    const secrets: string[] = []
    try {
      const created = await app.services.shops.create({ domain: `logs-${Date.now()}.myshopify.com`, plan: 'scale' })
      secrets.push(created.apiKey.secret, created.shop.storefrontKey)
      const call = async (method: InjectOptions['method'], url: string, headers: Record<string, string> = {}, payload?: object) => {
        const res = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
        return res.json() as { data?: Record<string, string> } & Record<string, unknown>
      }
      const adminToken = (await call('POST', '/v1/auth/token', {}, { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret }))
        .data?.token as string
      const customerToken = (
        await call('POST', '/v1/auth/token', {}, { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret, customer_id: '5' })
      ).data?.token as string
      secrets.push(adminToken, customerToken)
      const bearer = { authorization: `Bearer ${adminToken}` }
      // A wrong secret and a bad token are logged as failures, without the values.
      await call('POST', '/v1/auth/token', {}, { api_key: created.apiKey.keyId, api_secret: 'sk_wrong_secret_value_for_logs' })
      secrets.push('sk_wrong_secret_value_for_logs')
      await call('GET', '/v1/admin/shop', { authorization: `Bearer ${adminToken}x` })
      const key = await call('POST', '/v1/admin/api-keys', bearer, { name: 'second' })
      secrets.push(key.data?.secret as string)
      const hook = await call('POST', '/v1/webhooks', bearer, { url: 'http://127.0.0.1:9/hook', events: ['wishlist.shared'] })
      secrets.push(hook.data?.secret as string)
      const rotated = await call('POST', '/v1/admin/storefront-key/rotate', bearer)
      secrets.push(rotated.data?.storefrontKey as string)
      await call('GET', '/v1/wishlists/me', { authorization: `Bearer ${customerToken}` })
      await call('POST', '/v1/wishlists/5/items', bearer, { product_id: '1' })
      const share = await call('GET', '/v1/wishlists/5/share', bearer)
      const shareToken = (share.data?.share_url as string).split('/').pop() as string
      secrets.push(shareToken)
      await call('GET', `/v1/wishlists/shared/${shareToken}`)
      await call('GET', `/v1/wishlists/guest-logs-001?guest_id=guest-logs-001`, {
        'x-storefront-key': rotated.data?.storefrontKey as string,
      })
      await call('GET', '/v1/admin/shop', bearer)
      const log = lines.join('')
      // One "request completed" line per request of the scenario: every request was logged…
      expect(lines.filter((l) => l.includes('"request completed"')).length).toBe(13)
      // …the shared read with its token redacted from the URL.
      expect(log).toContain('/v1/wishlists/shared/[redacted]')
      for (const secret of secrets) {
        expect(secret.length).toBeGreaterThan(10)
        expect({ secret: secret.slice(0, 6), logged: log.includes(secret) }).toEqual({ secret: secret.slice(0, 6), logged: false })
      }
    } finally {
      await close()
    }
  })
})
