/**
 * Credentials in URLs are never logged (docs/api.md, "Logs"): the test walks the route
 * catalog for every route whose path or query takes a credential (share tokens, invitation
 * tokens, guest ids, the app proxy's signature, Shopify admin's hmac and session token), in
 * Shopify app mode so that the proxy's routes are there, and calls each with a valid, an
 * unknown and a malformed credential, then in odd URL shapes over a raw socket (a malformed
 * `%` escape, a fragment, a repeated parameter, upper-case names, `;` pairs, an absolute-form
 * target), then again with the storage broken (500s and their error lines). Everything the
 * logger writes at trace level is kept; no credential value may appear in any of it.
 */
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Storage } from '../../src/db/connect.js'
import { adminQueryHmac } from '../../src/platforms/shopify/signatures.js'
import type { RouteEntry } from '../../src/plugins/auth.js'
import { loggingApp } from '../helpers/logs.js'
import { rawRequest, requestHead } from '../helpers/raw-http.js'
import { newShopDomain, SHOPIFY_ENV, SHOPIFY_SECRET, sessionToken, signedQuery } from '../helpers/shopify.js'

let app: FastifyInstance
let lines: string[]
let storage: Storage
let close: () => Promise<void>
let port: number
let domain: string
let storefrontKey: string
let admin: string
/** Every credential value a request of this file carried. */
const secrets = new Set<string>()
/** The request id of every answer, to check each request left its access line. */
const requestIds: string[] = []
const statuses = new Map<number, number>()
let routerRefusals = 0

const hex = (n: number) => randomBytes(n).toString('hex')
/** A fresh credential-shaped value, remembered as a secret. */
const fresh = (prefix: string) => {
  const value = `${prefix}${hex(12)}`
  secrets.add(value)
  return value
}
const remember = <T extends string>(value: T): T => {
  secrets.add(value)
  return value
}

/** The real credentials of the shop: a guest with a list, its share token, an invitation token. */
const valid = { guest: '', share: '', invitation: '' }

beforeAll(async () => {
  ;({ app, lines, storage, close } = await loggingApp({ ...SHOPIFY_ENV }))
  domain = newShopDomain()
  const created = await app.services.shops.create({ domain, plan: 'growth' })
  storefrontKey = created.shop.storefrontKey
  admin = (
    await app.inject({
      method: 'POST',
      url: '/v1/auth/token',
      payload: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret },
    })
  ).json().data.token
  valid.guest = fresh('g_')
  const asGuest = { 'x-storefront-key': storefrontKey, 'x-guest-id': valid.guest }
  expect(
    (await app.inject({ method: 'POST', url: '/v1/wishlists/me/items', headers: asGuest, payload: { product_id: '1' } })).statusCode,
  ).toBe(201)
  valid.share = remember((await app.inject({ method: 'GET', url: '/v1/wishlists/me/share', headers: asGuest })).json().data.token as string)
  const order = { type: 'order.created', order_id: '501', customer_id: '77', email: 'ann@example.com', line_items: [{ product_id: '1' }] }
  expect(
    (await app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: `Bearer ${admin}` }, payload: { events: [order] } }))
      .statusCode,
  ).toBe(200)
  valid.invitation = remember((await storage.db.selectFrom('review_invitations').select('token').executeTakeFirstOrThrow()).token)
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as AddressInfo).port
})
afterAll(async () => {
  await close()
})

type Variant = 'valid' | 'unknown' | 'malformed'

/** A value of each credential for a variant: the real one, an unknown one of the same shape, or a malformed one. */
function credential(kind: 'guest' | 'share' | 'invitation', variant: Variant): string {
  if (variant === 'valid') return valid[kind]
  const shaped = fresh(kind === 'guest' ? 'g_' : kind === 'share' ? 'shr_' : 'inv_')
  // Malformed: a space and a quote in it, or a broken escape in a path (the router's 400).
  return variant === 'unknown' ? shaped : remember(`${shaped}'x y`)
}

/** Values of the route's other path parameters: anything the route takes. */
const PLAIN_PARAMS: Record<string, string> = {
  productId: '1',
  listId: 'default',
  id: '1',
  file: 'x.js',
  keyId: 'k1',
  webhookId: 'w1',
  customerId: '77',
}

