/**
 * Hostile input, property-based (fast-check): every route of app.routeCatalog gets
 * generated bodies, query strings and path parameters, guided by the OpenAPI document
 * (built from the same schemas that validate requests). The service never answers 5xx,
 * and every error has the documented shape. In the positive mode, requests generated from
 * the document's schemas are never refused with VALIDATION_ERROR: the document is as strict
 * as the validation (the rules it cannot state are listed below, and the generator keeps
 * them). Then: deeply nested and oversized JSON, and unicode and control characters that
 * must be stored and returned faithfully.
 */
import fc from 'fast-check'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { linePriceProblem } from '../../src/lib/money.js'
import { normalizePlatformId, platformIdPattern } from '../../src/lib/platform-ids.js'
import { isStorableText } from '../../src/lib/text.js'
import type { Access } from '../../src/modules/auth/auth.types.js'
import type { RouteEntry } from '../../src/plugins/auth.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'
import { schemaArbitrary } from '../helpers/schema-arbitrary.js'

let t: TestApp
/** Klaviyo, which connecting it asks (the generated keys are unknown there: 400 CHANNEL_KEY_REJECTED). */
let klaviyo: KlaviyoEmulator
let shop: TestShop
let admin: string
let customer: string
let routes: RouteEntry[]
let openapi: {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string }[]
        requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
      }
    >
  >
}

const CUSTOMER = '777'
const GUEST = 'guest-hostile-01'

beforeAll(async () => {
  klaviyo = await startKlaviyoEmulator()
  t = await createTestApp({ env: { KLAVIYO_BASE_URL: klaviyo.url } })
  shop = await t.createShop('scale', { multi_wishlist_enabled: true })
  admin = await shop.adminToken()
  customer = await shop.customerToken(CUSTOMER)
  // The API (the HTML pages /dashboard, /demo and the widget script are not JSON endpoints).
  routes = t.app.routeCatalog.filter((r) => r.url.startsWith('/v1/') || r.url.startsWith('/api/'))
  openapi = (await t.call('GET', '/v1/openapi.json')).body
})
afterAll(async () => {
  await t.close()
  await klaviyo.close()
})

const nasty = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31m',
  '\r\n\r\nHTTP/1.1 200 OK',
  '../../etc/passwd',
  "' or 1=1 --",
  '"; drop table shops; --',
  '%00',
  '%',
  '\uD800',
  '\uFEFF',
  '𝕳𝖊𝖑𝖑𝖔 👩‍👩‍👧‍👦',
  'gid://shopify/Product/1',
  '9'.repeat(40),
  '1e309',
  '-1',
  '0',
  '1.5',
  'NaN',
  'true',
  'null',
  '__proto__',
  'constructor',
  'me',
  '<script>alert(1)</script>',
  'x'.repeat(5000),
  '2016-12-31T23:59:60Z',
  '2016-12-31T18:59:60-05:00',
)
const text = fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 12 }))
/** Arrays and objects nested 1 to 300 levels (the service reads 64). */
const deep = fc.tuple(fc.integer({ min: 1, max: 300 }), fc.boolean()).map(([depth, objects]) => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = objects ? { a: v } : [v]
  return v
})
const json = fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 3 }), text, fc.integer(), fc.constant(null), deep)
/** How a body is sent: as UTF-8 JSON, as Latin-1 bytes (not UTF-8 beyond ASCII), with stray bytes, or labelled with another charset. */
const encoding = fc.constantFrom('utf-8', 'utf-8', 'utf-8', 'latin1', 'stray-bytes', 'charset')

function operation(route: RouteEntry) {
  return openapi.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()]
}

/** The property names a body schema states, its union members' included. */
function propertyNames(schema: unknown): string[] {
  const s = (schema ?? {}) as { properties?: Record<string, unknown>; anyOf?: unknown[]; oneOf?: unknown[] }
  return [...new Set([...Object.keys(s.properties ?? {}), ...[...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap(propertyNames)])]
}

function requestFor(route: RouteEntry) {
  const op = operation(route)
  const queryNames = (op?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
  const bodyNames = propertyNames(op?.requestBody?.content?.['application/json']?.schema)
  const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1] as string)
  const key = (names: string[]) =>
    names.length ? fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })) : fc.string({ maxLength: 8 })
  const body = fc.oneof(fc.dictionary(key(bodyNames), json, { maxKeys: 6 }), json, fc.constant(undefined))
  const query = fc.dictionary(key([...queryNames, 'guest_id']), fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxKeys: 4 })
  const path = fc.tuple(...params.map(() => fc.oneof(text, fc.constantFrom('me', CUSTOMER, GUEST, '1'))))
  const as = fc.constantFrom(...(['admin', 'customer', 'guest', 'storefront', 'none'] as const))
  return fc.record({ body, query, path, as, encoding })
}

