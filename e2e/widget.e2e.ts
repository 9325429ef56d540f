import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

let env: Env
let browser: Browser
let context: BrowserContext
let page: Page

beforeAll(async () => {
  ;[env, browser] = await Promise.all([startEnv(), launchChromium()])
})
afterAll(async () => {
  await browser?.close()
  await env?.close()
})
beforeEach(async () => {
  context = await browser.newContext()
  page = await context.newPage()
  // Layout shifts of the storefront part of the page (the React demo in the aside grows
  // as its list does, by design), from the very start of every page load.
  await page.addInitScript(() => {
    const w = window as unknown as { __cls: number; __shifted: string[] }
    w.__cls = 0
    w.__shifted = []
    type Shift = { value: number; hadRecentInput: boolean; sources: { node: Node | null }[] }
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as Shift[]) {
        if (entry.hadRecentInput) continue
        const nodes = entry.sources.map((s) => s.node).filter((n): n is Element => n instanceof Element && !n.closest('#react-app'))
        if (nodes.length === 0) continue
        w.__cls += entry.value
        w.__shifted.push(...nodes.map((n) => n.outerHTML.slice(0, 80)))
      }
    }).observe({ type: 'layout-shift', buffered: true })
  })
})
afterEach(() => context.close())

const heart = (productId: string) => page.locator(`[data-wishlist-product-id="${productId}"] button.wl-heart`)
const badge = () => page.locator('header [data-wishlist-count]')

async function openDemo(): Promise<void> {
  await page.goto(`${env.baseUrl}/demo`)
  await page.waitForFunction(() => document.querySelectorAll('button.wl-heart').length === 6)
}