/** One request on `route` carrying every credential its URL may carry (the catalog's `credentials`). */
async function callWith(route: RouteEntry, variant: Variant): Promise<void> {
  const credentials = route.credentials ?? { path: [], query: [] }
  const path = route.url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    if (!credentials.path.includes(name)) return PLAIN_PARAMS[name] ?? '1'
    const value = credential(name === 'shareToken' ? 'share' : name === 'token' ? 'invitation' : 'guest', variant)
    return variant === 'malformed' ? `${encodeURIComponent(value)}%zz` : encodeURIComponent(value)
  })
  const pairs: Record<string, string> = {}
  for (const name of credentials.query) {
    if (name === 'guest_id') pairs[name] = credential('guest', variant)
    else if (name === 'invitation') pairs[name] = credential('invitation', variant)
    else if (name === 'id_token') pairs[name] = remember(variant === 'valid' ? await sessionToken(domain) : `${fresh('eyJ')}.${hex(8)}`)
  }
  let query: string
  if (credentials.query.includes('signature')) {
    // Signed as Shopify signs it: the signature covers the other pairs (a malformed one is stale).
    query = signedQuery({ shop: domain, ...(variant === 'malformed' ? { timestamp: 1 } : {}) }, pairs)
    remember(new URLSearchParams(query).get('signature') as string)
  } else if (credentials.query.includes('hmac')) {
    const params = new URLSearchParams({
      embedded: '1',
      host: 'YWRtaW4',
      shop: domain,
      timestamp: String(Math.floor(Date.now() / 1000)),
      ...pairs,
    })
    params.set('hmac', remember(variant === 'valid' ? adminQueryHmac(params, SHOPIFY_SECRET) : fresh('')))
    query = params.toString()
  } else query = new URLSearchParams(pairs).toString()
  const res = await app.inject({
    method: route.method as 'GET',
    url: query === '' ? path : `${path}?${query}`,
    headers: { 'x-storefront-key': storefrontKey, 'x-forwarded-for': '203.0.113.7, 23.227.38.1' },
    ...(['POST', 'PUT', 'PATCH'].includes(route.method) ? { payload: { product_id: '2' } } : {}),
  })
  // The router's refusal of a malformed path escape writes no line at all; every other answer has its access line.
  if (res.body.includes('malformed percent-encoding')) routerRefusals++
  else requestIds.push(res.headers['x-request-id'] as string)
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
}

/** Every line written so far, checked for every credential value used so far. */
function expectNoSecretLogged(): void {
  const log = lines.join('')
  const leaked = [...secrets].filter((s) => log.includes(s))
  expect(leaked).toEqual([])
  const logged = new Set(lines.map((l) => (JSON.parse(l) as { reqId?: string }).reqId))
  expect(requestIds.filter((id) => !logged.has(id))).toEqual([])
}

const credentialRoutes = () => app.routeCatalog.filter((r) => (r.credentials?.path.length ?? 0) + (r.credentials?.query.length ?? 0) > 0)

