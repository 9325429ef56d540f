/**
 * Caching headers over every route of app.routeCatalog (docs/api.md, "Caching"): each route is
 * called with valid credentials of every kind it takes (through the Shopify app proxy for the
 * `/proxy` routes, signed as Shopify signs), on a shop seeded so that its reads and most of
 * its writes succeed.
 *
 * - An answer that carries a customer's or guest's data (every credentialed route, everything
 *   proxied, and the public routes whose URL or body is the credential) is sent
 *   `Cache-Control: private, no-store`, its errors included.
 * - A public read (a shared list, a product's reviews) states its caching and Varies on every
 *   request header its answer depends on, through the app proxy too (its answer is the same
 *   whoever asks); asked with an admin token it is private. Its errors are `no-store`.
 * - Every other public route is listed below as carrying nobody's data, so that a new public
 *   route needs a decision here.
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RouteEntry } from '../../src/plugins/auth.js'
import { DEMO_DOMAIN } from '../../src/modules/storefront/storefront.routes.js'
import { optOutToken } from '../../src/modules/notifications/opt-out.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'
import { newShopDomain, sessionToken, SHOPIFY_ENV, signedQuery } from '../helpers/shopify.js'

const PRIVATE = 'private, no-store'
const CUSTOMER = '1001'
const GUEST = 'guest-cache-01'
const PRODUCT = '7001'

/** The public reads: their Cache-Control and the request headers they Vary on. */
const REVIEW_READ = { cacheControl: 'public, max-age=300', vary: ['Origin', 'Authorization', 'X-Storefront-Key'] }
const PUBLIC_READS: Record<string, { cacheControl: string; vary: string[] }> = {
  'GET /v1/wishlists/shared/:shareToken': { cacheControl: 'no-cache', vary: ['Origin'] },
  'GET /api/v1/products/:productId/reviews': REVIEW_READ,
  'GET /api/v1/products/:productId/reviews/summary': REVIEW_READ,
  'GET /api/v1/reviews/:id': REVIEW_READ,
}
/** Public routes whose answers carry a customer's data or a credential: the URL or the body is the proof. */
const PERSONAL_PUBLIC = new Set([
  'POST /v1/auth/token',
  'POST /v1/auth/shopify-session',
  'GET /api/v1/review-invitations/:token',
  'GET /reviews/new',
  'POST /reviews/new',
  'POST /demo/login',
  'GET /notifications/opt-out/:token',
  'POST /notifications/opt-out/:token',
])
/** Public routes that carry nobody's data: files, health, the API description, the Shopify webhook and Flow lifecycle intakes. */
const IMPERSONAL_PUBLIC =
  /^(GET \/(readyz|healthz|metrics|v1\/openapi\.json|widget[\w.-]*\.js|favicon\.ico|demo|demo\/app\.js|dashboard|dashboard\/index\.html|dashboard\/assets\/:file)|POST \/v1\/platforms\/shopify\/(webhooks|flow\/lifecycle)|OPTIONS \/\*)$/

type Kind = 'admin' | 'customer' | 'guest' | 'storefront' | 'none'

let t: TestApp
let shop: TestShop
/** Klaviyo, for connecting it (PUT /v1/admin/channels/klaviyo checks the key there). */
let klaviyo: KlaviyoEmulator
const KLAVIYO_KEY = 'pk_cache0headers0test0key000000000001'
let admin: string
let customer: string
let routes: RouteEntry[]
const shopifyDomain = newShopDomain()
const seeded: Record<string, string> = {}

const keyOf = (r: RouteEntry) => `${r.method} ${r.url}`
const storefrontKey = async () => (await t.app.services.shops.get(shop.id))?.storefrontKey ?? shop.storefrontKey

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<LightMyRequestResponse> {
  const opts: InjectOptions = { method: method as InjectOptions['method'], url, headers: { ...headers, origin: 'https://shop.example' } }
  if (typeof body === 'string') {
    opts.payload = body
    opts.headers = { ...opts.headers, 'content-type': 'application/x-www-form-urlencoded' }
  } else if (body !== undefined) {
    opts.payload = JSON.stringify(body)
    opts.headers = { ...opts.headers, 'content-type': 'application/json' }
  }
  return t.inject(opts)
}

async function credentials(kind: Kind): Promise<Record<string, string>> {
  if (kind === 'admin') return { authorization: `Bearer ${admin}` }
  if (kind === 'customer') return { authorization: `Bearer ${customer}` }
  if (kind === 'guest') return { 'x-storefront-key': await storefrontKey(), 'x-guest-id': GUEST }
  if (kind === 'storefront') return { 'x-storefront-key': await storefrontKey() }
  return {}
}

