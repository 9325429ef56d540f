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
})
afterEach(() => context.close())

const items = () => page.locator('[data-testid="react-items"] li')
const names = () => page.locator('[data-testid="react-items"] [data-testid="react-item-name"]')

async function openDemo(session?: { customerId: string; token: string }): Promise<void> {
  if (session) await page.addInitScript((s) => sessionStorage.setItem('demo:session', JSON.stringify(s)), session)
  await page.goto(`${env.baseUrl}/demo`)
  await page.locator('[data-testid="react-count"]').waitFor()
}

describe('React demo (wishlist-service-sdk/react)', () => {
  test('add an item, reload: it persists; the widget on the page agrees', async () => {
    await openDemo()
    await page.getByTestId('react-add-1000002').click()
    await expect.poll(() => items().count()).toBe(1)
    await page.waitForLoadState('networkidle')
    await page.reload()
    await expect.poll(() => names().allTextContents()).toEqual(['Wool beanie'])
    await expect.poll(() => page.locator('[data-wishlist-product-id="1000002"] button').getAttribute('aria-pressed')).toBe('true')
  })

  test('the React app and the widget agree without a reload, both ways', async () => {
    await openDemo()
    const heart = (id: string) => page.locator(`[data-wishlist-product-id="${id}"] button.wl-heart`)
    await expect.poll(() => heart('1000002').getAttribute('aria-pressed')).toBe('false')
    // React adds: the widget's heart and the header count follow.
    await page.getByTestId('react-add-1000002').click()
    await expect.poll(() => heart('1000002').getAttribute('aria-pressed')).toBe('true')
    await expect.poll(() => page.locator('header [data-wishlist-count]').textContent()).toBe('1')
    // The widget adds: the React list follows.
    await heart('1000005').click()
    await expect.poll(() => names().allTextContents()).toEqual(['Rain jacket', 'Wool beanie'])
    expect(await page.getByTestId('react-count').textContent()).toBe('2')
    // React removes: the widget's heart follows.
    await items().filter({ hasText: 'Wool beanie' }).getByRole('button', { name: 'Remove' }).click()
    await expect.poll(() => heart('1000002').getAttribute('aria-pressed')).toBe('false')
    await expect.poll(() => page.locator('header [data-wishlist-count]').textContent()).toBe('1')
  })

  test('edit quantity and note of a saved item: saved at once, kept after a reload', async () => {
    await openDemo()
    await page.getByTestId('react-add-1000003').click()
    await expect.poll(() => items().count()).toBe(1)
    await page.getByTestId('react-quantity-1000003').fill('3')
    const note = page.getByTestId('react-note-1000003')
    await note.fill('  Size M, navy  ')
    await note.press('Enter')
    await page.waitForLoadState('networkidle')
    await page.reload()
    await expect.poll(() => page.getByTestId('react-quantity-1000003').inputValue()).toBe('3')
    await expect.poll(() => page.getByTestId('react-note-1000003').inputValue()).toBe('Size M, navy')
  })

  test('a failing call rolls back and shows the error', async () => {
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
    await page.getByTestId('react-add-1000003').click()
    await expect.poll(() => page.getByTestId('react-error').textContent()).toContain('INTERNAL_ERROR')
    expect(await items().count()).toBe(0)
    expect(await page.getByTestId('react-count').textContent()).toBe('0')
  })

  test('a customer token given to the page: guest items are merged on login', async () => {
    await openDemo()
    await page.getByTestId('react-add-1000001').click()
    await page.getByTestId('react-add-1000004').click()
    await expect.poll(() => items().count()).toBe(2)
    await page.waitForLoadState('networkidle')

    const token = await env.customerToken('3003')
    await page.evaluate((s) => sessionStorage.setItem('demo:session', JSON.stringify(s)), { customerId: '3003', token })
    const merges: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/merge')) merges.push(r.url())
    })
    await page.reload()
    // Whichever of the widget and the React app runs first performs the merge; the other waits for it.
    await expect.poll(() => items().count()).toBe(2)
    await expect.poll(() => page.evaluate(() => localStorage.getItem('wishlist:guest-items'))).toBeNull()
    expect(merges).toHaveLength(1)
    const list = await env.testApp.call('GET', '/v1/wishlists/3003', { token })
    expect(list.body.data.items.map((i: { productId: string }) => i.productId).sort()).toEqual(['1000001', '1000004'])
  })
})