/** The shop whose credentials a request carries (the positive mode has its own, as it changes settings). */
interface Caller {
  shop: TestShop
  admin: string
  customer: string
}

async function credentials(kind: 'admin' | 'customer' | 'guest' | 'storefront' | 'none', who?: Caller): Promise<Record<string, string>> {
  const caller = who ?? { shop, admin, customer }
  const key = (await t.app.services.shops.get(caller.shop.id))?.storefrontKey ?? caller.shop.storefrontKey
  switch (kind) {
    case 'admin':
      return { authorization: `Bearer ${caller.admin}` }
    case 'customer':
      return { authorization: `Bearer ${caller.customer}` }
    case 'guest':
      return { 'x-storefront-key': key, 'x-guest-id': GUEST }
    case 'storefront':
      return { 'x-storefront-key': key }
    default:
      return {}
  }
}

/** encodeURIComponent, but a lone surrogate goes out as the raw (invalid UTF-8) bytes it would be. */
function encode(s: string): string {
  try {
    return encodeURIComponent(s)
  } catch {
    return s
      .replace(/[\uD800-\uDFFF]/g, '%ED%A0%80')
      .split('%ED%A0%80')
      .map(encodeURIComponent)
      .join('%ED%A0%80')
  }
}

function queryString(q: Record<string, string | string[]>): string {
  const parts: string[] = []
  for (const [k, v] of Object.entries(q)) for (const one of [v].flat()) parts.push(`${encode(k)}=${encode(one)}`)
  return parts.length ? `?${parts.join('&')}` : ''
}

function expectDocumentedAnswer(
  route: RouteEntry,
  url: string,
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
) {
  const where = `${route.method} ${url}`
  expect({ where, status: res.statusCode < 500 ? 'not 5xx' : `${res.statusCode} ${res.body}` }).toEqual({ where, status: 'not 5xx' })
  if (res.statusCode < 400) return
  const parsed = JSON.parse(res.body) as Record<string, unknown>
  const error = { code: expect.any(String), message: expect.any(String) }
  if (url.startsWith('/api/')) expect(parsed).toMatchObject({ error })
  else expect(parsed).toMatchObject({ ok: false, error })
  if (!url.startsWith('/api/')) expect(Object.keys(parsed).sort()).toEqual(['error', 'ok'])
}

describe('generated requests on every route', () => {
  it('never answer 5xx and always use the documented error shape', { timeout: 240_000 }, async () => {
    const arbitrary = fc.constantFrom(...routes).chain((route) => requestFor(route).map((req) => ({ route, ...req })))
    let sent = 0
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ route, body, query, path, as, encoding }) => {
        let i = 0
        const url = route.url.replace(/:(\w+)/g, () => encode(path[i++] as string)) + queryString(query)
        const opts: InjectOptions = { method: route.method as InjectOptions['method'], url, headers: await credentials(as) }
        if (body !== undefined && route.method !== 'GET' && route.method !== 'DELETE') {
          const raw = JSON.stringify(body)
          opts.payload =
            encoding === 'latin1'
              ? Buffer.from(raw, 'latin1')
              : encoding === 'stray-bytes'
                ? Buffer.concat([Buffer.from(raw), Buffer.from([0xff, 0xc3, 0x28])])
                : Buffer.from(raw)
          opts.headers = {
            ...opts.headers,
            'content-type': encoding === 'charset' ? 'application/json; charset=iso-8859-1' : 'application/json',
          }
        }
        const res = await t.inject(opts)
        sent++
        expectDocumentedAnswer(route, url, res)
      }),
      { numRuns: Math.max(600, routes.length * 12) },
    )
    expect(sent).toBeGreaterThanOrEqual(600)
  })

  it('never answer 5xx to raw bodies that are not JSON, or JSON that lies about its type', async () => {
    const bodies = [
      '{',
      '{"a":',
      'nul',
      '\u0000',
      '[1,2',
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '"just a string"',
      '123',
      'true',
      '\uFEFF{}',
    ]
    for (const route of routes.filter((r) => r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH')) {
      const url = route.url.replace(/:(\w+)/g, '1')
      for (const payload of bodies) {
        for (const as of ['admin', 'guest'] as const) {
          const res = await t.inject({
            method: route.method as InjectOptions['method'],
            url,
            payload,
            headers: { ...(await credentials(as)), 'content-type': 'application/json' },
          })
          expectDocumentedAnswer(route, url, res)
        }
      }
    }
  })
})

