/**
 * The app's storefront impact that a test can hold: a guest's page view makes no request to
 * the service until the shopper acts (a heart, scrolling to the reviews), or it is answered
 * from the browser's cache: counted at the app proxy of the Dawn-like store
 * (helpers/impact-store.ts). Lighthouse's score with and without the app is a measurement:
 * `npm run bench:storefront-impact` (bench/storefront-lighthouse.ts).
 */
import type { Browser, BrowserContext, Page, Response } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type DawnStore, type PageName, PRODUCT } from './helpers/dawn-store.js'
import { type ImpactStore, startImpactStore } from './helpers/impact-store.js'

let impact: ImpactStore
let browser: Browser
let store: DawnStore

beforeAll(async () => {
  impact = await startImpactStore()
  ;({ browser, store } = impact)
}, 120_000)
afterAll(() => impact?.close())

describe("a guest's page view", () => {
  let context: BrowserContext
  let page: Page
  afterAll(() => context?.close())

  /** Opens a page as the shopper would and waits until the widget has painted and the network is quiet: what reached the service. */
  async function view(name: PageName): Promise<string[]> {
    store.proxied.length = 0
    await page.goto(store.pageUrl(name, true))
    await page.evaluate(() => (window as unknown as { Wishlist: { ready: Promise<void> } }).Wishlist.ready)
    await page.waitForLoadState('networkidle')
    return [...store.proxied]
  }
  /** Scrolls the product's reviews into view and waits until they are drawn: what reached the service. */
  async function scrollToReviews(): Promise<string[]> {
    store.proxied.length = 0
    const reviews = page.locator('[data-reviews-product-id]')
    await reviews.scrollIntoViewIfNeeded()
    await expect.poll(() => reviews.getAttribute('data-reviews-state')).toBe('ready')
    await page.waitForLoadState('networkidle')
    return [...store.proxied]
  }
  /** A fresh browser profile on a phone's screen, noting each app-proxy answer's Cache-Control. */
  async function freshBrowser(caching: Map<string, string>): Promise<void> {
    await context?.close()
    context = await browser.newContext({ viewport: { width: 412, height: 823 } })
    page = await context.newPage()
    page.setDefaultTimeout(15_000)
    page.on('response', (r: Response) => {
      const url = new URL(r.url())
      if (url.pathname.startsWith('/apps/wishlist/'))
        caching.set(`${r.request().method()} ${url.pathname}${url.search}`, r.headers()['cache-control'] ?? '')
    })
  }
  const heart = (handle: string) => page.locator(`[data-wishlist-handle="${handle}"] button.wl-heart`).first()
  const reviewsSummary = `GET /apps/wishlist/api/v1/products/${PRODUCT.id}/reviews/summary`
  const reviewsList = `GET /apps/wishlist/api/v1/products/${PRODUCT.id}/reviews?per_page=5`

  test('asks the service nothing until the shopper acts, or is answered from the cache; a guest list is never shared', async () => {
    const caching = new Map<string, string>()
    await freshBrowser(caching)

    // A new guest: nothing saved, so nothing to ask; the hearts are there, unpressed.
    expect(await view('home')).toEqual([])
    expect(await heart('wool-scarf').getAttribute('aria-pressed')).toBe('false')
    expect(await view('collection')).toEqual([])
    // A product page: its reviews, below the fold on a phone, are read when the shopper scrolls
    // to them; they are public reads the browser keeps, so the next view reads nothing.
    expect(await view('product')).toEqual([])
    expect((await scrollToReviews()).sort()).toEqual([reviewsSummary, reviewsList])
    for (const read of [reviewsSummary, reviewsList]) expect(caching.get(read)).toMatch(/^public, max-age=\d+/)
    expect(await page.locator('[data-reviews-product-id] .wl-review').count()).toBe(3)
    expect(await view('product')).toEqual([])
    expect(await scrollToReviews()).toEqual([])
    expect(await page.locator('[data-reviews-product-id] .wl-review').count()).toBe(3)

    // The shopper acts: one write.
    await view('collection')
    store.proxied.length = 0
    await heart('wool-scarf').click()
    await expect.poll(() => store.proxied).toEqual(['POST /apps/wishlist/v1/wishlists/me/items'])
    await expect.poll(() => heart('wool-scarf').getAttribute('aria-pressed')).toBe('true')
    await page.waitForLoadState('networkidle')

    // The same guest on the next pages: the list comes from what this browser kept.
    expect(await view('home')).toEqual([])
    expect(await heart('wool-scarf').getAttribute('aria-pressed')).toBe('true')
    expect(await view('product')).toEqual([])
    expect(await view('collection')).toEqual([])
    expect(await heart('wool-scarf').getAttribute('aria-pressed')).toBe('true')

    // A returning guest whose browser kept the guest id but not the list (saved by an older
    // widget, say): read once, privately (no shared cache may keep a guest's list), then kept.
    const guest = await page.evaluate(() => [localStorage.getItem('wishlist:guest-id'), localStorage.getItem('wishlist:guest-items')])
    await freshBrowser(caching)
    await page.addInitScript(([id, items]) => {
      if (sessionStorage.getItem('seeded')) return
      sessionStorage.setItem('seeded', '1')
      localStorage.setItem('wishlist:guest-id', id ?? '')
      localStorage.setItem('wishlist:guest-items', items ?? '[]')
    }, guest)
    const listRead = 'GET /apps/wishlist/v1/wishlists/me?limit=200&offset=0'
    expect(await view('home')).toEqual([listRead])
    expect(caching.get(listRead)).toBe('private, no-store')
    expect(await heart('wool-scarf').getAttribute('aria-pressed')).toBe('true')
    expect(await view('home')).toEqual([])
    expect(await heart('wool-scarf').getAttribute('aria-pressed')).toBe('true')

    // A logged-in shopper (the theme says so): their list is read, privately, without asking first who they are.
    await freshBrowser(caching)
    await context.addCookies([{ name: 'customer_id', value: '5001', url: store.url }])
    expect(await view('home')).toEqual([listRead])
    expect(caching.get(listRead)).toBe('private, no-store')
  })
})
