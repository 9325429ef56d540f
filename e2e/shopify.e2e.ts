/**
 * Shopify app mode in Chromium: a storefront served on its own origin, with a local signing
 * proxy in front of the service as Shopify's app proxy would be (`/apps/wishlist/*` →
 * `/proxy/*`, signed with the app secret, `logged_in_customer_id` from the shopper's login
 * cookie); and the dashboard opened as Shopify admin opens an embedded app
 * (`?shop=…&host=…&id_token=…`), signing in with the session token alone.
 */
import { createHmac, randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const SECRET = 'shpss_e2e_app_secret_0123456789abcdef'
const API_KEY = 'e2e0123456789abcdef0123456789abcd'
const SHOP = 'e2e-store.myshopify.com'
const PREFIX = '/apps/wishlist'
const SHOPPER_ADDRESS = '203.0.113.7'

let env: Env
let browser: Browser
let context: BrowserContext
let page: Page
let storefront: Server
let storefrontUrl: string
/** What the storefront's page sent to the app proxy (method, path, the headers that matter). */
const proxied: { method: string; path: string; headers: IncomingHttpHeaders }[] = []

/** Shopify's app proxy signature: hex HMAC-SHA256 of the sorted `key=value` pairs (repeated keys joined by `,`), no separator. */
function proxySignature(params: URLSearchParams): string {
  const grouped = new Map<string, string[]>()
  for (const [key, value] of params) if (key !== 'signature') grouped.set(key, [...(grouped.get(key) ?? []), value])
  const message = [...grouped]
    .map(([key, values]) => `${key}=${values.join(',')}`)
    .sort()
    .join('')
  return createHmac('sha256', SECRET).update(message).digest('hex')
}

/** A Shopify session token (App Bridge's `id_token`): HS256 with the app secret. */
function sessionToken(shop: string, claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000)
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const head = b64({ alg: 'HS256', typ: 'JWT' })
  const body = b64({
    iss: `https://${shop}/admin`,
    dest: `https://${shop}`,
    aud: API_KEY,
    sub: '42',
    exp: now + 60,
    nbf: now - 1,
    iat: now - 1,
    jti: randomUUID(),
    sid: randomUUID(),
    ...claims,
  })
  return `${head}.${body}.${createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url')}`
}