const ok = (res: LightMyRequestResponse, what: string) => {
  expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(300)
  return res.json()
}

beforeAll(async () => {
  klaviyo = await startKlaviyoEmulator({ keys: { [KLAVIYO_KEY]: 'ACCT_CACHE' } })
  t = await createTestApp({ env: { ...SHOPIFY_ENV, KLAVIYO_BASE_URL: klaviyo.url }, demoPages: true })
  shop = await t.createShop('scale', { multi_wishlist_enabled: true, reviews_auto_approve: true })
  admin = await shop.adminToken()
  customer = await shop.customerToken(CUSTOMER)
  await t.app.services.shops.create({ domain: DEMO_DOMAIN, plan: 'scale' })
  const asCustomer = { authorization: `Bearer ${customer}` }
  ok(await call('POST', '/v1/wishlists/me/items', asCustomer, { product_id: PRODUCT, handle: 'bag' }), 'add')
  ok(await call('POST', '/v1/wishlists/me/items', await credentials('guest'), { product_id: PRODUCT }), 'guest add')
  seeded.reviewId = String(
    ok(
      await call('POST', '/api/v1/reviews', await credentials('storefront'), {
        productId: PRODUCT,
        customerEmail: 'ann@example.com',
        customerName: 'Ann',
        rating: 5,
        body: 'Lovely',
      }),
      'review',
    ).id,
  )
  seeded.webhookId = ok(
    await call(
      'POST',
      '/v1/webhooks',
      { authorization: `Bearer ${admin}` },
      { url: 'https://hooks.example/in', events: ['review.requested'] },
    ),
    'webhook',
  ).data.webhookId
  ok(
    await call(
      'POST',
      '/v1/events',
      { authorization: `Bearer ${admin}` },
      {
        events: [
          {
            type: 'order.created',
            order_id: '5001',
            customer_id: CUSTOMER,
            email: 'ann@example.com',
            line_items: [{ product_id: '7002' }],
          },
        ],
      },
    ),
    'order',
  )
  seeded.invitation = ok(
    await call('GET', '/v1/admin/review-invitations?order_id=5001', { authorization: `Bearer ${admin}` }),
    'invitations',
  ).data.invitations[0].token
  // The Shopify shop behind the proxy (installed by its first signed request), on the plan and settings of the direct one.
  const proxied = await channel(
    { method: 'GET', url: '/proxy/v1/wishlists/:customerId', access: ['customer'], owner: 'customerId' },
    'storefront',
  )
  ok(await proxied('GET', '/api/v1/products/7001/reviews/summary'), 'install')
  const installed = await t.app.services.shops.byDomain(shopifyDomain)
  await t.app.services.shops.setPlan(installed!.id, 'scale')
  await t.app.services.shops.updateSettings(installed!.id, { multi_wishlist_enabled: true, reviews_auto_approve: true })
  seeded.proxyReviewId = String(
    ok(
      await proxied('POST', '/api/v1/reviews', {
        productId: PRODUCT,
        customerEmail: 'di@example.com',
        customerName: 'Di',
        rating: 5,
        body: 'Fine',
      }),
      'proxied review',
    ).id,
  )
  routes = t.app.routeCatalog.filter((r) => r.method !== 'HEAD')
})
afterAll(async () => {
  await t.close()
  await klaviyo.close()
})

/** What the answer must say: private, a public read, or nothing asked of it (a public route of nobody's data). */
function expected(route: RouteEntry, kind: Kind): 'private' | { cacheControl: string; vary: string[] } | undefined {
  const read = PUBLIC_READS[keyOf(route).replace(' /proxy/', ' /')]
  if (route.url.startsWith('/proxy')) return read ?? 'private'
  if (read !== undefined) return kind === 'admin' ? 'private' : read
  if (PERSONAL_PUBLIC.has(keyOf(route)) || route.access.some((a) => a !== 'public')) return 'private'
  return undefined
}

/** The kinds of caller a route takes, as credentials this test can present. */
function kindsOf(route: RouteEntry): Kind[] {
  if (route.url.startsWith('/proxy')) {
    // Through the proxy: a logged-in customer, a guest, or neither (no admin tokens there).
    const kinds = (['customer', 'guest', 'storefront'] as const).filter((k) => route.access.includes(k) || route.access.includes('public'))
    return route.access.includes('public') ? kinds.filter((k) => k !== 'storefront') : kinds
  }
  if (route.access.includes('public')) return ['none']
  return (['admin', 'customer', 'guest', 'storefront'] as const).filter((k) => route.access.includes(k))
}

