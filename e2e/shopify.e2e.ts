/**
 * Shopify app mode in Chromium: a storefront served on its own origin, with a local signing
 * proxy in front of the service as Shopify's app proxy would be (`/apps/wishlist/*` →
 * `/proxy/*`, signed with the app secret, `logged_in_customer_id` from the shopper's login
 * cookie); and the dashboard opened as Shopify admin opens an embedded app
 * (`?shop=…&host=…&id_token=…`), with App Bridge: Shopify's CDN script is answered by a local
 * stand-in (fixtures/app-bridge-stub.js) whose session tokens the test signs with the app
 * secret, and every other request for another host is refused, so nothing leaves the machine.
 * Screenshots land in e2e/screenshots/.
 */
import { createHmac, randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { forwardToAppProxy } from './helpers/app-proxy.js'
import { seriousViolations, WIDTHS } from './helpers/axe.js'
import { type ShopifyEmulator, startShopifyEmulator } from '../apps/server/test/helpers/shopify-emulator.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const SECRET = 'shpss_e2e_app_secret_0123456789abcdef'
const API_KEY = 'e2e0123456789abcdef0123456789abcd'
const SHOP = 'e2e-store.myshopify.com'
const PREFIX = '/apps/wishlist'
const SHOPPER_ADDRESS = '203.0.113.7'

let env: Env
/** Shopify's token endpoint and Admin API, played locally; it knows the shop only once a test adds it. */
let shopify: ShopifyEmulator
let browser: Browser
let context: BrowserContext
let page: Page
let storefront: Server
let storefrontUrl: string
/** What the storefront's page sent to the app proxy (method, path, the headers that matter). */
const proxied: { method: string; path: string; headers: IncomingHttpHeaders }[] = []

/** A Shopify session token (App Bridge's `id_token`): HS256 with the app secret, valid one minute. */
function sessionToken(shop: string, claims: Record<string, unknown> = {}, secret = SECRET): string {
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
  return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`
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
        const body = Buffer.concat(chunks)
        const app = { shop: SHOP, secret: SECRET, customerId: cookieOf(req.headers, 'customer_id'), ip: SHOPPER_ADDRESS }
        forwardToAppProxy(env.baseUrl, app, { method: req.method ?? 'GET', url, headers: req.headers, body })
          .then((answer) => res.writeHead(answer.status, answer.headers).end(answer.body))
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
  shopify = await startShopifyEmulator({ apiKey: API_KEY, apiSecret: SECRET })
  ;[env, browser] = await Promise.all([
    startEnv({ SHOPIFY_API_SECRET: SECRET, SHOPIFY_API_KEY: API_KEY, SHOPIFY_API_EMULATOR_URL: shopify.url }),
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
  await shopify?.close()
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
  const APP_BRIDGE_URL = 'https://cdn.shopify.com/shopifycloud/app-bridge.js'
  const APP_BRIDGE_STUB = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures/app-bridge-stub.js')
  const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), 'screenshots')
  const HOST = Buffer.from(`admin.shopify.com/store/${SHOP.replace('.myshopify.com', '')}`).toString('base64url')
  /** The theme editor deep link that turns the app embed on. */
  const EDITOR_URL = `https://${SHOP}/admin/themes/current/editor?context=apps&activateAppId=${API_KEY}/app-embed`
  const SAVE_BAR = 'settings-save-bar'
  /** The session tokens the stand-in App Bridge handed out, in order; signed with `tokenSecret`. */
  let issued: string[] = []
  let tokenSecret = SECRET
  /** Requests for any host but the service, the storefront and the stand-in admin pages: refused, and listed here. */
  let external: string[] = []
  /** The API calls the page made, with their Authorization header. */
  let calls: Promise<{ url: string; authorization: string | undefined }>[] = []
  let pageErrors: string[] = []

  /** How Shopify admin opens the app: the shop, the admin's host and a session token in the query. */
  const adminUrl = (idToken = sessionToken(SHOP)) => `${env.baseUrl}/dashboard?embedded=1&shop=${SHOP}&host=${HOST}&id_token=${idToken}`
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>
  const heading = (p: Page) => p.getByRole('heading', { level: 1 }).textContent()
  const saveBarShown = () =>
    page.evaluate(
      (id) => (globalThis as unknown as { shopify: { saveBar: { shown: Set<string> } } }).shopify.saveBar.shown.has(id),
      SAVE_BAR,
    )
  /** A click on a button of the page's `<ui-save-bar>`, as Shopify admin's save bar makes one. */
  const saveBarClick = (button: 'Save' | 'Discard') =>
    page.evaluate((name) => {
      const buttons = [...document.querySelectorAll<HTMLButtonElement>('ui-save-bar button')]
      buttons.find((b) => b.textContent === name)?.click()
    }, button)
  const shot = (name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true })

  /**
   * What Shopify admin does when the merchant picks an entry of the app's navigation (drawn
   * from `<ui-nav-menu>`): a click on that link of the menu, in the app's frame.
   */
  async function navigate(title: string): Promise<void> {
    await page.evaluate(
      (t) => [...document.querySelectorAll<HTMLAnchorElement>('ui-nav-menu a')].find((a) => a.textContent === t)?.click(),
      title,
    )
    await expect.poll(() => heading(page)).toBe(title)
  }

  /** The page's controls that the keyboard must reach, and those Tab reached from the top of the page. */
  async function keyboardReach(): Promise<{ controls: string[]; reached: string[] }> {
    const controls = await page.evaluate(() => {
      const tabbable = [...document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, [tabindex]')].filter(
        (el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0,
      )
      return tabbable.map((el, i) => {
        el.dataset.kbd = String(i)
        return `${el.tagName} ${el.getAttribute('aria-label') ?? el.textContent?.trim() ?? ''}`.slice(0, 60)
      })
    })
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur())
    const reached = new Set<string>()
    for (let i = 0; i < controls.length + 3; i++) {
      await page.keyboard.press('Tab')
      const index = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.kbd)
      if (index !== undefined) reached.add(controls[Number(index)]!)
    }
    return { controls, reached: controls.filter((c) => reached.has(c)) }
  }

  beforeAll(() => mkdirSync(SCREENSHOTS, { recursive: true }))
  beforeEach(async () => {
    issued = []
    external = []
    calls = []
    pageErrors = []
    tokenSecret = SECRET
    const local = [env.baseUrl, storefrontUrl, 'https://admin.shopify.com/', 'https://stranger.example/']
    await context.route(
      (url) => !local.some((origin) => url.href.startsWith(origin)),
      (route) => {
        external.push(route.request().url())
        return route.abort()
      },
    )
    // Registered last, so asked first: Shopify's CDN script is the stand-in.
    await context.route(APP_BRIDGE_URL, (route) => route.fulfill({ path: APP_BRIDGE_STUB, contentType: 'text/javascript; charset=utf-8' }))
    await context.exposeBinding('e2eSessionToken', () => {
      const token = sessionToken(SHOP, {}, tokenSecret)
      issued.push(token)
      return token
    })
    page.on('request', (request) => {
      const url = request.url()
      if (url.startsWith(`${env.baseUrl}/v1/`) || url.startsWith(`${env.baseUrl}/api/`))
        calls.push(request.allHeaders().then((headers) => ({ url, authorization: headers.authorization })))
    })
    page.on('pageerror', (err) => pageErrors.push(err.message))
    page.on('console', (msg) => {
      if (msg.type() === 'error') pageErrors.push(msg.text())
    })
  })

  test('opened by Shopify admin: App Bridge first, no sign-in; every call carries a fresh session token and nothing is stored', async () => {
    await page.goto(adminUrl())
    await expect.poll(() => heading(page), { timeout: 10_000 }).toBe('Setup guide')
    // The page as served: the API key's meta, then App Bridge as the first script, which ran.
    const head = await page.evaluate(() => ({
      firstScript: document.head.querySelector('script')?.getAttribute('src'),
      apiKey: document.head.querySelector('meta[name="shopify-api-key"]')?.getAttribute('content'),
      metaFirst: Boolean(
        document.head.querySelector('meta[name="shopify-api-key"]')?.compareDocumentPosition(document.head.querySelector('script')!) ===
        Node.DOCUMENT_POSITION_FOLLOWING,
      ),
      bridge: typeof (globalThis as { shopify?: unknown }).shopify,
    }))
    expect(head).toEqual({ firstScript: APP_BRIDGE_URL, apiKey: API_KEY, metaFirst: true, bridge: 'object' })
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0)
    expect(await page.getByLabel('API key').count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0)

    // The navigation is App Bridge's menu: the setup guide is its home, then every screen.
    const menu = await page.evaluate(() =>
      [...document.querySelectorAll('ui-nav-menu a')].map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('rel')]),
    )
    expect(menu).toEqual([
      ['Setup guide', '#/', 'home'],
      ['Plan', '#/plan', null],
      ['Overview', '#/overview', null],
      ['Settings', '#/settings', null],
      ['API keys', '#/api-keys', null],
      ['Webhooks', '#/webhooks', null],
      ['Channels', '#/channels', null],
      ['Reviews', '#/reviews', null],
      ['Privacy requests', '#/privacy', null],
    ])
    expect(await page.getByRole('navigation', { name: 'Dashboard sections' }).count()).toBe(0)
    for (const title of ['Overview', 'Settings', 'API keys', 'Webhooks', 'Channels', 'Reviews', 'Privacy requests', 'Setup guide']) {
      await navigate(title)
      await page.waitForLoadState('networkidle')
    }

    const made = await Promise.all(calls)
    expect(made.length).toBeGreaterThanOrEqual(8)
    const tokens = made.map((c) => c.authorization?.replace(/^Bearer /, ''))
    // Each call its own token, each one the stand-in App Bridge handed out: a one-minute session token of the shop.
    expect(
      tokens.every((t) => t !== undefined && issued.includes(t)),
      JSON.stringify(made.map((c) => c.url)),
    ).toBe(true)
    expect(new Set(tokens).size).toBe(tokens.length)
    for (const token of tokens) {
      const claims = claimsOf(token!)
      expect(claims).toMatchObject({ dest: `https://${SHOP}`, aud: API_KEY })
      expect(Number(claims.exp) - Number(claims.iat)).toBeLessThanOrEqual(61)
    }
    expect(made.filter((c) => c.url.includes('/v1/auth/'))).toEqual([])
    // No long-lived token: none in the tab's storage.
    const stored = await page.evaluate(() => JSON.stringify({ session: { ...sessionStorage }, local: { ...localStorage } }))
    expect(stored).toBe('{"session":{},"local":{}}')
    expect(external).toEqual([])
    expect(pageErrors).toEqual([])
  })

  test('the setup guide: catalog, plan and the theme editor link; axe at 1280 and 375 px; the keyboard reaches every control', async () => {
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(adminUrl())
    const steps = page.getByTestId('setup-steps')
    await expect.poll(() => steps.locator('tbody tr').count(), { timeout: 10_000 }).toBe(3)
    const rows = await steps
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.innerText)))
    expect(rows.map((r) => r[0]?.split('\n')[0])).toEqual(['1. Catalog sync', '2. Plan', '3. App embed'])
    expect(rows.map((r) => r[1])).toEqual(['Not started', 'Free plan', 'In your theme'])
    const editor = page.getByTestId('theme-editor-link')
    expect(await editor.getAttribute('href')).toBe(EDITOR_URL)
    // Into Shopify admin: the whole admin page, not the app's frame.
    expect(await editor.getAttribute('target')).toBe('_top')
    expect(await page.getByTestId('plan-link').getAttribute('href')).toBe('#/plan')
    expect(await page.getByTestId('shop-domain').textContent()).toBe(SHOP)
    // No product known yet: the empty state says where products come from.
    expect(await page.getByTestId('catalog-empty').getByRole('heading').textContent()).toBe('No products yet')

    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      const found = await seriousViolations(page)
      expect(found, `setup guide at ${width} px: ${JSON.stringify(found)}`).toEqual([])
      await shot(`shopify-setup-guide-${width}`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    const { controls, reached } = await keyboardReach()
    expect(controls).toEqual(
      expect.arrayContaining([expect.stringMatching(/^A Choose a plan/), expect.stringMatching(/^A Open the theme editor/)]),
    )
    expect(reached).toEqual(controls)

    // Products Shopify sent: they show, the empty state is gone; the sync itself has not run
    // (Shopify has not granted this shop Admin API access yet: the emulator does not know it).
    for (const id of [7101, 7102]) {
      const res = await shopifyWebhook('products/create', {
        id,
        title: `Product ${id}`,
        handle: `product-${id}`,
        updated_at: new Date().toISOString(),
        variants: [{ id: id * 10, product_id: id, price: '12.00', inventory_quantity: 4 }],
      })
      expect(res.status).toBe(200)
    }
    await page.reload()
    await expect.poll(() => steps.locator('tbody tr').first().textContent(), { timeout: 10_000 }).toContain('2 products known')
    expect(await steps.locator('tbody tr').first().locator('td').nth(1).textContent()).toBe('Not started')
    expect(await page.getByTestId('catalog-empty').count()).toBe(0)
    await shot('shopify-setup-guide-synced-1280')
    expect(pageErrors).toEqual([])
    // Asked to sync without that access: the guide says what to do (the browser logs the 403).
    await page.getByTestId('catalog-sync').click()
    await expect.poll(() => page.getByTestId('catalog-sync-message').textContent(), { timeout: 10_000 }).toContain('Admin API access')
    expect(external).toEqual([])
    expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 403 (Forbidden)'])
  })

  test('Settings: a change shows the save bar; Save saves every change and hides it, Discard restores and hides it', async () => {
    const shops = env.testApp.app.services.shops
    const shopId = (await shops.byDomain(SHOP))!.id
    await shops.updateSettings(shopId, { reviews_auto_approve: false, share_link_ttl_days: 30, currency: 'USD' })
    await page.goto(adminUrl())
    await expect.poll(() => heading(page), { timeout: 10_000 }).toBe('Setup guide')
    await navigate('Settings')
    const approve = page.getByLabel('Publish new reviews without moderation')
    const ttl = page.getByLabel('Share-link lifetime (days)')
    const currency = page.getByLabel('Store currency')
    await ttl.waitFor()
    // Saved from the admin's save bar only: no buttons of the page's own.
    expect(await page.getByRole('button', { name: 'Save lifetime' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Save page texts' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Save currency' }).count()).toBe(0)
    expect(await saveBarShown()).toBe(false)
    // Inside Shopify the plan is the merchant's to choose, through Shopify Billing.
    expect(await page.getByRole('link', { name: 'Plan page' }).getAttribute('href')).toBe('#/plan')
    expect(await page.getByText('Plans are changed by the service operator.').count()).toBe(0)

    await approve.check()
    await expect.poll(saveBarShown).toBe(true)
    // Back as stored: nothing unsaved, no save bar.
    await approve.uncheck()
    await expect.poll(saveBarShown).toBe(false)
    await approve.check()
    await ttl.fill('45')
    await currency.selectOption('CAD')
    await expect.poll(saveBarShown).toBe(true)
    expect((await shops.get(shopId))?.settings).toMatchObject({ reviews_auto_approve: false, share_link_ttl_days: 30, currency: 'USD' })
    await shot('shopify-settings-unsaved-1280')
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      const found = await seriousViolations(page)
      expect(found, `settings at ${width} px: ${JSON.stringify(found)}`).toEqual([])
    }
    await page.setViewportSize({ width: 1280, height: 720 })

    await saveBarClick('Save')
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Settings saved.')
    await expect.poll(saveBarShown).toBe(false)
    expect((await shops.get(shopId))?.settings).toMatchObject({ reviews_auto_approve: true, share_link_ttl_days: 45, currency: 'CAD' })

    // Discard: the stored values again, nothing saved.
    await ttl.fill('12')
    await approve.uncheck()
    await currency.selectOption('')
    await expect.poll(saveBarShown).toBe(true)
    await saveBarClick('Discard')
    await expect.poll(saveBarShown).toBe(false)
    expect(await ttl.inputValue()).toBe('45')
    expect(await approve.isChecked()).toBe(true)
    expect(await currency.inputValue()).toBe('CAD')
    expect((await shops.get(shopId))?.settings).toMatchObject({ reviews_auto_approve: true, share_link_ttl_days: 45, currency: 'CAD' })

    // With the keyboard alone: Enter in the field saves too.
    await ttl.focus()
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('50')
    await expect.poll(saveBarShown).toBe(true)
    await page.keyboard.press('Enter')
    await expect.poll(saveBarShown).toBe(false)
    expect((await shops.get(shopId))?.settings.share_link_ttl_days).toBe(50)
    const { controls, reached } = await keyboardReach()
    expect(controls).toEqual(expect.arrayContaining([expect.stringMatching(/^INPUT/), expect.stringMatching(/^TEXTAREA/)]))
    expect(reached).toEqual(controls)
    expect(external).toEqual([])
    expect(pageErrors).toEqual([])
  })

  test('lists a privacy request from Shopify with its export', async () => {
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

    await page.goto(adminUrl())
    await expect.poll(() => heading(page), { timeout: 10_000 }).toBe('Setup guide')
    await navigate('Privacy requests')
    const row = page.locator('[data-testid="privacy-requests"] tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('ann@example.com')
    expect(await row.locator('td').nth(1).textContent()).toBe('6001')

    const download = page.waitForEvent('download')
    await row.getByRole('button', { name: /Download export/ }).click()
    const file = await download
    expect(file.suggestedFilename()).toMatch(/^privacy-request-.+\.json$/)
    const { readFile } = await import('node:fs/promises')
    const exported = JSON.parse(await readFile(await file.path(), 'utf8')) as Record<string, unknown>
    expect(JSON.stringify(exported)).toContain('7001')
    expect(pageErrors).toEqual([])
  })

  test("Shopify admin can frame it, with App Bridge (the shop's frame-ancestors); another site cannot", async () => {
    const framing = (id: string) =>
      `<!doctype html><title>admin</title><iframe id="${id}" src="${adminUrl()}" width="1000" height="700"></iframe>`
    // Stand-ins for the admin's page and a stranger's, answered by the browser itself.
    await page.route('https://admin.shopify.com/**', (route) => route.fulfill({ contentType: 'text/html', body: framing('app') }))
    await page.route('https://stranger.example/**', (route) => route.fulfill({ contentType: 'text/html', body: framing('stolen') }))

    await page.goto('https://admin.shopify.com/store/e2e-store/apps/wishlist')
    const app = page.frameLocator('#app')
    await expect.poll(() => app.getByTestId('shop-domain').textContent(), { timeout: 10_000 }).toBe(SHOP)
    expect(await app.getByRole('heading', { level: 1 }).textContent()).toBe('Setup guide')
    expect(issued.length).toBeGreaterThan(0)
    await page.screenshot({ path: resolve(SCREENSHOTS, 'shopify-admin-framed.png') })

    const refused = page.waitForEvent('console', (msg) => msg.text().includes('frame-ancestors'))
    await page.goto('https://stranger.example/')
    expect((await refused).text()).toContain(`frame-ancestors https://${SHOP} https://admin.shopify.com`)
    expect(await page.frameLocator('#stolen').getByTestId('shop-domain').count()).toBe(0)
    expect(external).toEqual([])
  })

  test('a session token App Bridge hands over that the service refuses: a plain explanation, no sign-in form', async () => {
    tokenSecret = 'not-the-apps-secret'
    await page.goto(adminUrl())
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('INVALID_TOKEN')
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Shopify could not confirm this session')
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0)
    expect(await page.getByLabel('API key').count()).toBe(0)
    expect(pageErrors.every((e) => /status of 401/.test(e))).toBe(true)
  })

  test('outside Shopify (no signature proves the shop): no App Bridge, the API-key sign-in as ever', async () => {
    const forged = sessionToken(SHOP, {}, 'not-the-apps-secret')
    for (const url of [`${env.baseUrl}/dashboard`, `${env.baseUrl}/dashboard?shop=${SHOP}&host=${HOST}&id_token=${forged}`]) {
      await page.goto(url)
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      expect(
        await page.evaluate(() => [
          document.querySelectorAll('script[src^="https:"]').length,
          typeof (globalThis as { shopify?: unknown }).shopify,
        ]),
      ).toEqual([0, 'undefined'])
      expect(await page.evaluate(() => document.querySelector('meta[name="shopify-api-key"]'))).toBeNull()
    }
    expect(issued).toEqual([])
    expect(external).toEqual([])
  })
  test("the plan page: a card per plan, the current one marked; a paid plan is approved on Shopify's page in the top frame and set once Shopify says ACTIVE; Free cancels; axe at 1280 and 375 px; keyboard alone", async () => {
    // From here Shopify knows the shop: the session token is exchanged, Shopify Billing answers.
    shopify.addShop(SHOP)
    const approvals: string[] = []
    // Shopify's approval page, which the app may not frame: the whole tab goes there.
    await context.route(
      (url) => url.href.startsWith(`https://${SHOP}/admin/charges/`),
      (route) => {
        approvals.push(route.request().url())
        return route.fulfill({
          contentType: 'text/html',
          body: '<!doctype html><html lang="en"><title>Approve charge</title><h1>Approve</h1></html>',
        })
      },
    )
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(adminUrl())
    await expect.poll(() => heading(page), { timeout: 10_000 }).toBe('Setup guide')
    // The setup guide's plan step leads here, as the nav menu does.
    await page.getByTestId('plan-link').click()
    await expect.poll(() => heading(page)).toBe('Plan')
    const cards = page.locator('[aria-label="Plans"] > li')
    await expect.poll(() => cards.count(), { timeout: 10_000 }).toBe(4)
    const texts = await cards.evaluateAll((lis) => lis.map((li) => (li as HTMLElement).innerText))
    expect(texts.map((t) => t.split('\n')[0])).toEqual(['FreeCurrent plan', 'Starter', 'Growth', 'Scale'])
    expect(texts[0]).toContain('Your plan now')
    expect(texts[2]).toContain('$29.99 USD every 30 days')
    expect(texts[2]).toContain('7-day free trial')
    expect(await page.getByTestId('choose-free').count()).toBe(0)

    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      const found = await seriousViolations(page)
      expect(found, `plan page at ${width} px: ${JSON.stringify(found)}`).toEqual([])
      await shot(`shopify-plan-${width}`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    const { controls, reached } = await keyboardReach()
    expect(controls).toEqual(expect.arrayContaining(['BUTTON Choose Starter', 'BUTTON Choose Growth', 'BUTTON Choose Scale']))
    expect(reached).toEqual(controls)

    // Keyboard alone: Tab to "Choose Growth", Enter.
    const focused = () => page.evaluate(() => document.activeElement?.textContent)
    for (let i = 0; i < 2 * controls.length + 3 && (await focused()) !== 'Choose Growth'; i++) await page.keyboard.press('Tab')
    expect(await focused()).toBe('Choose Growth')
    await page.keyboard.press('Enter')
    await page.waitForURL((url) => url.href.startsWith(`https://${SHOP}/admin/charges/`))
    expect(approvals).toHaveLength(1)
    const subscription = shopify.shop(SHOP).subscriptions.at(-1)!
    expect(subscription).toMatchObject({ name: 'Wishlist Growth', status: 'PENDING' })
    expect((await env.testApp.app.services.shops.byDomain(SHOP))!.plan).toBe('free')

    // The merchant approves; Shopify sends them back to the app with `charge_id`: the plan page confirms.
    shopify.setSubscriptionStatus(SHOP, subscription.id as string, 'ACTIVE')
    await page.goto(`${adminUrl()}&charge_id=${String(subscription.id).split('/').pop()}`)
    await expect.poll(() => heading(page), { timeout: 10_000 }).toBe('Plan')
    await expect.poll(() => page.getByTestId('plan-growth').innerText()).toContain('Current plan')
    expect((await env.testApp.app.services.shops.byDomain(SHOP))!.plan).toBe('growth')
    await shot('shopify-plan-growth-1280')

    // Back to Free: the subscription is cancelled at Shopify at once.
    await page.getByTestId('choose-free').click()
    await expect.poll(() => page.getByTestId('plan-message').textContent()).toContain('You are on the Free plan.')
    expect(await page.getByTestId('plan-free').innerText()).toContain('Current plan')
    expect(shopify.shop(SHOP).subscriptions.find((s) => s.id === subscription.id)!.status).toBe('CANCELLED')
    expect((await env.testApp.app.services.shops.byDomain(SHOP))!.plan).toBe('free')
    expect(external).toEqual([])
    expect(pageErrors).toEqual([])
  })
})
