/**
 * The shopper's side of the widget on a Shopify theme, in French and in English, at 320, 375
 * and 1280 px: a local storefront signs app-proxy requests as Shopify does (each test shopper
 * from an address of their own, so the service's per-address rate limit can really refuse
 * them), renders the theme extension's own Liquid (app embed with its launcher, heart blocks)
 * and the service's guest wishlist page inside a theme layout.
 *
 * Covered: a refused save (the service's real 429, a 400, no connection) flips the heart back
 * and says why in the page's language through the assertive live region; hearts exist only
 * once the page's language has arrived (the French chunk held back: never an English name);
 * the guest wishlist page shows a gift list's quantity, note and purchased state and adds the
 * saved quantities to the cart; a failed load, remove and share say so in text; nothing
 * scrolls sideways in any state (after Share too); the keyboard reaches the last remove
 * button and the launcher does not cover it; axe-core finds no serious or critical
 * violation. Screenshots land in e2e/screenshots/ (gitignored).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page, Route } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { EXTENSION_DIR, pageScope, renderBlock, shopifyLiquid, stubProduct } from '../apps/server/test/helpers/shopify-liquid.js'
import { forwardToAppProxy } from './helpers/app-proxy.js'
import { seriousViolations } from './helpers/axe.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const SECRET = 'shpss_e2e_shopper_secret_0123456789abcd'
const API_KEY = 'e2e0123456789abcdef0123456789abcf'
const SHOP = 'e2e-shopper.myshopify.com'
const PREFIX = '/apps/wishlist'
const HERE = dirname(fileURLToPath(import.meta.url))
const SCREENSHOTS = resolve(HERE, 'screenshots')
/** The service's budget per shopper address and minute: small, so a test can spend it. */
const BUDGET = 25
const WIDTHS = [320, 375, 1280] as const
const POLL = { timeout: 15_000 }

let env: Env
let browser: Browser
let storefront: Server
let storefrontUrl: string
const pageErrors: string[] = []

const IMAGES = '/images/'
const PRODUCTS = [
  stubProduct(7001, 'linen-shirt', 'Linen shirt with a rather long name for a small screen', 5900, {
    variants: [70011, 70012],
    imageBase: IMAGES,
  }),
  stubProduct(7002, 'wool-scarf', 'Wool scarf', 3900, { imageBase: IMAGES }),
  stubProduct(7003, 'canvas-tote', 'Canvas tote', 2450, { imageBase: IMAGES }),
  stubProduct(7004, 'rain-jacket', 'Rain jacket', 12900, { imageBase: IMAGES, available: false }),
]
const allProducts = Object.fromEntries(PRODUCTS.map((p) => [p.handle, p]))
const SHIRT = PRODUCTS[0]!

const engine = shopifyLiquid({ root: EXTENSION_DIR, assetUrl: (name) => `/cdn/assets/${name}` })