describe('widget', () => {
  test('click a heart, reload: the state persists (guest mode); keyboard works; no layout shift', async () => {
    await openDemo()
    await expect.poll(() => heart('1000001').getAttribute('aria-pressed')).toBe('false')
    expect(await heart('1000001').getAttribute('aria-label')).toBe('Add Canvas tote to wishlist')
    await heart('1000001').click()
    await expect.poll(() => heart('1000001').getAttribute('aria-pressed')).toBe('true')
    await expect.poll(() => badge().textContent()).toBe('1')

    await heart('1000002').focus()
    await page.keyboard.press('Space')
    await expect.poll(() => heart('1000002').getAttribute('aria-pressed')).toBe('true')
    await expect.poll(() => badge().textContent()).toBe('2')
    // Let the server writes land before reloading.
    await page.waitForLoadState('networkidle')

    await page.reload()
    await page.waitForFunction(() => document.querySelectorAll('button.wl-heart[aria-pressed="true"]').length === 2)
    expect(await heart('1000001').getAttribute('aria-label')).toBe('Remove Canvas tote from wishlist')
    await expect.poll(() => badge().textContent()).toBe('2')
    const guestId = await page.evaluate(() => localStorage.getItem('wishlist:guest-id'))
    expect(guestId).toMatch(/^g_[0-9a-f]{32}$/) // 128 random bits: a guest id is a bearer secret
    const shifts = await page.evaluate(() => (window as unknown as { __shifted: string[] }).__shifted)
    expect(shifts).toEqual([])
  })

  test('log in: the guest items are merged into the customer, once', async () => {
    await openDemo()
    await heart('1000003').click()
    await heart('1000004').click()
    await expect.poll(() => badge().textContent()).toBe('2')
    await page.waitForLoadState('networkidle')

    const merges: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/merge')) merges.push(r.url())
    })
    await page.getByRole('button', { name: 'Log in as customer 1001' }).click()
    await page.waitForURL(`${env.baseUrl}/demo`)
    await page.waitForFunction(() => document.querySelectorAll('button.wl-heart[aria-pressed="true"]').length === 2)
    await expect.poll(() => page.locator('#who').textContent()).toBe('Customer 1001')
    expect(await page.evaluate(() => [localStorage.getItem('wishlist:guest-id'), localStorage.getItem('wishlist:guest-items')])).toEqual([
      null,
      null,
    ])
    // The widget and the React app both run on this page: one merge between them.
    expect(merges).toHaveLength(1)
    await expect.poll(() => page.locator('[data-testid="react-items"] li').count()).toBe(2)

    const token = await env.customerToken('1001')
    const list = await env.testApp.call('GET', '/v1/wishlists/1001', { token })
    expect(list.body.data.items.map((i: { productId: string }) => i.productId).sort()).toEqual(['1000003', '1000004'])

    await page.reload()
    await page.waitForFunction(() => document.querySelectorAll('button.wl-heart[aria-pressed="true"]').length === 2)
    expect(merges).toHaveLength(1)
  })

  test('a failing call rolls back the heart and flags the error', async () => {
    await openDemo()
    await page.route('**/v1/wishlists/*/items', (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 500,
            contentType: 'application/json',
            body: JSON.stringify({ ok: false, error: { code: 'INTERNAL_ERROR', message: 'boom' } }),
          })
        : route.continue(),
    )
    const errors = page.evaluate(
      () =>
        new Promise<string>((resolve) =>
          document.addEventListener('wishlist:error', (e) => resolve((e as CustomEvent<{ error: { code: string } }>).detail.error.code), {
            once: true,
          }),
        ),
    )
    await heart('1000005').click()
    expect(await errors).toBe('INTERNAL_ERROR')
    await expect.poll(() => heart('1000005').getAttribute('aria-pressed')).toBe('false')
    expect(await page.locator('[data-wishlist-product-id="1000005"]').getAttribute('data-wishlist-error')).toBe('INTERNAL_ERROR')
    expect(await badge().textContent()).toBe('0')
  })

  test('a guest with more saved items than one page: every heart and the count are right', async () => {
    const guestId = 'g_e2e_long_list'
    const headers = { 'x-storefront-key': env.storefrontKey, 'x-guest-id': guestId }
    // The demo's first product is the oldest of 230 saved items, beyond the newest 200.
    for (const p of ['1000001', ...Array.from({ length: 229 }, (_, i) => String(2_000_000 + i))]) {
      expect((await env.testApp.call('POST', `/v1/wishlists/${guestId}/items`, { headers, body: { product_id: p } })).status).toBe(201)
    }
    await page.addInitScript((id) => localStorage.setItem('wishlist:guest-id', id), guestId)
    await openDemo()
    await expect.poll(() => badge().textContent()).toBe('230')
    expect(await heart('1000001').getAttribute('aria-pressed')).toBe('true')
    // Toggling it removes it (it is known to be saved).
    const removed = page.waitForResponse((r) => r.request().method() === 'DELETE')
    await heart('1000001').click()
    await expect.poll(() => badge().textContent()).toBe('229')
    expect((await removed).status()).toBe(200)
    const held = await env.testApp.call('GET', `/v1/wishlists/${guestId}?limit=200&offset=0`, { headers })
    expect(held.body.data.total).toBe(229)
  })

  test('a click while the wishlist loads stays, though the load was answered before it', async () => {
    // A returning guest whose list this browser has not kept: the page reads it from the service.
    await page.addInitScript(() => localStorage.setItem('wishlist:guest-id', 'g_e2e_click_while_loading'))
    let releaseLoad = () => {}
    const loadHeld = new Promise<void>((r) => (releaseLoad = r))
    await page.route('**/v1/wishlists/**', async (route) => {
      if (route.request().method() !== 'GET') return route.continue()
      const answer = await route.fetch() // the server has answered (an empty list) …
      await loadHeld // … and the answer reaches the page only after the click below
      await route.fulfill({ response: answer })
    })
    await openDemo()
    const added = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/items'))
    await heart('1000003').click()
    await expect.poll(() => heart('1000003').getAttribute('aria-pressed')).toBe('true')
    await added
    releaseLoad()
    // The held load has now been applied and painted (its answer did not show the click).
    await page.evaluate(() => (window as unknown as { Wishlist: { ready: Promise<void> } }).Wishlist.ready)
    expect(await heart('1000003').getAttribute('aria-pressed')).toBe('true')
    expect(await badge().textContent()).toBe('1')
  })

  test('reviews: escaped text, star summary and schema.org AggregateRating', async () => {
    const sf = { 'x-storefront-key': env.storefrontKey }
    const hostile = '<img src=x onerror="window.__xss=1">'
    await env.testApp.call('POST', '/api/v1/reviews', {
      headers: sf,
      body: { productId: '1000001', customerEmail: 'x@example.com', customerName: 'Mallory', rating: 2, title: 'Hmm', body: hostile },
    })
    await env.testApp.call('POST', '/api/v1/reviews', {
      headers: sf,
      body: { productId: '1000001', customerEmail: 'y@example.com', customerName: 'Yan', rating: 5, body: 'Sturdy bag' },
    })
    await openDemo()
    const reviews = page.locator('[data-reviews-product-id="1000001"]')
    await expect.poll(() => reviews.getAttribute('data-reviews-state')).toBe('ready')
    expect(await reviews.locator('.wl-review-body').allTextContents()).toEqual(['Sturdy bag', hostile])
    expect(await reviews.locator('img').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(await reviews.locator('.wl-summary').textContent()).toContain('3.5 · 2 reviews')
    const ld = JSON.parse((await reviews.locator('script[type="application/ld+json"]').textContent()) ?? '{}')
    expect(ld).toMatchObject({
      '@type': 'Product',
      name: 'Canvas tote',
      aggregateRating: { '@type': 'AggregateRating', ratingValue: 3.5, reviewCount: 2, bestRating: 5, worstRating: 1 },
    })
  })

  test("reviews: the shop's reply is labelled as the shop's", async () => {
    const sf = { 'x-storefront-key': env.storefrontKey }
    const created = await env.testApp.call('POST', '/api/v1/reviews', {
      headers: sf,
      body: { productId: '1000001', customerEmail: 'r@example.com', customerName: 'Rae', rating: 4, body: 'Runs small' },
    })
    const minted = await env.testApp.call('POST', '/v1/auth/token', {
      body: { api_key: env.adminKey.keyId, api_secret: env.adminKey.secret },
    })
    const replied = await env.testApp.call('PUT', `/api/v1/reviews/${created.body.id}/reply`, {
      token: minted.body.data.token,
      body: { body: 'Order one size up.' },
    })
    expect(replied.status).toBe(200)
    await openDemo()
    const reviews = page.locator('[data-reviews-product-id="1000001"]')
    await expect.poll(() => reviews.getAttribute('data-reviews-state')).toBe('ready')
    const reply = reviews.locator('.wl-review', { hasText: 'Runs small' }).locator('.wl-review-reply')
    expect(await reply.locator('.wl-review-reply-label').textContent()).toBe('Reply from the shop')
    expect(await reply.locator('p').textContent()).toBe('Order one size up.')
  })
})