type Send = (method: string, path: string, body?: unknown) => Promise<LightMyRequestResponse>

/** How a caller of this kind reaches the route: directly with its credentials, or through the app proxy, signed. */
async function channel(route: RouteEntry, kind: Kind): Promise<Send> {
  if (!route.url.startsWith('/proxy')) {
    const headers = await credentials(kind)
    return (method, path, body) => call(method, path, headers, body)
  }
  const headers: Record<string, string> = {
    'x-forwarded-for': '203.0.113.7, 23.227.38.1',
    ...(kind === 'guest' ? { 'x-guest-id': GUEST } : {}),
  }
  return (method, path, body) => {
    const [bare, query] = path.split('?')
    const proof = signedQuery({ shop: shopifyDomain, ...(kind === 'customer' ? { customerId: CUSTOMER } : {}) })
    return call(method, `/proxy${bare === '/' ? '' : bare}?${query ? `${query}&` : ''}${proof}`, headers, body)
  }
}

const randomName = () => `List ${Math.random().toString(36).slice(2, 8)}`

/** Path parameters: the seeded records, and fresh ones for the routes that change or delete theirs. */
async function pathFor(route: RouteEntry, kind: Kind, via: Send): Promise<string | undefined> {
  const own = kind === 'admin' ? CUSTOMER : 'me'
  const proxied = route.url.startsWith('/proxy')
  let path = proxied ? route.url.slice('/proxy'.length) : route.url
  for (const [, name] of [...path.matchAll(/:(\w+)/g)]) {
    let value: string
    if (name === route.owner) value = own
    else if (name === 'productId') {
      value = PRODUCT
      // The walk removes the item on the way (DELETE …/items/:productId): put it back first.
      if (route.owner !== undefined) ok(await via('POST', `/v1/wishlists/${own}/items`, { product_id: PRODUCT }), 'item')
    }
    // The link as it is now (the walk revokes it on the way: DELETE …/share).
    else if (name === 'shareToken')
      value = ok(await call('GET', '/v1/wishlists/me/share', { authorization: `Bearer ${customer}` }), 'share').data.token
    else if (name === 'token' && route.url.startsWith('/notifications/opt-out/'))
      value = optOutToken(t.config.jwtSecret, shop.id, { type: 'customer', id: CUSTOMER })
    else if (name === 'token') value = seeded.invitation as string
    else if (name === 'webhookId') {
      value = seeded.webhookId as string
      if (route.method === 'DELETE')
        value = ok(
          await call(
            'POST',
            '/v1/webhooks',
            { authorization: `Bearer ${admin}` },
            { url: 'https://hooks.example/gone', events: ['wishlist.item.added'] },
          ),
          'webhook',
        ).data.webhookId
    } else if (name === 'keyId')
      value = ok(await call('POST', '/v1/admin/api-keys', { authorization: `Bearer ${admin}` }, { name: 'to revoke' }), 'key').data.keyId
    else if (name === 'id') {
      value = (proxied ? seeded.proxyReviewId : seeded.reviewId) as string
      if (route.method === 'DELETE' && route.url.endsWith('/:id')) {
        value = String(
          ok(
            await call('POST', '/api/v1/reviews', await credentials('storefront'), {
              productId: PRODUCT,
              customerEmail: 'bo@example.com',
              customerName: 'Bo',
              rating: 4,
              body: 'Nice',
            }),
            'review',
          ).id,
        )
      }
    } else if (name === 'listId')
      value = ok(await via('POST', `/v1/wishlists/${own}/lists`, { name: randomName() }), 'list').data.wishlist.wishlistId
    else if (name === 'customerId')
      value = '1009' // the admin's privacy routes: another customer, erased without harm
    else return undefined // a dashboard asset: a file, not a data route
    path = path.replace(`:${name}`, encodeURIComponent(value))
  }
  return path
}

