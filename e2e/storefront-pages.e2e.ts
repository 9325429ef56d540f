/**
 * The shop's pages in Chromium, as a shopper meets them on a Shopify theme: a local
 * storefront signs app-proxy requests as Shopify does and renders the service's Liquid
 * answers inside a theme layout (liquidjs with Shopify's objects), with the theme app
 * extension's app embed loading the widget; `/cart/add` is the storefront's, as on Shopify.
 *
 * Covered: the wishlist page (add to cart, add all to cart, remove, share, each form sending
 * the browser back to the page, its strings in the shop's language, a guest's container), a
 * gift list with JavaScript off (quantities and notes, the saved quantity to the cart, a bought
 * item on the shared page with no add to cart and left out of add all), a review invitation's
 * form in the theme (keyboard only, the error summary focused, field errors, thank-you after a
 * redirect, a used link), and the service's own review page for shops not on Shopify ("Error:"
 * in its title). axe-core checks each page at 1280 and 375 px: no
 * violation of impact serious or critical. Screenshots land in e2e/screenshots/ (gitignored;
 * `npm run screenshots -w e2e` copies the ones docs/shopify.md shows into docs/images). Runs
 * on SQLite and on PostgreSQL (vitest.config.ts).
 */
import { createHmac, randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { EXTENSION_DIR, pageScope, shopifyLiquid, stubProduct } from '../apps/server/test/helpers/shopify-liquid.js'
import { forwardToAppProxy } from './helpers/app-proxy.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const SECRET = 'shpss_e2e_pages_secret_0123456789abcdef'
const API_KEY = 'e2e0123456789abcdef0123456789abce'
const SHOP = 'e2e-pages.myshopify.com'
const PREFIX = '/apps/wishlist'
const HERE = dirname(fileURLToPath(import.meta.url))
const SCREENSHOTS = resolve(HERE, 'screenshots')
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

let env: Env
let browser: Browser
let context: BrowserContext
let page: Page
let storefront: Server
let storefrontUrl: string

const IMAGES = '/images/'
/** Page loads on a shared two-core machine can take seconds. */
const POLL = { timeout: 15_000 }
const PRODUCTS = [
  stubProduct(7001, 'linen-shirt', 'Linen shirt', 5900, { variants: [70011, 70012], imageBase: IMAGES }),
  stubProduct(7002, 'wool-scarf', 'Wool scarf', 3900, { imageBase: IMAGES }),
  stubProduct(7003, 'canvas-tote', 'Canvas tote', 2450, { imageBase: IMAGES }),
  stubProduct(7004, 'rain-jacket', 'Rain jacket', 12900, { imageBase: IMAGES, available: false }),
]
const COLOURS: Record<string, string> = {
  'linen-shirt': '#d9c9a3',
  'wool-scarf': '#8c2f39',
  'canvas-tote': '#3a6b5a',
  'rain-jacket': '#2d4a7a',
}
const allProducts = Object.fromEntries(PRODUCTS.map((p) => [p.handle, p]))

const engine = shopifyLiquid({ root: EXTENSION_DIR, assetUrl: (name) => `/cdn/assets/${name}` })
const embedSource = readFileSync(join(EXTENSION_DIR, 'blocks', 'app-embed.liquid'), 'utf8')

/** The theme's look, enough for a page that reads like a shop (contrast AA on white). */
const THEME_CSS = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f1f1f;background:#fff}
a{color:#0b4f9c}a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #0b4f9c;outline-offset:2px}
.site-header{display:flex;justify-content:space-between;align-items:center;padding:1rem 1.5rem;border-bottom:1px solid #ddd}
.site-header .logo{font-weight:700;font-size:1.25rem;color:#1f1f1f;text-decoration:none}.site-header nav{display:flex;gap:1rem}
h1{font-size:2rem;line-height:1.2;margin:0 0 1rem}
.button{font:inherit;border:1px solid #1f1f1f;background:#1f1f1f;color:#fff;border-radius:4px;padding:.5rem 1rem}
.button--secondary{background:#fff;color:#1f1f1f}
input,textarea{font:inherit;border:1px solid #6b6b6b;border-radius:4px}
.site-footer{padding:2rem 1.5rem;border-top:1px solid #ddd;margin-top:3rem;color:#4a4a4a}`

interface Shopper {
  customerId: string
  locale: string
  cart: string
}
const carts = new Map<string, { id: number; quantity: number }[]>()

function cookies(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    (headers.cookie ?? '')
      .split(/;\s*/)
      .filter(Boolean)
      .map((c) => c.split('=') as [string, string]),
  )
}
const shopperOf = (headers: IncomingHttpHeaders): Shopper => {
  const c = cookies(headers)
  return { customerId: c.customer_id ?? '', locale: c.locale ?? 'en', cart: c.cart ?? '' }
}

async function shopifyWebhook(topic: string, payload: unknown): Promise<void> {
  const body = JSON.stringify(payload)
  const res = await fetch(`${env.baseUrl}/v1/platforms/shopify/webhooks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': topic,
      'x-shopify-shop-domain': SHOP,
      'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(body).digest('base64'),
      'x-shopify-event-id': randomUUID(),
    },
    body,
  })
  expect(res.status).toBe(200)
}

/** What Liquid sees on a page of the theme for this shopper. */
function scopeOf(s: Shopper, extra: Record<string, unknown> = {}) {
  return pageScope({
    request: { locale: { iso_code: s.locale }, design_mode: false },
    shop: { name: 'E2E store', permanent_domain: SHOP },
    customer: s.customerId ? { id: Number(s.customerId), email: `c${s.customerId}@example.com` } : null,
    all_products: allProducts,
    ...extra,
  })
}

/** The theme's layout around a page's content, with the app embed (default settings) before </body>. */
async function layout(s: Shopper, title: string, content: string): Promise<string> {
  const embed = await engine.parseAndRender(
    embedSource,
    scopeOf(s, {
      block: {
        id: 'embed',
        settings: { heart_color: '#c8102e', star_color: '#8a5a00', accent_color: '#1a5fb4', show_launcher: false },
        shopify_attributes: '',
      },
    }),
  )
  return `<!doctype html><html lang="${s.locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} – E2E store</title>
<script>window.Shopify = { shop: ${JSON.stringify(SHOP)}, locale: ${JSON.stringify(s.locale)} }</script>
<link rel="stylesheet" href="/cdn/assets/wishlist-blocks.css"><style>${THEME_CSS}</style></head>
<body><a class="visually-hidden" href="#MainContent" style="position:absolute;left:-9999px">Skip to content</a>
<header class="site-header"><a class="logo" href="/">E2E store</a><nav aria-label="Main"><a href="${PREFIX}">Wishlist</a><a href="/cart">Cart</a></nav></header>
<main id="MainContent">${content}</main>
<footer class="site-footer">E2E store</footer>
${embed}
</body></html>`
}

function startStorefront(): Promise<void> {
  storefront = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://storefront')
    const shopper = shopperOf(req.headers)
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      void handle(url, shopper, req.method ?? 'GET', req.headers, body).then(
        (answer) => res.writeHead(answer.status, answer.headers).end(answer.body),
        (err: unknown) => res.writeHead(500).end(String(err)),
      )
    })
  })
  return new Promise((done) =>
    storefront.listen(0, '127.0.0.1', () => {
      storefrontUrl = `http://127.0.0.1:${(storefront.address() as AddressInfo).port}`
      done()
    }),
  )
}

type Answer = { status: number; headers: Record<string, string>; body: string | Buffer }
const html = (body: string): Answer => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body })

async function handle(url: URL, s: Shopper, method: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Answer> {
  if (url.pathname === '/') return html(await layout(s, 'Home', '<h1>E2E store</h1>'))
  if (url.pathname === '/account/login') {
    return {
      status: 302,
      headers: {
        location: url.searchParams.get('return_to') ?? '/',
        'set-cookie': `customer_id=${url.searchParams.get('customer') ?? ''}; Path=/`,
      },
      body: '',
    }
  }
  if (url.pathname.startsWith('/cdn/assets/')) {
    const file = join(EXTENSION_DIR, 'assets', url.pathname.slice('/cdn/assets/'.length))
    if (!existsSync(file)) return { status: 404, headers: {}, body: '' }
    return { status: 200, headers: { 'content-type': file.endsWith('.css') ? 'text/css' : 'text/javascript' }, body: readFileSync(file) }
  }
  if (url.pathname.startsWith(IMAGES)) {
    const handleName = url.pathname.slice(IMAGES.length).replace(/\.jpg$/, '')
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300"><rect width="300" height="300" fill="${COLOURS[handleName] ?? '#999'}"/><circle cx="150" cy="150" r="70" fill="#fff" opacity=".35"/></svg>`
    return { status: 200, headers: { 'content-type': 'image/svg+xml' }, body: svg }
  }
  if (url.pathname.startsWith('/products/') && url.pathname.endsWith('.js')) {
    const p = allProducts[url.pathname.slice('/products/'.length, -3)]
    if (!p) return { status: 404, headers: {}, body: '' }
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...p, featured_image: p.featured_image }),
    }
  }
  if (url.pathname === '/cart/add' && method === 'POST') {
    const form = new URLSearchParams(body.toString('utf8'))
    const lines: { id: number; quantity: number }[] = []
    if (form.has('id')) lines.push({ id: Number(form.get('id')), quantity: Number(form.get('quantity') ?? 1) })
    const ids = form.getAll('items[][id]')
    const quantities = form.getAll('items[][quantity]')
    ids.forEach((id, i) => lines.push({ id: Number(id), quantity: Number(quantities[i] ?? 1) }))
    const cart = s.cart || randomUUID()
    carts.set(cart, [...(carts.get(cart) ?? []), ...lines])
    return { status: 302, headers: { location: '/cart', 'set-cookie': `cart=${cart}; Path=/` }, body: '' }
  }
  if (url.pathname === '/cart.js')
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: carts.get(s.cart) ?? [] }) }
  if (url.pathname === '/cart') {
    const items = carts.get(s.cart) ?? []
    return html(await layout(s, 'Cart', `<h1>Cart</h1><ul id="cart">${items.map((i) => `<li>${i.id} × ${i.quantity}</li>`).join('')}</ul>`))
  }
  if (url.pathname === PREFIX || url.pathname.startsWith(`${PREFIX}/`)) {
    // Shopify's app proxy (helpers/app-proxy.ts); a Liquid answer is rendered inside the theme.
    const answer = await forwardToAppProxy(
      env.baseUrl,
      { shop: SHOP, secret: SECRET, customerId: s.customerId },
      { method, url, headers, body },
    )
    if (!(answer.headers['content-type'] ?? '').startsWith('application/liquid')) return answer
    const content = await engine.parseAndRender(answer.body.toString('utf8'), scopeOf(s))
    const title = /<h1[^>]*>([^<]*)</.exec(content)?.[1] ?? 'Wishlist'
    return html(await layout(s, title, content))
  }
  return { status: 404, headers: {}, body: '' }
}