/** A webhook delivery as Shopify sends it: base64 HMAC-SHA256 of the raw body. */
async function shopifyWebhook(topic: string, payload: unknown): Promise<Response> {
  const body = JSON.stringify(payload)
  return fetch(`${env.baseUrl}/v1/platforms/shopify/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': topic,
      'x-shopify-shop-domain': SHOP,
      'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(body).digest('base64'),
      'x-shopify-event-id': randomUUID(),
      'x-shopify-webhook-id': randomUUID(),
      'x-shopify-api-version': '2025-10',
    },
    body,
  })
}

const cookieOf = (headers: IncomingHttpHeaders, name: string) =>
  (headers.cookie ?? '')
    .split(/;\s*/)
    .map((c) => c.split('='))
    .find(([k]) => k === name)?.[1] ?? ''

const PRODUCTS = [
  { id: '7001', title: 'Linen shirt' },
  { id: '7002', title: 'Wool scarf' },
  { id: '7003', title: 'Canvas tote' },
]

/**
 * A theme page: `window.Shopify.shop` as every Shopify storefront sets it, the widget loaded
 * from the service. `tagged`: no `window.Shopify`, the script tag says `data-app-proxy` instead.
 */
const storefrontPage = (tagged = false) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>E2E store</title>
${tagged ? '' : `<script>window.Shopify = { shop: ${JSON.stringify(SHOP)} }</script>`}
<style>[data-wishlist-product-id]{display:inline-block;width:40px;height:40px}</style>
<script async src="${env.baseUrl}/widget.js"${tagged ? ` data-app-proxy="${PREFIX}"` : ''}></script></head>
<body><header>Saved: <span data-wishlist-count>0</span></header>
<ul>${PRODUCTS.map((p) => `<li>${p.title} <span data-wishlist-product-id="${p.id}" data-wishlist-product-title="${p.title}" data-wishlist-handle="p-${p.id}"></span></li>`).join('')}</ul>
</body></html>`

/**
 * The storefront origin: the page, a login that sets the shop's customer cookie, and the app
 * proxy, which signs what it forwards and never forwards the shopper's cookies.
 */
function startStorefront(): Promise<void> {
  storefront = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://storefront')
    if (url.pathname === '/' || url.pathname === '/tagged') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(storefrontPage(url.pathname === '/tagged'))
      return
    }
    if (url.pathname === '/account/login') {
      const customer = url.searchParams.get('customer') ?? ''
      res.writeHead(302, { location: '/', 'set-cookie': `customer_id=${customer}; Path=/; HttpOnly` }).end()
      return
    }
    if (url.pathname.startsWith(`${PREFIX}/`)) {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        proxied.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: req.headers })
        const query = new URLSearchParams(url.search)
        query.set('shop', SHOP)
        query.set('logged_in_customer_id', cookieOf(req.headers, 'customer_id'))
        query.set('path_prefix', PREFIX)
        query.set('timestamp', String(Math.floor(Date.now() / 1000)))
        query.set('signature', proxySignature(query))
        const headers: Record<string, string> = { 'x-forwarded-for': SHOPPER_ADDRESS }
        for (const name of ['accept', 'content-type', 'x-guest-id']) {
          const value = req.headers[name]
          if (typeof value === 'string') headers[name] = value
        }
        const body = chunks.length ? Buffer.concat(chunks) : undefined
        fetch(`${env.baseUrl}/proxy/${url.pathname.slice(PREFIX.length + 1)}?${query}`, { method: req.method, headers, body })
          .then(async (answer) => {
            const type = answer.headers.get('content-type')
            res.writeHead(answer.status, type ? { 'content-type': type } : {}).end(Buffer.from(await answer.arrayBuffer()))
          })
          .catch((err: unknown) => res.writeHead(502).end(String(err)))
      })
      return
    }
    res.writeHead(404).end()
  })
  return new Promise((resolve) =>
    storefront.listen(0, '127.0.0.1', () => {
      storefrontUrl = `http://127.0.0.1:${(storefront.address() as AddressInfo).port}`
      resolve()
    }),
  )
}

/** The wishlist of a customer, read through the signing proxy as that customer. */
async function customerList(customerId: string): Promise<string[]> {
  const res = await fetch(`${storefrontUrl}${PREFIX}/v1/wishlists/me?limit=200`, {
    headers: { cookie: `customer_id=${customerId}`, accept: 'application/json' },
  })
  expect(res.status).toBe(200)
  const body = (await res.json()) as { data: { items: { productId: string }[] } }
  return body.data.items.map((i) => i.productId).sort()
}

beforeAll(async () => {
  // Chromium's local-network checks would block the stand-in admin page (https, "public") from
  // framing the service on 127.0.0.1; a real admin frames a public HTTPS service, never loopback.
  ;[env, browser] = await Promise.all([
    startEnv({ SHOPIFY_API_SECRET: SECRET, SHOPIFY_API_KEY: API_KEY }),
    launchChromium([
      '--disable-features=PrivateNetworkAccessRespectPreflightResults,BlockInsecurePrivateNetworkRequests,LocalNetworkAccessChecks',
    ]),
  ])
  await startStorefront()
})
afterAll(async () => {
  await browser?.close()
  await new Promise((r) => storefront?.close(r))
  await env?.close()
})
beforeEach(async () => {
  context = await browser.newContext()
  page = await context.newPage()
  page.setDefaultTimeout(10_000)
})
afterEach(() => context.close())

const heart = (productId: string) => page.locator(`[data-wishlist-product-id="${productId}"] button.wl-heart`)
const pressed = () => page.locator('button.wl-heart[aria-pressed="true"]').count()