/** A body that the route accepts, for the writes; undefined for the rest. */
async function bodyFor(route: RouteEntry, kind: Kind, via: Send): Promise<unknown> {
  const own = kind === 'admin' ? CUSTOMER : 'me'
  const url = route.url.replace(/^\/proxy/, '')
  switch (`${route.method} ${url}`) {
    case 'POST /v1/auth/token':
      return { api_key: shop.keyId, api_secret: shop.secret, customer_id: CUSTOMER }
    case 'POST /v1/auth/shopify-session':
      return { session_token: await sessionToken(shopifyDomain) }
    case 'PATCH /v1/admin/settings':
      return { multi_wishlist_enabled: true }
    case 'POST /v1/admin/api-keys':
      return { name: 'cache test' }
    case 'POST /v1/webhooks':
      return { url: 'https://hooks.example/more', events: ['wishlist.item.added'] }
    case 'PUT /v1/admin/channels/klaviyo':
      return { private_key: KLAVIYO_KEY }
    case 'PUT /v1/admin/customers/:customerId/contact':
      return { email: 'c@example.com' }
    case 'PUT /v1/wishlists/:customerId/contact':
      return { email: `${kind}@example.com`, consent: true, consent_text: 'E-mail me about my wishlist.' }
    case 'POST /v1/events':
      return { events: [{ type: 'order.created', order_id: '5002', customer_id: '1004', line_items: [{ product_id: '7005' }] }] }
    case 'POST /v1/wishlists/:customerId/items':
      return { product_id: '7003' }
    case 'POST /v1/wishlists/:customerId/items/bulk-delete':
      return { product_ids: ['7999'] }
    case 'PATCH /v1/wishlists/:customerId/items/:productId':
      return { note: 'gift' }
    case 'POST /v1/wishlists/:customerId/merge':
      return { guest_id: GUEST }
    case 'POST /v1/wishlists/:customerId/lists':
    case 'PUT /v1/wishlists/:customerId/lists/:listId':
      return { name: randomName() }
    case 'POST /v1/wishlists/:customerId/items/move': {
      ok(await via('POST', `/v1/wishlists/${own}/items`, { product_id: PRODUCT }), 'item')
      const to = ok(await via('POST', `/v1/wishlists/${own}/lists`, { name: randomName() }), 'list').data.wishlist.wishlistId
      return { product_id: PRODUCT, from: 'default', to }
    }
    case 'POST /v1/wishlists/import':
      return { items: [{ customer_id: '1003', product_id: '7004' }] }
    case 'POST /api/v1/reviews':
      return { productId: PRODUCT, customerEmail: `${kind}@example.com`, customerName: 'Cy', rating: 4, body: 'Good' }
    case 'PUT /api/v1/reviews/:id/reply':
      return { body: 'Thank you' }
    case 'POST /demo/login':
      return { customerId: CUSTOMER }
    case 'POST /reviews/new':
      return `invitation=${seeded.invitation}&rating=5&body=Great&name=Ann&email=ann%40example.com`
    case 'POST /remove':
      return `product_id=${PRODUCT}`
    default:
      return route.method === 'GET' || route.method === 'DELETE' ? undefined : {}
  }
}

async function send(route: RouteEntry, kind: Kind): Promise<LightMyRequestResponse | undefined> {
  const via = await channel(route, kind)
  const path = await pathFor(route, kind, via)
  if (path === undefined) return undefined
  const body = await bodyFor(route, kind, via)
  const query = route.url === '/reviews/new' && route.method === 'GET' ? `?invitation=${seeded.invitation}` : ''
  return via(route.method, `${path}${query}`, body)
}