describe('credentials in URLs are never logged', () => {
  it('the catalog lists the credentials of every route that takes one, the app proxy included', async () => {
    const of = (key: string) => app.routeCatalog.find((r) => `${r.method} ${r.url}` === key)?.credentials
    expect(of('GET /reviews/new')).toEqual({ path: [], query: ['invitation'] })
    expect(of('POST /reviews/new')).toEqual({ path: [], query: ['invitation'] })
    expect(of('GET /proxy/reviews/new')).toEqual({ path: [], query: ['invitation', 'signature'] })
    expect(of('GET /v1/wishlists/shared/:shareToken')).toEqual({ path: ['shareToken'], query: [] })
    expect(of('GET /proxy/shared/:shareToken')).toEqual({ path: ['shareToken'], query: ['signature'] })
    expect(of('GET /proxy/v1/wishlists/shared/:shareToken')).toEqual({ path: ['shareToken'], query: ['signature'] })
    expect(of('GET /api/v1/review-invitations/:token')).toEqual({ path: ['token'], query: [] })
    expect(of('GET /proxy/api/v1/review-invitations/:token')).toEqual({ path: ['token'], query: ['signature'] })
    expect(of('GET /v1/wishlists/:customerId')).toEqual({ path: ['customerId'], query: ['guest_id'] })
    expect(of('GET /proxy/v1/wishlists/:customerId/lists')).toEqual({ path: ['customerId'], query: ['guest_id', 'signature'] })
    expect(of('GET /dashboard')).toEqual({ path: [], query: ['hmac', 'id_token'] })
    // Nothing that looks like a credential is left out: every parameter of the document
    // whose name says token, secret, signature, hmac, invitation, guest or session is listed.
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>
    }
    const looksSecret = /token|secret|signature|hmac|invitation|guest|session/i
    for (const [docPath, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const url = docPath.replace(/\{([^}]+)\}/g, ':$1')
        const listed = app.routeCatalog.find((r) => r.method === method.toUpperCase() && r.url === url)?.credentials
        for (const p of (op.parameters ?? []).filter((x) => looksSecret.test(x.name) && (x.in === 'path' || x.in === 'query'))) {
          const isListed = listed?.path.includes(p.name) === true || listed?.query.includes(p.name) === true
          expect({ route: `${method} ${url}`, parameter: p.name, isListed }).toEqual({
            route: `${method} ${url}`,
            parameter: p.name,
            isListed: true,
          })
        }
      }
    }
  })

  it('for every route that takes one: a valid, an unknown and a malformed credential (2xx, 4xx)', async () => {
    // Reads first: the valid variant's writes revoke the share link and remove the item.
    const routes = credentialRoutes().sort((x, y) => Number(x.method !== 'GET') - Number(y.method !== 'GET'))
    for (const variant of ['valid', 'unknown', 'malformed'] as const) {
      for (const route of routes) await callWith(route, variant)
    }
    expect(requestIds.length + routerRefusals).toBe(routes.length * 3)
    // Both successes and refusals were logged (figures in the report).
    const codes = [...statuses.keys()]
    expect(codes.some((c) => c < 300)).toBe(true)
    expect(codes.some((c) => c >= 400 && c < 500)).toBe(true)
    expectNoSecretLogged()
  })

  it('in odd URL shapes over a raw socket: a malformed escape, a fragment, repeated and upper-case names, `;` pairs, an absolute-form target', async () => {
    const token = valid.invitation
    // A live share link again (the walk's DELETE revoked the first).
    const share = remember(
      (
        await app.inject({
          method: 'GET',
          url: '/v1/wishlists/me/share',
          headers: { 'x-storefront-key': storefrontKey, 'x-guest-id': valid.guest },
        })
      ).json().data.token as string,
    )
    const guest = valid.guest
    const a = fresh('inv_')
    const b = fresh('inv_')
    const signed = (query: Record<string, string>) => signedQuery({ shop: domain }, query)
    const targets = [
      `/reviews/new?invitation=${token}%zz`,
      `/reviews/new%zz?invitation=${token}`,
      `/reviews/new?invitation=${token}#fragment`,
      `/reviews/new#invitation=${token}`,
      `/reviews/new?x=1#&invitation=${token}`,
      `/reviews/new?invitation=${a}&invitation=${b}`,
      `/reviews/new?INVITATION=${token}`,
      `/reviews/new?Invitation=${token}&locale=fr`,
      `/reviews/new?invit%61tion=${token}`,
      `/reviews/new;invitation=${token}`,
      `/reviews/new?locale=fr;invitation=${token}`,
      `/proxy/reviews/new?${signed({ invitation: token })}`,
      `/proxy/reviews/new?${signed({ invitation: token })}&invitation=${a}`,
      `/proxy/reviews/new?invitation=${token}&SIGNATURE=${fresh('')}`,
      `/v1/wishlists/shared/${share}%zz`,
      `/v1/wishlists/shared/${share}#x`,
      `/v1/wishlists/shared/${share};jsessionid=1`,
      `/v1/wishlists/SHARED/${share}`,
      `/v1/wishlists/%73hared/${share}`,
      `//v1/wishlists/shared/${share}`,
      `/v1/wishlists/shared/${share}/extra`,
      `http://127.0.0.1/v1/wishlists/shared/${share}`,
      `/api/v1/review-invitations/${token}?x=%zz`,
      `/proxy/shared/${share}?${signed({})}`,
      `/v1/wishlists/${guest}?GUEST_ID=${guest}`,
      `/v1/wishlists/${guest}?guest%5Fid=${guest}&guest_id=${guest}`,
      `/v1/wishlists/${guest};x=1?guest_id=${guest}`,
      `/dashboard?shop=${domain}&id_token=${fresh('eyJ')}&HMAC=${fresh('')}`,
      `/v1/nothing?invitation=${token}&guest_id=${guest}&signature=${fresh('')}`,
    ]
    const answers: number[] = []
    for (const target of targets) {
      const exchange = await rawRequest(port, requestHead('GET', target, { 'x-storefront-key': storefrontKey, connection: 'close' }))
      const res = await exchange.response
      // The server closes the connection (Connection: close) once the answer, and so its access line, is done.
      await exchange.closed
      answers.push(res.status)
      if (res.body.includes('malformed percent-encoding')) routerRefusals++
      else if (res.headers['x-request-id'] !== undefined) requestIds.push(res.headers['x-request-id'])
    }
    // Every one was answered by the app: with its access line, or refused by the router (no line).
    expect(answers).toHaveLength(targets.length)
    expectNoSecretLogged()
  })

  it('with the storage broken: 500s and their error lines', async () => {
    for (const table of ['share_links', 'review_invitations', 'wishlist_items']) {
      await sql`drop table ${sql.table(table)}`.execute(storage.db)
    }
    const before = lines.length
    const routes = credentialRoutes()
    for (const route of routes) await callWith(route, 'valid')
    const errors = lines.slice(before).filter((l) => (JSON.parse(l) as { level: number }).level >= 50)
    expect(errors.length).toBeGreaterThan(0)
    expect(statuses.get(500) ?? 0).toBeGreaterThan(0)
    expectNoSecretLogged()
  })
})