/**
 * Rules of the service that the OpenAPI document cannot state (they join fields, depend on
 * the credentials or on stored state). The positive mode's generator keeps each of them;
 * everything else it sends comes from the document's schemas alone.
 */
export const RULES_THE_SCHEMA_CANNOT_STATE = [
  'text anywhere holds no NUL (U+0000) and no lone UTF-16 surrogate',
  'the owner segment fits the credentials: an admin token names a customer id, a customer token `me` or its own id, guest mode `me` or its own guest id',
  'DELETE and PATCH …/items/{productId} without by=handle: productId is a product id (digits or a GID)',
  'item notes: at most 280 characters once trimmed',
  'order.created: a currency when a line item has a price',
  'bulk delete: product_ids and handles hold at most 100 entries together',
  'item metadata: at most 200 characters serialized',
  'list names: not made only of format characters (Unicode Cf) once trimmed',
  'product.updated: no variant twice (after GID normalization)',
  'order.created: at most 5,000 line items across the orders of one request',
  'helpful votes: a customer token or guest mode (a storefront key alone, or an admin token, has no voter)',
  'review invitation: only a usable invitation of the shop, for its product (the generator leaves it out)',
  'webhook url: not a *.local, *.internal, *.localdomain or *.localhost name',
  'URLs (webhook url, review photos): the document states the scheme; that the rest parses as a browser parses it (a host, no credentials) is kept by generating web URLs (helpers/schema-arbitrary.ts)',
  'e-mail addresses and texts the service trims: at most 254 characters, and the other bounds, after trimming (the patterns state them; the e-mail length only in the description)',
] as const

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON (documents, answers) read as each test expects
type Json = Record<string, any>
type As = 'admin' | 'customer' | 'guest' | 'storefront' | 'none'

const metadataFits = (m: unknown) => m === undefined || JSON.stringify(m).length <= 200
const visibleName = (name: unknown) => typeof name !== 'string' || /[^\p{Cf}\s]/u.test(name)
const publicHost = (url: string) => !/\.(local|internal|localdomain|localhost)$/i.test(new URL(url).hostname)

/** Whether a generated request keeps the rules above (the ones that are about its fields). */
function keepsTheRules(route: RouteEntry, req: { body: unknown; query: Record<string, string>; path: Record<string, string> }): boolean {
  const body = req.body as Json | undefined
  const key = `${route.method} ${route.url}`
  if (
    (key === 'DELETE /v1/wishlists/:customerId/items/:productId' || key === 'PATCH /v1/wishlists/:customerId/items/:productId') &&
    req.query.by === undefined
  ) {
    if (normalizePlatformId(req.path.productId as string, 'Product') === null) return false
  }
  if (body === undefined) return true
  const items = [body, ...((body.guest_items ?? body.items ?? []) as Json[])]
  if (
    key.startsWith('P') &&
    key.includes('/v1/wishlists') &&
    !items.every((i) => typeof i?.note !== 'string' || [...(i.note as string).trim()].length <= 280)
  )
    return false
  if (key === 'POST /v1/wishlists/:customerId/items/bulk-delete' && (body.product_ids?.length ?? 0) + (body.handles?.length ?? 0) > 100)
    return false
  if (key === 'POST /v1/wishlists/:customerId/items' && !metadataFits(body.metadata)) return false
  if (key === 'POST /v1/wishlists/import' && !(body.items as Json[]).every((i) => metadataFits(i.metadata))) return false
  if (key.includes('/lists') && !visibleName(body.name)) return false
  if (key === 'POST /v1/webhooks' && !publicHost(body.url)) return false
  if (key === 'POST /v1/events') {
    const events = body.events as Json[]
    let lineItems = 0
    for (const e of events) {
      if (e.type === 'product.updated') {
        const ids = (e.variants as Json[]).map((v) => normalizePlatformId(v.variant_id, 'ProductVariant'))
        if (new Set(ids).size !== ids.length) return false
      }
      if (e.type === 'order.created') {
        lineItems += (e.line_items as Json[]).length
        if (e.currency === undefined && (e.line_items as Json[]).some((l) => l.price !== undefined)) return false
        if ((e.line_items as Json[]).some((l) => l.price !== undefined && linePriceProblem(l.price, e.currency) !== null)) return false
      }
    }
    if (lineItems > 5000) return false
  }
  return true
}