/** axe-core on the page as it is: no violation of impact serious or critical, at 1280 and at 375 px. */
async function accessible(name: string): Promise<void> {
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 })
    await page.addScriptTag({ content: AXE_SOURCE })
    const violations = await page.evaluate(async () => {
      const axe = (
        window as unknown as {
          axe: {
            run(
              ctx: Document,
              opts: object,
            ): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }>
          }
        }
      ).axe
      const result = await axe.run(document, { resultTypes: ['violations'] })
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        targets: v.nodes.map((n) => JSON.stringify(n.target)).slice(0, 3),
      }))
    })
    expect(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
      `${name} at ${width}px`,
    ).toEqual([])
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

const shot = (name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true })

/** Saves through the signing proxy, as the shopper's hearts would. */
async function save(customerId: string, item: Record<string, string>): Promise<void> {
  const res = await fetch(`${storefrontUrl}${PREFIX}/v1/wishlists/me/items`, {
    method: 'POST',
    headers: { cookie: `customer_id=${customerId}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(item),
  })
  expect(res.status).toBe(201)
}

const cartOf = async () =>
  (await (await page.request.get(`${storefrontUrl}/cart.js`)).json()) as { items: { id: number; quantity: number }[] }

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  // The app embed loads the widget from the extension's assets (a copy of the widget's build).
  execFileSync(process.execPath, [resolve(HERE, '..', 'scripts', 'build-extension.mjs')])
  ;[env, browser] = await Promise.all([startEnv({ SHOPIFY_API_SECRET: SECRET, SHOPIFY_API_KEY: API_KEY }), launchChromium()])
  await startStorefront()
  const shop = await env.testApp.app.services.shops.ensureByDomain(SHOP, 'scale')
  await env.testApp.app.services.shops.updateSettings(shop.id, { reviews_auto_approve: false })
})
afterAll(async () => {
  await browser?.close()
  await new Promise((r) => storefront?.close(r))
  await env?.close()
})
beforeEach(async () => {
  // axe-core is injected into pages whose CSP allows no inline script (the service's own page).
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
  page = await context.newPage()
  page.setDefaultTimeout(10_000)
})
afterEach(() => context.close())

const login = (customerId: string, locale = 'en') =>
  context.addCookies([
    { name: 'customer_id', value: customerId, url: storefrontUrl },
    { name: 'locale', value: locale, url: storefrontUrl },
  ])

describe('the wishlist page, https://{shop}/apps/wishlist', () => {
  test('a logged-in shopper sees their items and buys from them: add to cart, add all to cart, remove, share', async () => {
    await save('5101', { product_id: '7001', handle: 'linen-shirt', variant_id: '70012' })
    await save('5101', { product_id: '7002', handle: 'wool-scarf' })
    await save('5101', { product_id: '7003', handle: 'canvas-tote' })
    await save('5101', { product_id: '7004', handle: 'rain-jacket' })
    await login('5101')
    const res = await page.goto(`${storefrontUrl}${PREFIX}`)
    expect(res?.status(), await res?.text()).toBe(200)
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), POLL).toBe('My wishlist')
    const items = page.locator('li.wishlist-page__item')
    expect(await items.count()).toBe(4)
    expect(await items.first().textContent()).toContain('Rain jacket')
    expect(await page.locator('.wishlist-page__price').allTextContents()).toEqual(['$129.00', '$24.50', '$39.00', '$60.00'])
    await accessible('wishlist page')
    await shot('shopify-wishlist-page')
    await page.setViewportSize({ width: 375, height: 900 })
    await shot('shopify-wishlist-page-375')
    await page.setViewportSize({ width: 1280, height: 900 })

    // One item to the cart: the saved variant.
    await page.getByRole('button', { name: 'Add to cart Linen shirt' }).click()
    await page.waitForURL(`${storefrontUrl}/cart`)
    expect((await cartOf()).items).toEqual([{ id: 70012, quantity: 1 }])

    // All of them: every item that can be bought (the sold-out jacket cannot).
    await page.goto(`${storefrontUrl}${PREFIX}`)
    await page.getByRole('button', { name: 'Add all to cart' }).click()
    await page.waitForURL(`${storefrontUrl}/cart`)
    expect((await cartOf()).items.slice(1)).toEqual([
      { id: 70031, quantity: 1 },
      { id: 70021, quantity: 1 },
      { id: 70012, quantity: 1 },
    ])

    // Remove, then share: forms posted back to the proxy.
    await page.goto(`${storefrontUrl}${PREFIX}`)
    await page.getByRole('button', { name: 'Remove Wool scarf' }).click()
    // Post/Redirect/Get: the browser lands on the page again, which says what was done.
    await page.waitForURL(`${storefrontUrl}${PREFIX}?done=removed`)
    // The page's own status (the widget's live regions sit outside <main>).
    await expect.poll(() => page.getByRole('main').getByRole('status').textContent(), POLL).toBe('Removed from your wishlist.')
    expect(await page.locator('li.wishlist-page__item').count()).toBe(3)
    await page.getByRole('button', { name: 'Share this wishlist' }).click()
    await page.waitForURL(`${storefrontUrl}${PREFIX}?done=shared`)
    const shareUrl = await page.getByLabel('Anyone with this link can see your wishlist:').inputValue()
    expect(shareUrl).toMatch(new RegExp(`^https://${SHOP.replace(/\./g, '\\.')}/apps/wishlist/shared/[A-Za-z0-9_-]+$`))
    await accessible('wishlist page after share')

    // The shared page, opened by someone else: add all to cart works there too.
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    try {
      page = await other.newPage()
      await page.goto(`${storefrontUrl}${new URL(shareUrl).pathname}`)
      expect(await page.locator('li.wishlist-page__item').count()).toBe(3)
      expect(await page.locator('form.wishlist-page__remove').count()).toBe(0)
      await accessible('shared page')
      await shot('shopify-shared-page')
      await page.getByRole('button', { name: 'Add all to cart' }).click()
      await page.waitForURL(`${storefrontUrl}/cart`)
      expect((await cartOf()).items.map((i) => i.id).sort()).toEqual([70012, 70031])
    } finally {
      await other.close()
    }
  })

  test("speaks the shop's language, and a guest gets the container the widget fills and a way to log in", async () => {
    await save('5102', { product_id: '7003', handle: 'canvas-tote' })
    await login('5102', 'fr')
    await page.goto(`${storefrontUrl}${PREFIX}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Ma liste d’envies')
    expect(await page.getByRole('button', { name: 'Tout ajouter au panier' }).count()).toBe(1)
    expect(await page.locator('html').getAttribute('lang')).toBe('fr')

    await context.clearCookies()
    await context.addCookies([{ name: 'locale', value: 'ja', url: storefrontUrl }])
    await page.goto(`${storefrontUrl}${PREFIX}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('ほしい物リスト')
    expect(await page.locator('#wishlist-guest-list[data-wishlist-guest-list]').count()).toBe(1)
    const strings = JSON.parse((await page.locator('section[data-wishlist-page]').getAttribute('data-strings')) ?? '{}') as Record<
      string,
      string
    >
    expect(strings['page.addAllToCart']).toBe('すべてカートに追加')
    expect(await page.getByRole('link', { name: 'ログインすると、どの端末でもリストを見られます' }).getAttribute('href')).toBe(
      '/account/login',
    )
    await accessible('guest wishlist page')
  })
})

describe('a gift list, with no script', () => {
  test('quantities and notes show, add to cart takes the quantity, and on the shared page a bought gift cannot be bought again', async () => {
    const res = await fetch(`${storefrontUrl}${PREFIX}/v1/wishlists/me/items`, {
      method: 'POST',
      headers: { cookie: 'customer_id=5103', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ product_id: '7001', handle: 'linen-shirt', variant_id: '70011', quantity: 2, note: 'Size M, please' }),
    })
    expect(res.status).toBe(201)
    await save('5103', { product_id: '7003', handle: 'canvas-tote' })
    // The owner bought the tote: Shopify's orders/create.
    await shopifyWebhook('orders/create', { id: 889001, customer: { id: 5103 }, line_items: [{ product_id: 7003, quantity: 1 }] })

    // The owner's page, in a browser with JavaScript off: everything works with plain forms.
    const noScript = await browser.newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false })
    try {
      await noScript.addCookies([{ name: 'customer_id', value: '5103', url: storefrontUrl }])
      page = await noScript.newPage()
      await page.goto(`${storefrontUrl}${PREFIX}`)
      const shirt = page.locator('li.wishlist-page__item[data-product-id="7001"]')
      expect(await shirt.locator('.wishlist-page__quantity').textContent()).toBe('Quantity: 2')
      expect(await shirt.locator('.wishlist-page__note').textContent()).toBe('Note: Size M, please')
      expect(await page.locator('li.wishlist-page__item[data-product-id="7003"] .wishlist-page__purchased').textContent()).toBe('Purchased')
      await page.getByRole('button', { name: 'Add to cart Linen shirt' }).click()
      await page.waitForURL(`${storefrontUrl}/cart`)
      expect((await cartOf()).items).toEqual([{ id: 70011, quantity: 2 }])

      await page.goto(`${storefrontUrl}${PREFIX}`)
      await page.getByRole('button', { name: 'Share this wishlist' }).click()
      await page.waitForURL(`${storefrontUrl}${PREFIX}?done=shared`)
      const shareUrl = await page.getByLabel('Anyone with this link can see your wishlist:').inputValue()

      // A friend opens it, in French, also without script.
      await noScript.clearCookies()
      await noScript.addCookies([{ name: 'locale', value: 'fr', url: storefrontUrl }])
      await page.goto(`${storefrontUrl}${new URL(shareUrl).pathname}`)
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Ma liste d’envies')
      const tote = page.locator('li.wishlist-page__item[data-product-id="7003"]')
      expect(await tote.locator('.wishlist-page__purchased').textContent()).toBe('Acheté')
      expect(await tote.getByRole('button').count()).toBe(0)
      expect(await page.locator('li.wishlist-page__item[data-product-id="7001"] .wishlist-page__quantity').textContent()).toBe(
        'Quantité : 2',
      )
      await page.getByRole('button', { name: 'Tout ajouter au panier' }).click()
      await page.waitForURL(`${storefrontUrl}/cart`)
      expect((await cartOf()).items).toEqual([{ id: 70011, quantity: 2 }])

      // The same pages with script (axe-core runs as a script): no serious or critical violation.
      page = await context.newPage()
      await login('5103')
      await page.goto(`${storefrontUrl}${PREFIX}`)
      await accessible('gift list, owner')
      await context.clearCookies()
      await context.addCookies([{ name: 'locale', value: 'fr', url: storefrontUrl }])
      await page.goto(`${storefrontUrl}${new URL(shareUrl).pathname}`)
      await accessible('gift list, shared')
      await shot('shopify-shared-gift-list')
    } finally {
      await noScript.close()
    }
  })
})

