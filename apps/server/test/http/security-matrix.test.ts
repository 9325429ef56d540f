/**
 * The shared security matrix (the Unkey idiom): every registered route, every credential
 * kind. Routes added by any module are picked up automatically from app.routeCatalog.
 */
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RouteEntry } from '../../src/plugins/auth.js'
import { createTestApp, forgeToken, type TestApp, type TestShop, unsignedToken } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let freeShop: TestShop
let routes: RouteEntry[]
const creds: Record<string, string> = {}

const CUSTOMER = '1001'
const OTHER_CUSTOMER = '1002'
const GUEST = 'guest-owner-01'
const OTHER_GUEST = 'guest-other-02'

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('scale', { multi_wishlist_enabled: true })
  freeShop = await t.createShop('free')
  creds.admin = await shop.adminToken()
  creds.customer = await shop.customerToken(CUSTOMER)
  creds.freeAdmin = await freeShop.adminToken()
  creds.freeCustomer = await freeShop.customerToken(CUSTOMER)
  const baseClaims = { sub: `key:${shop.keyId}`, shop: shop.id, kid: shop.keyId, scope: 'admin' }
  creds.badSignature = await forgeToken(baseClaims, { secret: 'not-the-server-secret-not-the-server-secret' })
  creds.algNone = unsignedToken(baseClaims)
  creds.expired = await forgeToken(baseClaims, { exp: Math.floor(Date.now() / 1000) - 60 })
  creds.wrongAudience = await forgeToken(baseClaims, { aud: 'another-api' })
  const revokable = await t.call('POST', '/v1/admin/api-keys', { token: creds.admin, body: { name: 'revoked' } })
  const minted = await t.call('POST', '/v1/auth/token', {
    body: { api_key: revokable.body.data.keyId, api_secret: revokable.body.data.secret },
  })
  creds.revoked = minted.body.data.token
  await t.call('DELETE', `/v1/admin/api-keys/${revokable.body.data.keyId}`, { token: creds.admin })
  routes = t.app.routeCatalog.filter((r) => !r.access.includes('public'))
})
afterAll(() => t.close())

function urlFor(route: RouteEntry, owner: string): string {
  return route.url.replace(/:(\w+)/g, (_m, name: string) => (name === route.owner ? owner : '1'))
}

async function send(route: RouteEntry, owner: string, headers: Record<string, string>) {
  const opts: InjectOptions = { method: route.method as InjectOptions['method'], url: urlFor(route, owner), headers }
  const res = await t.inject(opts)
  // Not every success is JSON (the CSV export); every refusal is.
  const json = String(res.headers['content-type'] ?? '').includes('json')
  return { status: res.statusCode, code: json ? (res.json() as { error?: { code?: string } }).error?.code : undefined }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
// The positive control may rotate the storefront key (POST /v1/admin/storefront-key/rotate): read the current one.
const storefrontKey = async (s: TestShop) => (await t.app.services.shops.get(s.id))?.storefrontKey ?? s.storefrontKey
const guestHeaders = async (s: TestShop, guestId: string) => ({ 'x-storefront-key': await storefrontKey(s), 'x-guest-id': guestId })

describe('security matrix over every route', () => {
  it('covers the routes registered so far', () => {
    expect(routes.length).toBeGreaterThan(0)
    expect(routes.map((r) => `${r.method} ${r.url}`)).toContain('GET /v1/admin/shop')
  })

  it.each([
    ['no credentials', {}, 401, 'UNAUTHORIZED'],
    ['a bad signature', 'badSignature', 401, 'INVALID_TOKEN'],
    ['alg: none', 'algNone', 401, 'INVALID_TOKEN'],
    ['a wrong audience', 'wrongAudience', 401, 'INVALID_TOKEN'],
    ['an expired token', 'expired', 401, 'TOKEN_EXPIRED'],
    ["a revoked key's token", 'revoked', 401, 'INVALID_TOKEN'],
  ] as const)('refuses %s on every route', async (_name, cred, status, code) => {
    for (const route of routes) {
      const headers = typeof cred === 'string' ? bearer(creds[cred] as string) : {}
      const res = await send(route, CUSTOMER, headers)
      expect({ route: `${route.method} ${route.url}`, ...res }).toEqual({ route: `${route.method} ${route.url}`, status, code })
    }
  })

  it('refuses customer tokens where only admins may go, and on other customers', async () => {
    for (const route of routes) {
      const id = `${route.method} ${route.url}`
      if (!route.access.includes('customer')) {
        expect({ id, ...(await send(route, CUSTOMER, bearer(creds.customer as string))) }).toEqual({ id, status: 403, code: 'FORBIDDEN' })
      } else if (route.owner) {
        expect({ id, ...(await send(route, OTHER_CUSTOMER, bearer(creds.customer as string))) }).toEqual({
          id,
          status: 403,
          code: 'FORBIDDEN',
        })
      }
    }
  })

  it('refuses guest mode where guests may not go, and on other guests', async () => {
    for (const route of routes) {
      const id = `${route.method} ${route.url}`
      const headers = await guestHeaders(shop, GUEST)
      if (!route.access.includes('guest')) {
        expect({ id, ...(await send(route, GUEST, headers)) }).toEqual({ id, status: 403, code: 'FORBIDDEN' })
      } else if (route.owner) {
        expect({ id, ...(await send(route, OTHER_GUEST, headers)) }).toEqual({ id, status: 403, code: 'FORBIDDEN' })
      }
    }
  })

  it('refuses a free-plan shop on every plan-gated route with PLAN_UPGRADE_REQUIRED', async () => {
    const gated = routes.filter((r) => (r.plan && r.plan !== 'free') || (r.bearerPlan && r.bearerPlan !== 'free'))
    for (const route of gated) {
      const id = `${route.method} ${route.url}`
      const token = route.access.includes('admin') ? creds.freeAdmin : creds.freeCustomer
      expect({ id, ...(await send(route, CUSTOMER, bearer(token as string))) }).toEqual({ id, status: 403, code: 'PLAN_UPGRADE_REQUIRED' })
    }
  })

  it('lets every allowed credential through the guard (positive control)', async () => {
    const guardCodes = ['UNAUTHORIZED', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'INVALID_CREDENTIALS', 'FORBIDDEN', 'PLAN_UPGRADE_REQUIRED']
    for (const route of routes) {
      const attempts: [string, () => Promise<Record<string, string>>, string][] = []
      if (route.access.includes('admin')) attempts.push(['admin', async () => bearer(creds.admin as string), CUSTOMER])
      if (route.access.includes('customer'))
        attempts.push(['customer', async () => bearer(creds.customer as string), route.owner ? 'me' : CUSTOMER])
      if (route.access.includes('guest')) attempts.push(['guest', () => guestHeaders(shop, GUEST), route.owner ? GUEST : CUSTOMER])
      if (route.access.includes('storefront'))
        attempts.push(['storefront', async () => ({ 'x-storefront-key': await storefrontKey(shop) }), CUSTOMER])
      expect(attempts.length).toBeGreaterThan(0)
      for (const [kind, headers, owner] of attempts) {
        const res = await send(route, owner, await headers())
        expect({ route: `${route.method} ${route.url}`, kind, refusedByGuard: guardCodes.includes(res.code ?? '') }).toEqual({
          route: `${route.method} ${route.url}`,
          kind,
          refusedByGuard: false,
        })
      }
    }
  })
})