describe('storefront through the app proxy', () => {
  test('a guest saves, logs in: the guest items are merged into the customer once, the hearts show the merged list', async () => {
    // The customer already has a saved product from another visit.
    const seed = await fetch(`${storefrontUrl}${PREFIX}/v1/wishlists/me/items`, {
      method: 'POST',
      headers: { cookie: 'customer_id=5001', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ product_id: '7003' }),
    })
    expect(seed.status).toBe(201)
    proxied.length = 0

    await page.goto(storefrontUrl)
    await page.waitForFunction(() => document.querySelectorAll('button.wl-heart').length === 3)
    await heart('7001').click()
    await expect.poll(() => heart('7001').getAttribute('aria-pressed')).toBe('true')
    await heart('7002').click()
    await expect.poll(() => page.locator('[data-wishlist-count]').textContent()).toBe('2')
    await page.waitForLoadState('networkidle')
    const guestId = await page.evaluate(() => localStorage.getItem('wishlist:guest-id'))
    expect(guestId).toMatch(/^g_[0-9a-f]{32}$/)
    // Same origin, no credential of the service's own: no storefront key, no token.
    expect(proxied.length).toBeGreaterThan(0)
    for (const call of proxied) {
      expect(call.headers['x-storefront-key']).toBeUndefined()
      expect(call.headers.authorization).toBeUndefined()
    }
    expect(proxied.filter((c) => c.method === 'POST').every((c) => c.headers['x-guest-id'] === guestId)).toBe(true)
    // Still a guest: the customer has only their own item.
    expect(await customerList('5001')).toEqual(['7003'])

    const merges: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/merge')) merges.push(r.url())
    })
    await page.goto(`${storefrontUrl}/account/login?customer=5001`)
    await page.waitForURL(`${storefrontUrl}/`)
    await expect.poll(pressed).toBe(3)
    await expect.poll(() => page.locator('[data-wishlist-count]').textContent()).toBe('3')
    expect(merges).toEqual([`${storefrontUrl}${PREFIX}/v1/wishlists/me/merge`])
    expect(await page.evaluate(() => [localStorage.getItem('wishlist:guest-id'), localStorage.getItem('wishlist:guest-items')])).toEqual([
      null,
      null,
    ])
    expect(await customerList('5001')).toEqual(['7001', '7002', '7003'])

    // Logged in: a toggle is the customer's; a reload merges nothing again.
    await heart('7003').click()
    await expect.poll(() => page.locator('[data-wishlist-count]').textContent()).toBe('2')
    await page.waitForLoadState('networkidle')
    expect(await customerList('5001')).toEqual(['7001', '7002'])
    await page.reload()
    await expect.poll(pressed).toBe(2)
    expect(merges).toHaveLength(1)
    expect(await page.evaluate(() => localStorage.getItem('wishlist:guest-id'))).toBeNull()
  })

  test('a logged-in shopper with nothing saved as a guest: no merge, no guest id', async () => {
    await context.addCookies([{ name: 'customer_id', value: '5002', url: storefrontUrl }])
    const merges: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/merge')) merges.push(r.url())
    })
    await page.goto(storefrontUrl)
    await page.waitForFunction(() => document.querySelectorAll('button.wl-heart').length === 3)
    await heart('7002').click()
    await expect.poll(() => heart('7002').getAttribute('aria-pressed')).toBe('true')
    await page.waitForLoadState('networkidle')
    expect(await customerList('5002')).toEqual(['7002'])
    expect(merges).toEqual([])
    expect(await page.evaluate(() => localStorage.getItem('wishlist:guest-id'))).toBeNull()
  })

  test('data-app-proxy on the script tag turns proxy mode on without window.Shopify', async () => {
    proxied.length = 0
    await page.goto(`${storefrontUrl}/tagged`)
    await page.waitForFunction(() => document.querySelectorAll('button.wl-heart').length === 3)
    await heart('7003').click()
    await expect.poll(() => heart('7003').getAttribute('aria-pressed')).toBe('true')
    await page.waitForLoadState('networkidle')
    const guestId = await page.evaluate(() => localStorage.getItem('wishlist:guest-id'))
    const add = proxied.find((c) => c.method === 'POST')
    expect(add?.path).toBe(`${PREFIX}/v1/wishlists/me/items`)
    expect(add?.headers['x-guest-id']).toBe(guestId)
    expect(add?.headers['x-storefront-key']).toBeUndefined()
  })
})