/** The credentials the generator may use on a route, and the owner segments they may name. */
function allowedCredentials(route: RouteEntry): As[] {
  const access = route.access as Access[]
  if (access.includes('public')) return ['none']
  const kinds = (['admin', 'customer', 'guest', 'storefront'] as const).filter((k) => access.includes(k))
  if (route.url === '/api/v1/reviews/:id/helpful') return kinds.filter((k) => k === 'customer' || k === 'guest')
  return kinds
}

const customerIdArbitrary = fc.stringMatching(new RegExp(platformIdPattern('Customer')))
function ownerFor(as: As): fc.Arbitrary<string> {
  if (as === 'customer') return fc.constantFrom('me', CUSTOMER)
  if (as === 'guest') return fc.constantFrom('me', GUEST)
  return customerIdArbitrary
}

function positiveRequestFor(route: RouteEntry) {
  const op = operation(route) as Json
  const components = (openapi as unknown as Json).components.schemas as Record<string, Json>
  const arb = (schema: Json) => schemaArbitrary(schema, { components, text: isStorableText })
  const params = (op.parameters ?? []) as Json[]
  const bodySchema = op.requestBody?.content?.['application/json']?.schema as Json | undefined
  return fc.constantFrom(...allowedCredentials(route)).chain((as) => {
    const path: Record<string, fc.Arbitrary<string>> = {}
    const query: Record<string, fc.Arbitrary<string>> = {}
    const optionalQuery: string[] = []
    for (const p of params) {
      if (p.in === 'path') path[p.name] = p.name === route.owner ? ownerFor(as) : (arb(p.schema).map(String) as fc.Arbitrary<string>)
      if (p.in === 'query') {
        query[p.name] = arb(p.schema).map(String) as fc.Arbitrary<string>
        if (!p.required) optionalQuery.push(p.name)
      }
    }
    const requiredQuery = Object.keys(query).filter((n) => !optionalQuery.includes(n))
    return fc.record({
      as: fc.constant(as),
      path: fc.record(path),
      query: fc.record(query, { requiredKeys: requiredQuery }),
      // A body the document marks optional is sometimes left out.
      body: bodySchema
        ? op.requestBody?.required === false
          ? fc.option(arb(bodySchema), { nil: undefined, freq: 3 })
          : arb(bodySchema)
        : fc.constant(undefined),
    })
  })
}

describe('requests generated from the OpenAPI document (positive mode)', () => {
  it('are never refused with VALIDATION_ERROR, and never answered 5xx', { timeout: 300_000 }, async () => {
    // Its own shop: the generated requests change settings, rotate keys and erase customers.
    const own = await t.createShop('scale', { multi_wishlist_enabled: true })
    const caller: Caller = { shop: own, admin: await own.adminToken(), customer: await own.customerToken(CUSTOMER) }
    const documented = routes.filter((r) => operation(r) !== undefined && allowedCredentials(r).length > 0)
    expect(documented.length).toBeGreaterThanOrEqual(45)
    const arbitrary = fc
      .constantFrom(...documented)
      .chain((route) => positiveRequestFor(route).map((req) => ({ route, ...req })))
      // A review invitation must be a usable one of the shop: left out.
      .map((req) =>
        req.route.url === '/api/v1/reviews' && req.body ? { ...req, body: { ...(req.body as Json), invitation: undefined } } : req,
      )
      .filter(({ route, body, query, path }) => keepsTheRules(route, { body, query, path }))
    const statuses = new Map<string, Set<number>>()
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ route, as, path, query, body }) => {
        const url = route.url.replace(/:(\w+)/g, (_m, name: string) => encode(path[name] as string)) + queryString(query)
        const opts: InjectOptions = { method: route.method as InjectOptions['method'], url, headers: await credentials(as, caller) }
        if (body !== undefined) {
          opts.payload = JSON.stringify(body)
          opts.headers = { ...opts.headers, 'content-type': 'application/json' }
        }
        const res = await t.inject(opts)
        expectDocumentedAnswer(route, url, res)
        const code = res.statusCode >= 400 ? (JSON.parse(res.body) as { error: { code: string } }).error.code : 'ok'
        const request = `${route.method} ${url} as ${as}`
        expect({ request, body, answer: code === 'VALIDATION_ERROR' ? res.body : 'not VALIDATION_ERROR' }).toEqual({
          request,
          body,
          answer: 'not VALIDATION_ERROR',
        })
        const seen = statuses.get(`${route.method} ${route.url}`) ?? new Set<number>()
        seen.add(res.statusCode)
        statuses.set(`${route.method} ${route.url}`, seen)
      }),
      // POSITIVE_RUNS=5000 for a longer search after a schema change.
      { numRuns: Number(process.env.POSITIVE_RUNS ?? Math.max(400, documented.length * 8)) },
    )
    // The generator reaches (nearly) every route, and most of them accept what it sends.
    expect(statuses.size).toBeGreaterThanOrEqual(documented.length - 3)
    const accepted = [...statuses.values()].filter((s) => [...s].some((c) => c < 400)).length
    expect(accepted).toBeGreaterThanOrEqual(documented.length / 2)
  })
})

