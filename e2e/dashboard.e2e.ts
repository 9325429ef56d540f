/**
 * The merchant dashboard (apps/dashboard) at /dashboard in Chromium against the real
 * server: sign in, analytics, API keys, settings, webhooks and review moderation. Every
 * check against the API goes through @wishlist/sdk over HTTP, like a merchant's backend.
 * Screenshots of each screen land in e2e/screenshots/ (gitignored) for review.
 *
 * One browser page for the whole file; the tests run in order and build on each other.
 */
import { mkdirSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createWishlistClient, isWishlistApiError, type WishlistClient } from '@wishlist/sdk'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { seedAnalytics } from '../apps/server/src/modules/analytics/analytics.seed.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), 'screenshots')

let env: Env
let browser: Browser
let page: Page
let api: WishlistClient
let receiver: Server
const pageErrors: string[] = []
const received: { headers: IncomingHttpHeaders; body: { event?: string; data?: Record<string, unknown> } }[] = []

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  ;[env, browser] = await Promise.all([startEnv({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }), launchChromium()])
  api = createWishlistClient({ baseUrl: env.baseUrl, credentials: { apiKey: env.adminKey.keyId, apiSecret: env.adminKey.secret } })
  // A simulated year of wishlist activity, so the overview has something to show.
  const shop = await api.admin.shop()
  await seedAnalytics(env.testApp.storage.db, shop.id, { events: 4000, now: Date.now(), seed: 9 })

  receiver = createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')))
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(raw || '{}') })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  page = await context.newPage()
  // Script errors and console errors (a CSP violation is one) fail the run; the deliberate
  // failed sign-in logs its 401 and is the only expected one.
  page.on('pageerror', (err) => pageErrors.push(err.message))
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().includes('status of 401')) pageErrors.push(msg.text())
  })
})

afterAll(async () => {
  await browser?.close()
  await new Promise((r) => receiver?.close(r))
  await env?.close()
})

const shot = (name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true })
const heading = () => page.getByRole('heading', { level: 1 })
async function go(section: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dashboard sections' }).getByRole('link', { name: section }).click()
  await expect.poll(() => heading().textContent()).toBe(section)
}