describe('embedded admin', () => {
  test('opened with a session token, the dashboard signs in without a key and lists a privacy request with its export', async () => {
    // Something to export: the customer's wishlist, saved through the proxy.
    const saved = await fetch(`${storefrontUrl}${PREFIX}/v1/wishlists/me/items`, {
      method: 'POST',
      headers: { cookie: 'customer_id=6001', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ product_id: '7001' }),
    })
    expect(saved.status).toBe(201)
    const request = await shopifyWebhook('customers/data_request', {
      shop_id: 954889,
      shop_domain: SHOP,
      orders_requested: [299938, 280263],
      customer: { id: 6001, email: 'ann@example.com', phone: '555-625-1199' },
      data_request: { id: 9999 },
    })
    expect(request.status).toBe(200)

    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))
    const host = Buffer.from(`admin.shopify.com/store/${SHOP.replace('.myshopify.com', '')}`).toString('base64url')
    await page.goto(`${env.baseUrl}/dashboard?embedded=1&shop=${SHOP}&host=${host}&id_token=${sessionToken(SHOP)}`)
    await expect.poll(() => page.getByTestId('shop-domain').textContent(), { timeout: 10_000 }).toBe(SHOP)
    // The one-use token leaves the address bar; shop and host stay.
    expect(new URL(page.url()).searchParams.get('id_token')).toBeNull()
    expect(new URL(page.url()).searchParams.get('shop')).toBe(SHOP)

    await page.getByRole('navigation', { name: 'Dashboard sections' }).getByRole('link', { name: 'Privacy requests' }).click()
    const row = page.locator('[data-testid="privacy-requests"] tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('ann@example.com')
    expect(await row.locator('td').nth(1).textContent()).toBe('6001')

    const download = page.waitForEvent('download')
    await row.getByRole('button', { name: /Download export/ }).click()
    const file = await download
    expect(file.suggestedFilename()).toMatch(/^privacy-request-.+\.json$/)
    const path = await file.path()
    const { readFile } = await import('node:fs/promises')
    const exported = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>
    expect(JSON.stringify(exported)).toContain('7001')

    // Reloaded without a token (as after it expired in the address bar), the tab's session holds.
    await page.goto(`${env.baseUrl}/dashboard?shop=${SHOP}&host=${host}`)
    await expect.poll(() => page.getByTestId('shop-domain').textContent(), { timeout: 10_000 }).toBe(SHOP)
    expect(errors).toEqual([])
  })

  test("Shopify admin can frame it (the shop's frame-ancestors); another site cannot", async () => {
    const host = Buffer.from(`admin.shopify.com/store/${SHOP.replace('.myshopify.com', '')}`).toString('base64url')
    const framing = (id: string) =>
      `<!doctype html><title>admin</title><iframe id="${id}" src="${env.baseUrl}/dashboard?shop=${SHOP}&host=${host}&id_token=${sessionToken(SHOP)}" width="1000" height="700"></iframe>`
    // Stand-ins for the admin's page and a stranger's, answered by the browser itself.
    await page.route('https://admin.shopify.com/**', (route) => route.fulfill({ contentType: 'text/html', body: framing('app') }))
    await page.route('https://stranger.example/**', (route) => route.fulfill({ contentType: 'text/html', body: framing('stolen') }))

    await page.goto('https://admin.shopify.com/store/e2e-store/apps/wishlist')
    await expect.poll(() => page.frameLocator('#app').getByTestId('shop-domain').textContent(), { timeout: 10_000 }).toBe(SHOP)

    const refused = page.waitForEvent('console', (msg) => msg.text().includes('frame-ancestors'))
    await page.goto('https://stranger.example/')
    expect((await refused).text()).toContain(`frame-ancestors https://${SHOP} https://admin.shopify.com`)
    expect(await page.frameLocator('#stolen').getByTestId('shop-domain').count()).toBe(0)
  })

  test('a session token signed with another secret is refused, and the sign-in page says so', async () => {
    const now = Math.floor(Date.now() / 1000)
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
    const head = b64({ alg: 'HS256', typ: 'JWT' })
    const body = b64({ iss: `https://${SHOP}/admin`, dest: `https://${SHOP}`, aud: API_KEY, sub: '42', exp: now + 60, nbf: now - 1 })
    const forged = `${head}.${body}.${createHmac('sha256', 'not-the-secret').update(`${head}.${body}`).digest('base64url')}`
    await page.goto(`${env.baseUrl}/dashboard?shop=${SHOP}&host=x&id_token=${forged}`)
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('INVALID_SIGNATURE')
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
  })
})