describe('review invitations open a form', () => {
  let order = 0
  async function invitationPath(productId: number, handle: string): Promise<string> {
    await shopifyWebhook('products/update', {
      id: productId,
      handle,
      title: handle,
      variants: [{ id: productId * 10 + 1, price: '24.50', inventory_quantity: 5 }],
    })
    await shopifyWebhook('orders/create', {
      id: 880000 + ++order,
      email: `buyer${order}@example.com`,
      customer: { id: 5200 + order },
      line_items: [{ product_id: productId, variant_id: productId * 10 + 1 }],
    })
    const shop = await env.testApp.app.services.shops.byDomain(SHOP)
    const { invitations } = await env.testApp.app.services.invitations.list(
      { shop: shop!, actor: { kind: 'admin', keyId: 'e2e' }, requestId: 'e2e' },
      { limit: 1 },
    )
    const reviewUrl = new URL(invitations[0]?.reviewUrl ?? '')
    expect(reviewUrl.origin).toBe(`https://${SHOP}`)
    return reviewUrl.pathname + reviewUrl.search
  }

  test('in the theme, filled in with the keyboard alone: field errors, then thank you; the link again says it was used', async () => {
    const path = await invitationPath(7003, 'canvas-tote')
    await page.goto(`${storefrontUrl}${path}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Review Canvas tote')
    await accessible('review form')
    await shot('shopify-review-invitation-page')

    // Keyboard only: submit empty first.
    await page.getByRole('button', { name: 'Submit review' }).focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByRole('main').getByRole('alert').textContent(), POLL).toContain('Choose a rating from 1 to 5 stars.')
    // The summary has the focus (autofocus, no script needed), and each problem links to its field.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), POLL).toBe('wl-review-errors')
    await page.getByRole('link', { name: 'Write your review (up to 5,000 characters).' }).click()
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), POLL).toBe('wl-review-body')
    expect(await page.locator('#wl-review-body').getAttribute('aria-invalid')).toBe('true')
    await accessible('review form with errors')
    await shot('shopify-review-invitation-errors')

    await page.locator('#wl-review-rating-5').focus()
    await page.keyboard.press('ArrowDown') // 4 stars
    await page.keyboard.press('Tab')
    await page.keyboard.type('Holds everything')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Sturdy canvas, long handles.')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Ann')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), POLL).toBe('Thank you for your review!')
    expect(await page.getByRole('main').getByRole('status').textContent()).toBe('It will appear on the shop once it has been approved.')
    // Sent back to the page (303): reloading it posts nothing again.
    expect(page.url()).toMatch(/\/apps\/wishlist\/reviews\/new\?invitation=[A-Za-z0-9_-]+&done=1$/)
    await page.reload()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your review!')
    expect(await env.testApp.storage.db.selectFrom('reviews').selectAll().where('product_id', '=', '7003').execute()).toHaveLength(1)
    await accessible('review thank-you page')
    const [stored] = await env.testApp.storage.db.selectFrom('reviews').selectAll().where('product_id', '=', '7003').execute()
    expect(stored).toMatchObject({ rating: 4, title: 'Holds everything', customer_name: 'Ann', verified: 1, status: 'pending' })

    await page.goto(`${storefrontUrl}${path}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This review link has already been used')
    await accessible('used review link')
    await shot('shopify-review-invitation-used')
  })

  test("a shop that is not on Shopify: the service's own page", async () => {
    const created = await env.testApp.app.services.shops.create({ domain: 'boutique.example', plan: 'free' })
    const token = await env.testApp.call('POST', '/v1/auth/token', {
      body: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret },
    })
    const events = await env.testApp.call('POST', '/v1/events', {
      token: token.body.data.token as string,
      body: { events: [{ type: 'order.created', order_id: '77001', line_items: [{ product_id: '9901' }] }] },
    })
    expect(events.status).toBe(200)
    const row = await env.testApp.storage.db
      .selectFrom('review_invitations')
      .selectAll()
      .where('shop_id', '=', created.shop.id)
      .executeTakeFirstOrThrow()
    await page.goto(`${env.baseUrl}/reviews/new?invitation=${row.token}&locale=de`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Bewertung schreiben')
    await accessible('service review page')
    await shot('review-page-service')
    // Sent without a rating: the title says there is an error, the focused summary says what to fix.
    await page.getByRole('button', { name: 'Bewertung senden' }).click()
    await expect.poll(() => page.title(), POLL).toMatch(/^Fehler: /)
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('wl-review-errors')
    await accessible('service review page with errors')
    await page.getByLabel('2 Sterne').check()
    await page.getByLabel(/Ihre Bewertung/).fill('Zu klein.')
    await page.getByLabel(/Ihr Name/).fill('Bo')
    await page.getByLabel(/E-Mail/).fill('bo@example.com')
    await page.getByRole('button', { name: 'Bewertung senden' }).click()
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), POLL).toBe('Vielen Dank für Ihre Bewertung!')
    await page.goto(`${env.baseUrl}/reviews/new?invitation=${'q'.repeat(32)}`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This review link is not valid')
    await accessible('service review page, unknown link')
    await shot('review-page-service-unknown')
  })
})