describe('merchant dashboard', () => {
  test('signs in with an admin key; a wrong secret is refused; a reload keeps the session', async () => {
    await page.goto(`${env.baseUrl}/dashboard`)
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('apiKey')
    await page.getByLabel('API key').fill(env.adminKey.keyId)
    await page.getByLabel('Secret').fill('sk_wrong')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('INVALID_CREDENTIALS')
    await shot('sign-in')

    await page.getByLabel('Secret').fill(env.adminKey.secret)
    await page.getByLabel('Secret').press('Enter')
    await expect.poll(() => heading().textContent()).toBe('Overview')
    expect(await page.getByTestId('shop-domain').textContent()).toBe((await api.admin.shop()).domain)
    // The secret never leaves memory; only the token is kept for the tab.
    const stored = await page.evaluate(() => JSON.stringify(sessionStorage))
    expect(stored).not.toContain(env.adminKey.secret)

    await page.reload()
    await expect.poll(() => heading().textContent()).toBe('Overview')
  })

  test('overview: cards follow the period, the chart and the top products match the API', async () => {
    const cards = async () => [await page.getByTestId('stat-total').textContent(), await page.getByTestId('stat-shoppers').textContent()]
    const fmt = (n: number) => new Intl.NumberFormat('en-US').format(n)
    const month = await api.analytics.overview({ period: '30d' })
    await expect.poll(cards).toEqual([fmt(month.totalWishlistedItems), fmt(month.activeShoppers)])

    const daily = await api.analytics.daily({ period: '30d' })
    expect(await page.locator('[data-testid="daily-chart"] rect.bar.added').count()).toBe(daily.days.length)
    const top = await api.analytics.topProducts({ limit: 10 })
    expect(top.products.length).toBeGreaterThan(0)
    const firstRow = page.locator('[data-testid="top-products"] tbody tr').first()
    expect(await firstRow.locator('td').nth(1).textContent()).toBe(top.products[0]?.productId)
    await shot('overview')

    await page.getByRole('radio', { name: '7 days' }).check()
    const week = await api.analytics.overview({ period: '7d' })
    await expect.poll(cards).toEqual([fmt(week.totalWishlistedItems), fmt(week.activeShoppers)])
    await expect.poll(() => page.locator('[data-testid="daily-chart"] rect.bar.added').count()).toBe(7)
  })

  test('API keys: a created key works with the API at once; a revoked one stops', async () => {
    await go('API keys')
    await page.getByLabel('Name').fill('Shop backend')
    await page.getByLabel('Scope').selectOption('admin')
    await page.getByRole('button', { name: 'Create key' }).click()
    await page.getByTestId('new-key').waitFor()
    const keyId = await page.getByTestId('new-key-id').inputValue()
    const secret = await page.getByTestId('new-key-secret').inputValue()
    expect(keyId).toMatch(/^ak_/)
    expect(secret).toMatch(/^sk_/)
    // Focus moved to the shown-once panel so screen readers read it.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('Shop backend')
    await expect.poll(() => page.locator('[data-testid="api-keys"] tbody tr', { hasText: keyId }).count()).toBe(1)
    await shot('api-keys')

    const exchanged = await api.auth.token({ api_key: keyId, api_secret: secret })
    expect(exchanged.scope).toBe('admin')
    const asNewKey = createWishlistClient({ baseUrl: env.baseUrl, credentials: { token: exchanged.token } })
    expect((await asNewKey.admin.shop()).domain).toBe((await api.admin.shop()).domain)

    await page.getByRole('button', { name: 'I have stored it' }).click()
    expect(await page.getByTestId('new-key').count()).toBe(0)
    await page.getByRole('button', { name: 'Revoke key Shop backend' }).click()
    const dialog = page.getByRole('dialog', { name: 'Revoke Shop backend?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Revoke key' }).click()
    await expect.poll(() => page.getByTestId('keys-status').textContent()).toContain(`Key ${keyId} revoked.`)
    await expect.poll(() => page.locator('[data-testid="api-keys"] tbody tr', { hasText: keyId }).count()).toBe(0)
    const refused = await api.auth.token({ api_key: keyId, api_secret: secret }).catch((e: unknown) => e)
    expect(isWishlistApiError(refused, 'INVALID_CREDENTIALS')).toBe(true)
  })

  test('settings: toggles and the share-link lifetime reach the API; the storefront key rotates after confirmation', async () => {
    await go('Settings')
    expect(await page.getByTestId('plan').textContent()).toBe('scale')
    const autoApprove = page.getByLabel('Publish new reviews without moderation')
    expect(await autoApprove.isChecked()).toBe(true)
    await autoApprove.uncheck()
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Publish new reviews without moderation: off.')
    expect((await api.admin.shop()).settings.reviews_auto_approve).toBe(false)

    await page.getByLabel('Share-link lifetime (days)').fill('7')
    await page.getByRole('button', { name: 'Save lifetime' }).click()
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Share links now last 7 days.')
    expect((await api.admin.shop()).settings.share_link_ttl_days).toBe(7)

    const before = await page.getByTestId('storefront-key').inputValue()
    await page.getByRole('button', { name: 'Rotate storefront key…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rotate the storefront key?' })
    // Cancel first: nothing changes, and focus returns to the button.
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Rotate storefront key…')
    expect((await api.admin.shop()).storefrontKey).toBe(before)
    await page.getByRole('button', { name: 'Rotate storefront key…' }).click()
    await dialog.getByRole('button', { name: 'Rotate key' }).click()
    await expect.poll(() => page.getByTestId('storefront-key').inputValue()).not.toBe(before)
    expect((await api.admin.shop()).storefrontKey).toBe(await page.getByTestId('storefront-key').inputValue())
    await shot('settings')
  })

  test('webhooks: create with the secret shown once, send a test, see it in the deliveries log', async () => {
    await go('Webhooks')
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/wishlist`
    await page.getByLabel('Endpoint URL').fill(url)
    await page.getByLabel('wishlist.product.back_in_stock').check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByTestId('new-webhook').waitFor()
    expect(await page.getByTestId('new-webhook-secret').inputValue()).toMatch(/^whsec_/)
    const [webhook] = (await api.webhooks.list()).webhooks
    expect(webhook?.url).toBe(url)
    expect(webhook?.events.sort()).toEqual(['wishlist.item.added', 'wishlist.item.removed', 'wishlist.product.back_in_stock'])

    const card = page.getByTestId(`webhook-${webhook?.webhookId}`)
    await card.getByRole('button', { name: 'Send test event' }).click()
    await expect.poll(() => card.getByRole('status').first().textContent()).toMatch(/Test delivered: the endpoint answered 204/)
    const row = card.locator('[data-testid="deliveries"] tbody tr').first()
    await expect.poll(() => row.textContent()).toContain('webhook.test')
    expect(await row.locator('td').nth(1).textContent()).toBe('succeeded')
    expect(await row.locator('td').nth(2).textContent()).toBe('204')
    expect(received.map((r) => r.body.event)).toEqual(['webhook.test'])
    expect(received[0]?.headers['webhook-signature']).toMatch(/^v1,/)
    await page.getByRole('button', { name: 'I have stored it' }).click()
    await shot('webhooks')
  })

  test('reviews: a pending review submitted through the API is approved, answered and then public', async () => {
    const { storefrontKey } = await api.admin.shop()
    const shopper = createWishlistClient({ baseUrl: env.baseUrl, credentials: { storefrontKey } })
    const submitted = await shopper.reviews.submit({
      productId: '1000002',
      customerEmail: 'ana@example.com',
      customerName: 'Ana',
      rating: 4,
      title: 'Warm and soft',
      body: 'Bought two; the second for my sister.',
    })
    expect(submitted.status).toBe('pending')
    await shopper.reviews.submit({ productId: '1000003', customerEmail: 'bo@example.com', customerName: 'Bo', rating: 2, body: 'Runs small.' })
    expect((await shopper.reviews.list('1000002')).data).toEqual([])

    await go('Reviews')
    const item = page.getByTestId(`review-${submitted.id}`)
    await item.waitFor()
    await page.getByLabel('Status').selectOption('pending')
    await page.getByLabel('Product id').fill('1000002')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => page.locator('ol.reviews > li').count()).toBe(1)
    await shot('reviews')

    await item.getByRole('button', { name: 'Approve' }).click()
    await expect.poll(() => page.getByTestId('reviews-status').textContent()).toContain(`Review ${submitted.id} approved.`)
    await expect.poll(async () => (await shopper.reviews.list('1000002')).data.map((r) => r.title)).toEqual(['Warm and soft'])

    await page.getByLabel('Status').selectOption('')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    expect(await item.getByLabel('Public reply to Ana').isVisible()).toBe(false)
    await item.getByRole('button', { name: 'Reply', exact: true }).click()
    await item.getByLabel('Public reply to Ana').fill('Thank you, Ana!')
    await item.getByRole('button', { name: 'Publish reply' }).click()
    await expect.poll(async () => (await shopper.reviews.list('1000002')).data[0]?.replyBody).toBe('Thank you, Ana!')
    await expect.poll(() => item.locator('blockquote').textContent()).toContain('Thank you, Ana!')
    expect(await item.getByLabel('Public reply to Ana').isVisible()).toBe(false)
  })

  test('fits a phone (375 px): no sideways scrolling, every section reachable', async () => {
    await page.setViewportSize({ width: 375, height: 812 })
    for (const section of ['Overview', 'Settings', 'API keys', 'Webhooks', 'Reviews']) {
      await go(section)
      await page.waitForLoadState('networkidle')
      expect(await page.evaluate(() => document.documentElement.scrollWidth), section).toBeLessThanOrEqual(375)
    }
    await go('Overview')
    await page.getByTestId('daily-chart').waitFor()
    await shot('overview-phone')
    await go('Reviews')
    await shot('reviews-phone')
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  test('sign out forgets the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await page.reload()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
  })

  test('below Growth, the multi-wishlist switch is disabled and says why', async () => {
    const starter = await env.testApp.app.services.shops.create({ domain: 'starter-shop.myshopify.com', plan: 'starter' })
    await page.getByLabel('API key').fill(starter.apiKey.keyId)
    await page.getByLabel('Secret').fill(starter.apiKey.secret)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByTestId('shop-domain').textContent()).toBe('starter-shop.myshopify.com')
    await go('Settings')
    const multi = page.getByLabel('Multiple wishlists per customer')
    expect(await multi.isDisabled()).toBe(true)
    const help = await page.locator(`#${await multi.getAttribute('aria-describedby')}`).textContent()
    expect(help).toContain('Needs the Growth plan or above (this shop is on starter)')
    await shot('settings-starter')
    expect(pageErrors).toEqual([])
  })
})