describe('deeply nested and oversized JSON', () => {
  const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth)
  const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)

  it.each([
    ['10,000 nested arrays', nested(10_000)],
    ['100,000 nested arrays', nested(100_000)],
    ['50,000 nested objects', objects(50_000)],
    ['nested arrays inside a field', `{"product_id":${nested(20_000)}}`],
  ])('answers %s with a 4xx on every JSON route, and keeps serving', async (_name, payload) => {
    for (const route of routes.filter((r) => r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH')) {
      const url = route.url.replace(/:(\w+)/g, (_m, name: string) => (name === route.owner ? CUSTOMER : '1'))
      const res = await t.inject({
        method: route.method as InjectOptions['method'],
        url,
        payload,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      })
      expectDocumentedAnswer(route, url, res)
    }
    const ok = await t.call('GET', `/v1/wishlists/${CUSTOMER}`, { token: admin })
    expect(ok.status).toBe(200)
  })

  it('answers a body over 1 MiB with 413 PAYLOAD_TOO_LARGE on every JSON route', async () => {
    const payload = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), product_id: '1' })
    for (const route of routes.filter((r) => r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH')) {
      const url = route.url.replace(/:(\w+)/g, (_m, name: string) => (name === route.owner ? CUSTOMER : '1'))
      // A caller the route admits (a shopper's own routes refuse an admin token before reading the body).
      const token = route.access.includes('admin') ? admin : customer
      const res = await t.inject({
        method: route.method as InjectOptions['method'],
        url,
        payload,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      })
      expect({ url, status: res.statusCode }).toEqual({ url, status: 413 })
      expectDocumentedAnswer(route, url, res)
    }
  })

  it('answers a 1 MiB query string or path without a 5xx', async () => {
    for (const url of [
      `/v1/wishlists/${CUSTOMER}?limit=${'9'.repeat(100_000)}`,
      `/v1/wishlists/${'1'.repeat(50_000)}/items`,
      `/api/v1/products/${'%'.repeat(1000)}/reviews`,
    ]) {
      const res = await t.inject({ method: 'GET', url, headers: { authorization: `Bearer ${admin}` } })
      expect(res.statusCode).toBeLessThan(500)
    }
  })
})