const THEME_CSS = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f1f1f;background:#fff}
a{color:#0b4f9c}a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #0b4f9c;outline-offset:2px}
.site-header{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:.5rem;padding:1rem}
.site-header .logo{font-weight:700;color:#1f1f1f;text-decoration:none}.site-header nav{display:flex;gap:1rem}
main{padding:0 1rem}h1{font-size:1.75rem;line-height:1.2;margin:0 0 1rem;overflow-wrap:anywhere}
.button{font:inherit;min-height:44px;border:1px solid #1f1f1f;background:#1f1f1f;color:#fff;border-radius:4px;padding:.5rem 1rem}
.cards{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(9rem,1fr));gap:1rem}
.card{border:1px solid #ddd;border-radius:4px;padding:.5rem;overflow-wrap:anywhere}
.site-footer{padding:2rem 1rem;border-top:1px solid #ddd;margin-top:3rem;color:#4a4a4a}`

interface Shopper {
  customerId: string
  locale: string
  ip: string
}
const cookies = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    (headers.cookie ?? '')
      .split(/;\s*/)
      .filter(Boolean)
      .map((c) => c.split('=') as [string, string]),
  )
const shopperOf = (headers: IncomingHttpHeaders): Shopper => {
  const c = cookies(headers)
  return { customerId: c.customer_id ?? '', locale: c.locale ?? 'en', ip: c.ip ?? '203.0.113.1' }
}
const scopeOf = (s: Shopper, extra: Record<string, unknown> = {}) =>
  pageScope({
    request: { locale: { iso_code: s.locale }, design_mode: false },
    shop: { name: 'E2E store', permanent_domain: SHOP },
    customer: s.customerId ? { id: Number(s.customerId), email: `c${s.customerId}@example.com` } : null,
    all_products: allProducts,
    ...extra,
  })

/** The theme's layout around a page's content, with the app embed (its launcher on) before </body>. */
async function layout(s: Shopper, title: string, content: string): Promise<string> {
  const embed = await renderBlock(engine, 'app-embed', { settings: { show_launcher: true }, scope: scopeOf(s) })
  return `<!doctype html><html lang="${s.locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} – E2E store</title>
<script>window.Shopify = { shop: ${JSON.stringify(SHOP)}, locale: ${JSON.stringify(s.locale)}, currency: { active: "EUR" }, routes: { root: "/" } }</script>
<link rel="stylesheet" href="/cdn/assets/wishlist-blocks.css"><style>${THEME_CSS}</style></head>
<body><header class="site-header"><a class="logo" href="/">E2E store</a><nav aria-label="Main"><a href="${PREFIX}">Wishlist</a><a href="/cart">Cart</a></nav></header>
<main id="MainContent">${content}</main>
<footer class="site-footer">E2E store</footer>
${embed}
</body></html>`
}

/** A product page: the product with its heart block, then cards of other products with theirs. */
async function productPage(s: Shopper): Promise<string> {
  const heart = (product: unknown) => renderBlock(engine, 'heart', { settings: { product }, scope: scopeOf(s) })
  const cards = await Promise.all(
    PRODUCTS.slice(1).map(async (p) => `<li class="card"><a href="/products/${p.handle}">${p.title}</a>${await heart(p)}</li>`),
  )
  return layout(
    s,
    SHIRT.title,
    `<h1>${SHIRT.title}</h1>${await heart(SHIRT)}<p>59,00 €</p><button class="button" type="button">Add to cart</button>
<h2>More</h2><ul class="cards">${cards.join('')}</ul>`,
  )
}

type Answer = { status: number; headers: Record<string, string>; body: string | Buffer }
const html = (body: string): Answer => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body })

async function handle(url: URL, s: Shopper, method: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Answer> {
  if (url.pathname === `/products/${SHIRT.handle}`) return html(await productPage(s))
  if (url.pathname.startsWith('/cdn/assets/')) {
    const file = join(EXTENSION_DIR, 'assets', url.pathname.slice('/cdn/assets/'.length))
    if (!existsSync(file)) return { status: 404, headers: {}, body: '' }
    return { status: 200, headers: { 'content-type': file.endsWith('.css') ? 'text/css' : 'text/javascript' }, body: readFileSync(file) }
  }
  if (url.pathname.startsWith(IMAGES)) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="300"><rect width="300" height="300" fill="#8c2f39"/></svg>`
    return { status: 200, headers: { 'content-type': 'image/svg+xml' }, body: svg }
  }
  if (url.pathname.startsWith('/products/') && url.pathname.endsWith('.js')) {
    const p = allProducts[url.pathname.slice('/products/'.length, -3)]
    if (!p) return { status: 404, headers: {}, body: '' }
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(p) }
  }
  if (url.pathname === '/cart') return html(await layout(s, 'Cart', '<h1>Cart</h1>'))
  if (url.pathname === PREFIX || url.pathname.startsWith(`${PREFIX}/`)) {
    // Shopify's app proxy (helpers/app-proxy.ts) with the shopper's address; a Liquid answer is rendered in the theme.
    const answer = await forwardToAppProxy(
      env.baseUrl,
      { shop: SHOP, secret: SECRET, customerId: s.customerId, ip: s.ip },
      { method, url, headers, body },
    )
    if (!(answer.headers['content-type'] ?? '').startsWith('application/liquid')) return answer
    const content = await engine.parseAndRender(answer.body.toString('utf8'), scopeOf(s))
    const title = /<h1[^>]*>([^<]*)</.exec(content)?.[1] ?? 'Wishlist'
    return html(await layout(s, title, content))
  }
  return { status: 404, headers: {}, body: '' }
}

function startStorefront(): Promise<void> {
  storefront = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://storefront')
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void handle(url, shopperOf(req.headers), req.method ?? 'GET', req.headers, Buffer.concat(chunks)).then(
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

let shoppers = 0
/** A new shopper: an address of their own (their own rate-limit budget) and a guest id. */
const newShopper = () => {
  shoppers++
  return { ip: `198.51.100.${shoppers}`, guestId: `g_e2e_shopper_${String(shoppers).padStart(8, '0')}` }
}

/** Calls the proxy as the shopper would (same address, same guest id). */
const proxied = (ip: string, guestId: string, method: string, path: string, body?: unknown) =>
  fetch(`${storefrontUrl}${PREFIX}${path}`, {
    method,
    headers: {
      cookie: `ip=${ip}`,
      accept: 'application/json',
      'x-guest-id': guestId,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

/**
 * Spends the shopper's budget until `leave` requests are left (0: the next one is refused).
 * A window about to end is waited out first, so the refusal the test expects really comes.
 */
async function spend(ip: string, leave = 0): Promise<void> {
  for (;;) {
    const res = await proxied(ip, 'g_e2e_spender_00000001', 'GET', '/v1/wishlists/me?limit=1')
    await res.arrayBuffer()
    const reset = Number(res.headers.get('x-ratelimit-reset') ?? res.headers.get('retry-after') ?? 60)
    const remaining = res.status === 429 ? 0 : Number(res.headers.get('x-ratelimit-remaining'))
    if (remaining > leave) continue
    if (reset >= 20) return
    // Too close to the window's end: start over in the next window.
    await new Promise((r) => setTimeout(r, (reset + 1) * 1000))
  }
}

async function openContext(width: number, s: { ip: string; guestId?: string; locale: string }, height = 812): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } })
  contexts.push(context)
  await context.addCookies([
    { name: 'locale', value: s.locale, url: storefrontUrl },
    { name: 'ip', value: s.ip, url: storefrontUrl },
  ])
  if (s.guestId) await context.addInitScript((id) => localStorage.setItem('wishlist:guest-id', id), s.guestId)
  const page = await context.newPage()
  page.setDefaultTimeout(10_000)
  page.on('pageerror', (err) => pageErrors.push(err.message))
  return page
}
const contexts: BrowserContext[] = []

const noSideScroll = async (page: Page, what: string) =>
  expect(await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]), `${what}: page width vs viewport`).toSatisfy(
    ([scroll, inner]: number[]) => scroll! <= inner!,
  )
const accessible = async (page: Page, what: string) => {
  const found = await seriousViolations(page)
  expect(found, `${what}: ${JSON.stringify(found)}`).toEqual([])
}
const shot = (page: Page, name: string, fullPage = true) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage })
const assertive = (page: Page) => page.locator('[data-wishlist-live="assertive"]')
const heartOf = (page: Page, productId: string) => page.locator(`[data-wishlist-product-id="${productId}"] button.wl-heart`)

const TEXT = {
  fr: {
    add: (title: string) => `Ajouter ${title} à la liste d’envies`,
    rateLimited: (title: string) => `Impossible d’ajouter ${title} à votre liste d’envies. Trop de demandes : réessayez dans un instant.`,
    invalid: (title: string) => `Impossible d’ajouter ${title} à votre liste d’envies. La boutique n’a pas accepté ce produit.`,
    offline: (title: string) => `Impossible d’ajouter ${title} à votre liste d’envies. Pas de connexion : vérifiez-la et réessayez.`,
    full: (title: string) =>
      `Impossible d’ajouter ${title} à votre liste d’envies. Votre liste d’envies est pleine : retirez d’abord un article.`,
    plan: (title: string) => `Impossible d’ajouter ${title} à votre liste d’envies. Cette boutique ne le permet pas pour le moment.`,
    quantity: (n: number) => `Quantité : ${n}`,
    note: 'Note : Taille M, bleu marine',
    purchased: 'Acheté',
    addAll: 'Tout ajouter au panier',
    remove: 'Retirer',
    share: 'Partager cette liste',
    shareLabel: 'Toute personne ayant ce lien peut voir votre liste d’envies',
    loadFailed: 'Votre liste d’envies n’a pas pu être chargée. Trop de demandes : réessayez dans un instant.',
    removeFailed: (title: string) =>
      `Impossible de retirer ${title} de votre liste d’envies. Trop de demandes : réessayez dans un instant.`,
    shareFailed: 'Le lien de partage n’a pas pu être créé. Trop de demandes : réessayez dans un instant.',
  },
  en: {
    add: (title: string) => `Add ${title} to wishlist`,
    rateLimited: (title: string) => `Could not add ${title} to your wishlist. Too many requests: try again in a moment.`,
    invalid: (title: string) => `Could not add ${title} to your wishlist. The shop did not accept this product.`,
    offline: (title: string) => `Could not add ${title} to your wishlist. No connection: check it and try again.`,
    full: (title: string) => `Could not add ${title} to your wishlist. Your wishlist is full: remove an item first.`,
    plan: (title: string) => `Could not add ${title} to your wishlist. This shop does not allow it at the moment.`,
    quantity: (n: number) => `Quantity: ${n}`,
    note: 'Note: Taille M, bleu marine',
    purchased: 'Purchased',
    addAll: 'Add all to cart',
    remove: 'Remove',
    share: 'Share this wishlist',
    shareLabel: 'Anyone with this link can see your wishlist',
    loadFailed: 'Your wishlist could not be loaded. Too many requests: try again in a moment.',
    removeFailed: (title: string) => `Could not remove ${title} from your wishlist. Too many requests: try again in a moment.`,
    shareFailed: 'The share link could not be made. Too many requests: try again in a moment.',
  },
} as const
type Locale = keyof typeof TEXT

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  // The app embed loads the widget from the extension's assets (a copy of the widget's build).
  execFileSync(process.execPath, [resolve(HERE, '..', 'scripts', 'build-extension.mjs')])
  ;[env, browser] = await Promise.all([
    startEnv({ SHOPIFY_API_SECRET: SECRET, SHOPIFY_API_KEY: API_KEY, RATE_LIMIT_STOREFRONT_PER_MIN: String(BUDGET) }),
    launchChromium(),
  ])
  await startStorefront()
  await env.testApp.app.services.shops.ensureByDomain(SHOP, 'scale')
})
afterAll(async () => {
  await browser?.close()
  await new Promise((r) => storefront?.close(r))
  await env?.close()
})
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()))
  // A script error on a page fails the test that caused it.
  expect(pageErrors.splice(0)).toEqual([])
})

describe.each(['fr', 'en'] as const)('hearts in %s', (locale: Locale) => {
  const text = TEXT[locale]

  test('a save the service refuses (too many requests) flips back and says why, at 320, 375 and 1280 px', async () => {
    for (const width of WIDTHS) {
      const { ip } = newShopper()
      const page = await openContext(width, { ip, locale })
      await page.goto(`${storefrontUrl}/products/${SHIRT.handle}`)
      const heart = heartOf(page, '7001')
      await heart.waitFor()
      expect(await heart.getAttribute('aria-label')).toBe(text.add(SHIRT.title))
      expect(await heart.getAttribute('aria-pressed')).toBe('false')
      await noSideScroll(page, `product page at ${width}`)
      await accessible(page, `product page at ${width}`)

      await spend(ip)
      await heart.click()
      await expect.poll(() => assertive(page).textContent(), POLL).toBe(text.rateLimited(SHIRT.title))
      expect(await assertive(page).getAttribute('role')).toBe('alert')
      expect(await heart.getAttribute('aria-pressed')).toBe('false')
      expect(await page.locator('[data-wishlist-product-id="7001"]').getAttribute('data-wishlist-error')).toBe('RATE_LIMITED')
      expect(await page.locator('[data-wishlist-count]').first().textContent()).toBe('0')
      // Shown too: the message appears next to the heart, inside the screen, without covering it.
      const note = await assertive(page).boundingBox()
      expect(note!.width).toBeGreaterThan(100)
      expect(note!.x >= 0 && note!.x + note!.width <= width).toBe(true)
      // (Clicks go through it, so geometry says whether it covers the heart.)
      const box = (await heart.boundingBox())!
      const apart =
        note!.y >= box.y + box.height || note!.y + note!.height <= box.y || note!.x >= box.x + box.width || note!.x + note!.width <= box.x
      expect(apart, 'the note does not cover the heart').toBe(true)
      await noSideScroll(page, `refused save at ${width}`)
      await accessible(page, `refused save at ${width}`)
      if (locale === 'fr' && width !== 375) await shot(page, `shopper-heart-refused-fr-${width}`, false)
      // The shopper's next key puts it away (screen readers keep the text).
      await page.keyboard.press('Escape')
      expect((await assertive(page).boundingBox())!.width).toBeLessThanOrEqual(1)
      expect(await assertive(page).textContent()).toBe(text.rateLimited(SHIRT.title))
    }
  })

  test('a product the service does not accept, a full list, a plan that does not allow it, no connection: each says so', async () => {
    const { ip } = newShopper()
    const page = await openContext(375, { ip, locale })
    await page.goto(`${storefrontUrl}/products/${SHIRT.handle}`)
    await heartOf(page, '7003').waitFor()
    // A handle longer than the service takes (255 characters): a real 400.
    await page.evaluate(() =>
      document.querySelector('[data-wishlist-product-id="7003"]')!.setAttribute('data-wishlist-handle', 'x'.repeat(300)),
    )
    await heartOf(page, '7003').click()
    await expect.poll(() => assertive(page).textContent(), POLL).toBe(text.invalid('Canvas tote'))
    expect(await heartOf(page, '7003').getAttribute('aria-pressed')).toBe('false')

    // The 2,500-item limit and a plan's refusal, as the service words them (answered here: a
    // real full list is 2,500 rows).
    const refuse = (status: number, code: string) =>
      page.route(`${storefrontUrl}${PREFIX}/v1/wishlists/me/items`, (route) =>
        route.fulfill({ status, contentType: 'application/json', body: JSON.stringify({ ok: false, error: { code, message: code } }) }),
      )
    await refuse(400, 'ITEM_LIMIT')
    await heartOf(page, '7004').click()
    await expect.poll(() => assertive(page).textContent(), POLL).toBe(text.full('Rain jacket'))
    await page.unrouteAll()
    await refuse(403, 'PLAN_UPGRADE_REQUIRED')
    await heartOf(page, '7004').click()
    await expect.poll(() => assertive(page).textContent(), POLL).toBe(text.plan('Rain jacket'))
    expect(await heartOf(page, '7004').getAttribute('aria-pressed')).toBe('false')
    await page.unrouteAll()

    await page.route(`${storefrontUrl}${PREFIX}/**`, (route) => route.abort('internetdisconnected'))
    await heartOf(page, '7002').click()
    await expect.poll(() => assertive(page).textContent(), POLL).toBe(text.offline('Wool scarf'))
    expect(await heartOf(page, '7002').getAttribute('aria-pressed')).toBe('false')
  })
})

test('hearts are named in French from the first moment they exist, however late the French texts arrive', async () => {
  const { ip } = newShopper()
  const page = await openContext(375, { ip, locale: 'fr' })
  // Every name a heart ever has: added ones, and each value an attribute change replaced.
  await page.addInitScript(() => {
    const seen: string[] = ((window as unknown as { __names: string[] }).__names = [])
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'attributes' && (r.target as Element).matches('button.wl-heart') && r.oldValue) seen.push(r.oldValue)
        for (const n of r.addedNodes)
          if (n instanceof Element)
            for (const b of n.matches('button.wl-heart') ? [n] : n.querySelectorAll('button.wl-heart'))
              seen.push(`added:${b.getAttribute('aria-label')}`)
      }
    }).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['aria-label', 'title'],
      attributeOldValue: true,
    })
  })
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  let asked!: () => void
  const chunkAsked = new Promise<void>((r) => (asked = r))
  await page.route('**/widget-locale-fr.js', async (route: Route) => {
    asked()
    await held
    await route.continue()
  })
  await page.goto(`${storefrontUrl}/products/${SHIRT.handle}`, { waitUntil: 'domcontentloaded' })
  await chunkAsked
  // The widget starts its work at the page's load, or 3 s after it ran if the load is late (a
  // held script delays it): past that, the hearts would be drawn now if they did not wait for French.
  await page.waitForFunction(() => performance.now() > 3500, undefined, { polling: 100, timeout: 10_000 })
  expect(await page.locator('button.wl-heart').count()).toBe(0)
  release()
  await heartOf(page, '7001').waitFor()
  await page.evaluate(() => (window as unknown as { Wishlist: { ready: Promise<void> } }).Wishlist.ready)
  const names = await page.evaluate(() => (window as unknown as { __names: string[] }).__names)
  expect(names.length).toBeGreaterThanOrEqual(4)
  for (const name of names) expect(name).toMatch(/^(added:)?Ajouter .+ à la liste d’envies$/)
  expect(await page.locator('button.wl-heart').evaluateAll((b) => b.map((e) => e.getAttribute('aria-label')))).toEqual([
    `Ajouter ${SHIRT.title} à la liste d’envies`,
    'Ajouter Wool scarf à la liste d’envies',
    'Ajouter Canvas tote à la liste d’envies',
    'Ajouter Rain jacket à la liste d’envies',
  ])
})