describe('caching headers on every route', () => {
  it("every public route is classified: a public read, personal, or nobody's data", () => {
    const unclassified = routes
      .filter((r) => r.access.includes('public') && !r.url.startsWith('/proxy'))
      .map(keyOf)
      .filter((k) => PUBLIC_READS[k] === undefined && !PERSONAL_PUBLIC.has(k) && !IMPERSONAL_PUBLIC.test(k))
    expect(unclassified).toEqual([])
  })

  it(
    'customer, guest and credential answers are private, no-store; public reads state their caching and Vary',
    { timeout: 120_000 },
    async () => {
      const wrong: string[] = []
      const succeeded = { private: new Set<string>(), publicRead: new Set<string>() }
      let answers = 0
      const refused = new Map<string, string>()
      for (const route of routes) {
        for (const kind of kindsOf(route)) {
          const want = expected(route, kind)
          if (want === undefined) continue
          const res = await send(route, kind)
          if (res === undefined) continue
          answers++
          const got = { cacheControl: res.headers['cache-control'], vary: String(res.headers.vary ?? '') }
          const where = `${keyOf(route)} as ${kind} → ${res.statusCode}`
          if (want === 'private') {
            if (got.cacheControl !== PRIVATE) wrong.push(`${where}: Cache-Control ${String(got.cacheControl)}`)
            // A no-script form that went through answers 303 See Other to its page.
            if (res.statusCode < 300 || res.statusCode === 303) succeeded.private.add(keyOf(route))
            else refused.set(keyOf(route), `${kind} ${res.statusCode} ${res.body.slice(0, 160)}`)
          } else {
            const varied = got.vary.split(',').map((s) => s.trim().toLowerCase())
            const missing = want.vary.filter((h) => !varied.includes(h.toLowerCase()))
            // A public read's refusal is kept by no cache.
            if (got.cacheControl !== (res.statusCode >= 400 ? 'no-store' : want.cacheControl) || missing.length)
              wrong.push(`${where}: Cache-Control ${String(got.cacheControl)}, Vary ${got.vary}`)
            if (res.statusCode < 300) succeeded.publicRead.add(keyOf(route).replace(' /proxy/', ' /'))
          }
        }
      }
      expect(wrong).toEqual([])
      // Every public read answered 200, and so did most private routes (the rest were refused, and checked as well).
      expect([...succeeded.publicRead].sort()).toEqual(Object.keys(PUBLIC_READS).sort())
      const privateRoutes = new Set(routes.filter((r) => kindsOf(r).some((k) => expected(r, k) === 'private')).map(keyOf))
      expect(
        succeeded.private.size / privateRoutes.size,
        `succeeded on ${succeeded.private.size} of ${privateRoutes.size}: refused ${[...privateRoutes]
          .filter((k) => !succeeded.private.has(k))
          .map((k) => `${k} (${refused.get(k) ?? ''})`)
          .join('; ')}`,
      ).toBeGreaterThanOrEqual(0.95)
      expect(answers).toBeGreaterThanOrEqual(150)
    },
  )

  it('a wishlist page is private, no-store for its customer and its guest, and a 304 is never answered for it', async () => {
    for (const headers of [{ authorization: `Bearer ${customer}` }, await credentials('guest')]) {
      const first = await call('GET', '/v1/wishlists/me', headers)
      expect(first.statusCode).toBe(200)
      expect(first.headers['cache-control']).toBe(PRIVATE)
      expect(first.headers.etag).toBeUndefined()
      // The page cache lives in the service; a client sending a validator gets the page again.
      const again = await call('GET', '/v1/wishlists/me', { ...headers, 'if-none-match': '"anything"' })
      expect(again.statusCode).toBe(200)
      expect(again.body).toBe(first.body)
      expect(again.headers['cache-control']).toBe(PRIVATE)
    }
  })

  it('a public read that is refused is kept by no cache: an unknown review, a bad product id, an unknown storefront key, an unknown share token', async () => {
    const sf = await credentials('storefront')
    for (const [url, headers, status] of [
      ['/api/v1/reviews/999999999', sf, 404],
      ['/api/v1/products/not%20an%20id/reviews', sf, 400],
      [`/api/v1/products/${PRODUCT}/reviews`, { 'x-storefront-key': 'sk_unknown_key_0000000000000000' }, 401],
      ['/v1/wishlists/shared/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {}, 404],
    ] as const) {
      const res = await call('GET', url, headers)
      expect(res.statusCode, `${url}: ${res.body}`).toBe(status)
      expect(res.headers['cache-control'], url).toBe('no-store')
    }
  })

  it("a product's reviews read with the storefront key or through the app proxy: kept 5 minutes by any cache, Vary on Origin, Authorization and X-Storefront-Key; a review read by an admin is private", async () => {
    const res = await call('GET', `/api/v1/products/${PRODUCT}/reviews`, await credentials('storefront'))
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('public, max-age=300')
    expect(res.headers.vary).toBe('Origin, Authorization, X-Storefront-Key')
    // Through the app proxy, for a guest or a logged-in shopper alike: the product page's summary is public.
    for (const customerId of ['', CUSTOMER]) {
      const proxied = await call(
        'GET',
        `/proxy/api/v1/products/${PRODUCT}/reviews/summary?${signedQuery({ shop: shopifyDomain, customerId })}`,
        {
          'x-forwarded-for': '203.0.113.7, 23.227.38.1',
        },
      )
      expect(proxied.statusCode).toBe(200)
      expect(proxied.headers['cache-control']).toBe('public, max-age=300')
    }
    const asAdmin = await call('GET', `/api/v1/reviews/${seeded.reviewId}`, { authorization: `Bearer ${admin}` })
    expect(asAdmin.json()).toMatchObject({ customerEmail: 'ann@example.com' })
    expect(asAdmin.headers['cache-control']).toBe(PRIVATE)
  })
})