describe('unicode and control characters', () => {
  // Any code point (fast-check 'binary': the whole range, control characters included)
  // and some characters that are known trouble for databases and terminals.
  const wild = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    fc.constantFrom('\u0001\u001f\u007f', '\u202Eevil', 'ZWJ\u200D👩‍💻', '\uFFFF', 'é vs é', '\t\n\r\u000b\u000c', '𝕏', '\u0085'),
  )

  it('refuses the NUL character with 400 VALIDATION_ERROR (PostgreSQL text cannot hold it) on both backends', async () => {
    const res = await t.call('POST', `/v1/wishlists/${CUSTOMER}/items`, { token: admin, body: { product_id: '5', handle: 'a\u0000b' } })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'body.handle', message: 'must not contain the NUL character (U+0000)' }],
    })
    const q = await t.call('GET', `/v1/wishlists/${CUSTOMER}?wishlist_id=%00`, { token: admin })
    expect(q.status).toBe(400)
  })

  it('refuses a lone UTF-16 surrogate (no UTF-8 form: both databases would store U+FFFD) wherever text is sent', async () => {
    const handle = await t.inject({
      method: 'POST',
      url: `/v1/wishlists/${CUSTOMER}/items`,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: '{"product_id":"6","handle":"a\\ud800b"}',
    })
    expect(handle.statusCode).toBe(400)
    expect(handle.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'body.handle', message: expect.stringContaining('well-formed Unicode') }],
    })
    const name = await t.inject({
      method: 'POST',
      url: `/v1/wishlists/${CUSTOMER}/lists`,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: '{"name":"L\\udc00"}',
    })
    expect(name.statusCode).toBe(400)
    // A surrogate pair (an emoji written as JSON escapes) is well-formed.
    const pair = await t.inject({
      method: 'POST',
      url: `/v1/wishlists/${CUSTOMER}/items`,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: '{"product_id":"7","handle":"\\ud83d\\ude00"}',
    })
    expect(pair.json().data.item.handle).toBe('😀')
  })

  it('stores item handles as given and returns them unchanged', { timeout: 120_000 }, async () => {
    let n = 0
    await fc.assert(
      fc.asyncProperty(
        wild.filter((s) => s.length <= 255 && isStorableText(s)),
        async (handle) => {
          const productId = String(100_000 + n++)
          const res = await t.call('POST', `/v1/wishlists/${CUSTOMER}/items`, { token: admin, body: { product_id: productId, handle } })
          expect(res.status).toBe(201)
          expect(res.body.data.item.handle).toBe(handle)
          const list = await t.call('GET', `/v1/wishlists/${CUSTOMER}?limit=1`, { token: admin })
          expect(list.body.data.items[0]).toMatchObject({ productId, handle })
        },
      ),
      { numRuns: 60 },
    )
  })

  it('stores list names as given (trimmed) or refuses them with a 4xx, never a 5xx', { timeout: 120_000 }, async () => {
    const owner = '778'
    await fc.assert(
      fc.asyncProperty(wild.filter(isStorableText), async (name) => {
        const res = await t.call('POST', `/v1/wishlists/${owner}/lists`, { token: admin, body: { name } })
        expect(res.status).toBeLessThan(500)
        if (res.status === 201) {
          expect(res.body.data.wishlist.name).toBe(name.trim())
          const lists = await t.call('GET', `/v1/wishlists/${owner}/lists`, { token: admin })
          expect(lists.body.data.wishlists.map((w: { name: string }) => w.name)).toContain(name.trim())
          await t.call('DELETE', `/v1/wishlists/${owner}/lists/${res.body.data.wishlist.wishlistId}`, { token: admin })
        } else {
          expect(res.body).toMatchObject({ ok: false, error: { code: expect.stringMatching(/^(VALIDATION_ERROR|LIST_NAME_TAKEN)$/) } })
        }
      }),
      { numRuns: 60 },
    )
  })

  it('stores review names, titles and bodies as given (trimmed) and returns them unchanged', { timeout: 120_000 }, async () => {
    const sf = { 'x-storefront-key': (await t.app.services.shops.get(shop.id))?.storefrontKey ?? shop.storefrontKey }
    let n = 0
    const nonBlank = wild.filter((s) => s.trim().length > 0 && isStorableText(s))
    await fc.assert(
      fc.asyncProperty(
        nonBlank.filter((s) => s.trim().length <= 100),
        wild.filter((s) => s.trim().length <= 150 && isStorableText(s)),
        nonBlank,
        async (customerName, title, body) => {
          const productId = String(200_000 + n++)
          const res = await t.call('POST', '/api/v1/reviews', {
            headers: sf,
            body: { productId, customerEmail: `u${n}@example.com`, customerName, rating: 4, title, body },
          })
          expect(res.status).toBe(201)
          const one = await t.call('GET', `/api/v1/reviews/${res.body.id}`, { token: admin })
          expect(one.status).toBe(200)
          expect({ customerName: one.body.customerName, title: one.body.title, body: one.body.body }).toEqual({
            customerName: customerName.trim(),
            title: title.trim(),
            body: body.trim(),
          })
        },
      ),
      { numRuns: 40 },
    )
  })
})