/** A guest's gift list: quantities, a note, a purchased item and one no longer sold. */
async function giftList(ip: string, guestId: string): Promise<void> {
  for (const item of [
    // Added first, shown last: its remove button sits where the launcher is, at a phone's width.
    { product_id: '7003', handle: 'canvas-tote', quantity: 3 },
    { product_id: '7004', handle: 'rain-jacket' },
    { product_id: '7002', handle: 'wool-scarf' },
    { product_id: '7001', handle: SHIRT.handle, variant_id: '70012', quantity: 2, note: 'Taille M, bleu marine' },
  ]) {
    const res = await proxied(ip, guestId, 'POST', '/v1/wishlists/me/items', item)
    expect(res.status, await res.text()).toBe(201)
  }
  // Bought (an order of the owner marks it; a guest's list has no orders of its own).
  await env.testApp.storage.db
    .updateTable('wishlist_items')
    .set({ purchased_at: Date.now() })
    .where('owner_id', '=', guestId)
    .where('product_id', '=', '7002')
    .execute()
}

describe.each(['fr', 'en'] as const)("the guest's wishlist page in %s", (locale: Locale) => {
  const text = TEXT[locale]

  test('a gift list: quantity, note, purchased; the cart gets the saved quantities; Share fits the screen; at 320, 375 and 1280 px', async () => {
    const { ip, guestId } = newShopper()
    await giftList(ip, guestId)
    for (const width of WIDTHS) {
      const page = await openContext(width, { ip, guestId, locale })
      await page.goto(`${storefrontUrl}${PREFIX}`)
      const list = page.locator('[data-wishlist-guest-list]')
      await expect.poll(() => list.getAttribute('aria-busy'), POLL).toBe('false')
      const items = list.locator('li.wishlist-page__item')
      expect(await items.count()).toBe(4)
      const shirt = list.locator('li[data-product-id="7001"]')
      expect(await shirt.locator('.wishlist-page__quantity').textContent()).toBe(text.quantity(2))
      expect(await shirt.locator('.wishlist-page__note').textContent()).toBe(text.note)
      expect(await shirt.locator('form.wishlist-page__add input[name="quantity"]').getAttribute('value')).toBe('2')
      expect(await list.locator('li[data-product-id="7003"] .wishlist-page__quantity').textContent()).toBe(text.quantity(3))
      const scarf = list.locator('li[data-product-id="7002"]')
      expect(await scarf.locator('.wishlist-page__purchased').textContent()).toBe(text.purchased)
      expect(await list.locator('.wishlist-page__purchased').count()).toBe(1)
      // Add all: the saved quantities, not what was already purchased nor what is sold out.
      const addAll = list.locator('form.wishlist-page__add-all')
      expect(await addAll.getByRole('button').textContent()).toBe(text.addAll)
      expect(
        await addAll
          .locator('input')
          .evaluateAll((inputs) => inputs.map((i) => `${(i as HTMLInputElement).name}=${(i as HTMLInputElement).value}`)),
      ).toEqual(['items[][id]=70012', 'items[][quantity]=2', 'items[][id]=70031', 'items[][quantity]=3'])
      await noSideScroll(page, `wishlist page at ${width}`)
      await accessible(page, `wishlist page at ${width}`)
      if (locale === 'fr' && width !== 375) await shot(page, `shopper-wishlist-fr-${width}`)

      await list.getByRole('button', { name: text.share, exact: true }).click()
      const link = list.getByLabel(text.shareLabel)
      await link.waitFor()
      expect(await link.inputValue()).toMatch(/\/apps\/wishlist\/shared\/[\w-]+$/)
      await noSideScroll(page, `wishlist page after Share at ${width}`)
      await accessible(page, `wishlist page after Share at ${width}`)
      if (locale === 'fr' && width !== 375) await shot(page, `shopper-wishlist-shared-fr-${width}`)
    }
  })

  test('the keyboard reaches the last remove button, and the launcher does not cover it (375 × 812)', async () => {
    const { ip, guestId } = newShopper()
    await giftList(ip, guestId)
    const page = await openContext(375, { ip, guestId, locale })
    await page.goto(`${storefrontUrl}${PREFIX}`)
    const list = page.locator('[data-wishlist-guest-list]')
    await expect.poll(() => list.getAttribute('aria-busy'), POLL).toBe('false')
    expect(await page.locator('.wishlist-launcher').isVisible()).toBe(true)
    const last = list.locator('button.wishlist-page__remove').last()
    expect(await last.textContent()).toBe(text.remove)
    let reached = false
    for (let i = 0; i < 60 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = await last.evaluate((b) => b === document.activeElement)
    }
    expect(reached).toBe(true)
    // Scrolling and the launcher stepping aside settle within a frame or two.
    await expect
      .poll(() =>
        last.evaluate((b) => {
          const r = b.getBoundingClientRect()
          const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)
          return r.bottom <= innerHeight && r.top >= 0 && hit !== null && b.contains(hit)
        }),
      )
      .toBe(true)
    // The viewport as the shopper sees it: the focused button clear of the launcher.
    await shot(page, `shopper-wishlist-last-remove-${locale}-375`, false)
    // The launcher comes back once focus moves on, and can be reached itself.
    for (let i = 0; i < 10; i++) {
      await page.keyboard.press('Tab')
      if (await page.locator('.wishlist-launcher').evaluate((a) => a === document.activeElement)) break
    }
    expect(await page.locator('.wishlist-launcher').evaluate((a) => a === document.activeElement)).toBe(true)
    expect(await page.locator('.wishlist-launcher').evaluate((a) => getComputedStyle(a).opacity)).toBe('1')
  })

  test('a failed load, remove and share say so in text, with the reason', async () => {
    const { ip, guestId } = newShopper()
    await giftList(ip, guestId)
    const page = await openContext(375, { ip, guestId, locale })
    // One request left: the page itself; the list read is refused.
    await spend(ip, 1)
    await page.goto(`${storefrontUrl}${PREFIX}`)
    const list = page.locator('[data-wishlist-guest-list]')
    await expect.poll(() => list.getAttribute('aria-busy'), POLL).toBe('false')
    expect(await list.locator('.wishlist-page__error').textContent()).toBe(text.loadFailed)
    await expect.poll(() => assertive(page).textContent(), POLL).toBe(text.loadFailed)
    await noSideScroll(page, 'failed load')
    await accessible(page, 'failed load')

    // A new window: the page loads, then its remove and share are refused.
    const again = newShopper().ip
    await page.context().addCookies([{ name: 'ip', value: again, url: storefrontUrl }])
    await page.goto(`${storefrontUrl}${PREFIX}`)
    await expect.poll(() => list.locator('li.wishlist-page__item').count(), POLL).toBe(4)
    await spend(again)
    await list.locator('li[data-product-id="7003"] button.wishlist-page__remove').click()
    const status = list.locator('.wishlist-page__status')
    await expect.poll(() => status.textContent(), POLL).toBe(text.removeFailed('Canvas tote'))
    expect(await status.getAttribute('role')).toBe('status')
    expect(await list.locator('li.wishlist-page__item').count()).toBe(4)
    await list.getByRole('button', { name: text.share, exact: true }).click()
    await expect.poll(() => status.textContent(), POLL).toBe(text.shareFailed)
    await noSideScroll(page, 'failed share')
    await accessible(page, 'failed share')
  })
})
