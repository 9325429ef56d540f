/**
 * The merchant dashboard (apps/dashboard) at /dashboard in Chromium against the real
 * server: sign in, analytics, API keys, settings, webhooks and review moderation. Every
 * check against the API goes through wishlist-service-sdk over HTTP, like a merchant's backend.
 * Screenshots of each screen land in e2e/screenshots/ (gitignored) for review; those the docs
 * show are copied into docs/images on purpose (`npm run screenshots -w e2e`).
 *
 * One browser page for the whole file; the tests run in order and build on each other.
 */
import { mkdirSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createWishlistClient, isWishlistApiError, type WishlistClient } from 'wishlist-service-sdk'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { seedAnalytics } from '../apps/server/src/cli/analytics-seed.js'
import { seriousViolations, WIDTHS } from './helpers/axe.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'
import { watchedPage } from './helpers/watched-page.js'

const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), 'screenshots')

let env: Env
let browser: Browser
let page: Page
let api: WishlistClient
let receiver: Server
const pageErrors: string[] = []
// Console errors a test provokes on purpose (the browser logs every failed request).
const expectedConsoleErrors: RegExp[] = [/status of 401/]
const received: { headers: IncomingHttpHeaders; body: { event?: string; data?: Record<string, unknown> } }[] = []

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  ;[env, browser] = await Promise.all([
    startEnv({ WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
    launchChromium(),
  ])
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

  // Script and console errors fail the run, except the failed requests tests provoke (expectedConsoleErrors).
  page = await watchedPage(browser, pageErrors, expectedConsoleErrors)
})

afterAll(async () => {
  await browser?.close()
  await new Promise((r) => receiver?.close(r))
  await env?.close()
})

/** The Reviews screen's summary line ("21 reviews; page 1 of 2."). */
const reviewsSummary = () => page.getByText(/^(\d+ reviews?; page \d+ of \d+\.|No reviews match\.|No reviews yet\.)$/)
/** What has keyboard focus: `tag#id "text"`, or BODY when focus was lost. */
const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement
    if (!el || el === document.body) return 'BODY'
    return `${el.tagName}${el.id ? `#${el.id}` : ''} "${(el.textContent ?? '').trim()}"`
  })
const shot = (name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true })
const heading = () => page.getByRole('heading', { level: 1 })
async function go(section: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dashboard sections' }).getByRole('link', { name: section }).click()
  await expect.poll(() => heading().textContent()).toBe(section)
}

/** Signs in with another shop's admin key (from the sign-in page) and waits for its dashboard. */
async function signInAs(key: { keyId: string; secret: string }, domain: string): Promise<void> {
  await page.getByLabel('API key').fill(key.keyId)
  await page.getByLabel('Secret').fill(key.secret)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect.poll(() => page.getByTestId('shop-domain').textContent()).toBe(domain)
}

describe('merchant dashboard', () => {
  test('signs in with an admin key; a wrong secret is refused; a reload keeps the session', async () => {
    await page.goto(`${env.baseUrl}/dashboard`)
    // The first page of a cold browser on a busy machine: up to 10 s.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name')), { timeout: 10_000 }).toBe('apiKey')
    await page.getByLabel('API key').fill(env.adminKey.keyId)
    await page.getByLabel('Secret').fill('sk_wrong')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('INVALID_CREDENTIALS')
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

  test('the page is served at /dashboard/index.html too; other paths below /dashboard stay 404 (screens are hash routes)', async () => {
    const index = await fetch(`${env.baseUrl}/dashboard/index.html`)
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await index.text()).toContain('<div id="root">')
    expect((await fetch(`${env.baseUrl}/dashboard/settings`)).status).toBe(404)
  })

  test('overview: cards follow the period, the chart and the top products match the API', async () => {
    const cards = async () => [await page.getByTestId('stat-total').textContent(), await page.getByTestId('stat-shoppers').textContent()]
    const fmt = (n: number) => new Intl.NumberFormat('en-US').format(n)
    const month = await api.analytics.overview({ period: '30d' })
    await expect.poll(cards).toEqual([fmt(month.totalWishlistedItems), fmt(month.activeShoppers)])

    const daily = await api.analytics.daily({ period: '30d' })
    expect(await page.locator('[data-testid="daily-chart"] rect.bar.added').count()).toBe(daily.days.length)
    // The last day is labelled; the cumulative line has an axis of its own, drawn (not two
    // stray numbers in the corners, which left it read against the bars' scale), and ends
    // where that axis puts the last day's total (interpolated between the axis's ticks).
    const lastDay = daily.days[daily.days.length - 1]!
    const dayLabels = await page.locator('[data-testid="daily-chart"] text[text-anchor="middle"]').allTextContents()
    expect(dayLabels.at(-1)).toBe(lastDay.date.slice(5))
    const ticks = await page
      .locator('[data-testid="daily-chart"] .total-tick')
      .evaluateAll((gs) => gs.map((g) => ({ v: Number(g.getAttribute('data-value')), y: Number(g.getAttribute('data-y')) })))
    expect(await page.getByTestId('total-axis').count()).toBe(1)
    expect(ticks.length).toBeGreaterThanOrEqual(3)
    const [lo, hi] = [ticks[0]!, ticks.at(-1)!]
    const expectedY = lo.y + ((lastDay.cumulative_total - lo.v) / (hi.v - lo.v)) * (hi.y - lo.y)
    const d = (await page.getByTestId('total-line').getAttribute('d')) ?? ''
    const lastY = Number(d.trim().split(/[ ,]/).at(-1))
    expect(Math.abs(lastY - expectedY)).toBeLessThan(1)
    const top = await api.analytics.topProducts({ limit: 10 })
    expect(top.products.length).toBeGreaterThan(0)
    const firstRow = page.locator('[data-testid="top-products"] tbody tr').first()
    expect(await firstRow.locator('td').nth(1).textContent()).toBe(top.products[0]?.productId)

    // What the wishlist sold (the seed's orders): the tiles and the per-product table match the API.
    const sold = await api.analytics.conversions({ period: '30d' })
    expect(sold.ordersInfluenced).toBeGreaterThan(0)
    await expect.poll(() => page.getByTestId('stat-orders').textContent()).toBe(fmt(sold.ordersInfluenced))
    expect(await page.getByTestId('stat-purchase-rate').textContent()).toBe(`${sold.wishlistToPurchaseRate.toFixed(2)} %`)
    expect(await page.getByTestId('stat-median-days').textContent()).toBe(
      sold.medianDaysToPurchase === null ? '—' : sold.medianDaysToPurchase.toFixed(1),
    )
    const revenueText = (await page.getByTestId('stat-revenue').textContent()) ?? ''
    expect(sold.revenueInfluenced.length).toBeGreaterThan(0)
    for (const r of sold.revenueInfluenced) {
      // Every currency is shown on its own, with its digits (never summed across currencies).
      const digits = r.amount.split('.')[1]?.length ?? 0
      const shown = new Intl.NumberFormat('en-US', {
        style: 'currency',
        currency: r.currency,
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      }).format(Number(r.amount))
      expect(revenueText).toContain(shown)
    }
    const sales = await api.analytics.topProducts({ limit: 100, sort: 'revenue' })
    expect(sales.products.length).toBeGreaterThan(0)
    const saleRows = page.locator('[data-testid="sales-products"] tbody tr')
    expect(await saleRows.count()).toBe(sales.products.length)
    const firstSale = sales.products[0]!
    // The seed leaves the catalog empty: the product's id, no handle.
    expect(firstSale.title).toBeNull()
    expect(await saleRows.first().locator('td').nth(0).textContent()).toBe(firstSale.productId)
    expect(await saleRows.first().locator('td').nth(1).textContent()).toBe('—')
    expect(await saleRows.first().locator('td').nth(3).textContent()).toBe(fmt(firstSale.purchases))
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('sales-csv').click()])
    expect(download.suggestedFilename()).toBe('wishlist-sales.csv')
    const csvPath = await download.path()
    const csv = (await import('node:fs')).readFileSync(csvPath, 'utf8').split('\r\n')
    expect(csv[0]).toBe('product_id,title,handle,wishlisted_by,purchases,currency,revenue')
    expect(csv[1]).toBe(
      `${firstSale.productId},,,${firstSale.wishlistCount},${firstSale.purchases},${firstSale.revenue[0]?.currency ?? ''},${firstSale.revenue[0]?.amount ?? ''}`,
    )
    await shot('overview')

    await page.getByRole('radio', { name: '7 days' }).check()
    const week = await api.analytics.overview({ period: '7d' })
    await expect.poll(cards).toEqual([fmt(week.totalWishlistedItems), fmt(week.activeShoppers)])
    await expect.poll(() => page.locator('[data-testid="daily-chart"] rect.bar.added').count()).toBe(7)
    // The screen-reader status reads as a sentence for every period.
    await expect.poll(() => page.getByText('Showing figures for the last 7 days.').count()).toBe(1)
    await page.getByRole('radio', { name: 'All time' }).check()
    await expect.poll(() => page.getByText('Showing figures for all time.').count()).toBe(1)
    await page.getByRole('radio', { name: '1 year' }).check()
    await expect.poll(() => page.getByText('Showing figures for the last year (365 days).').count()).toBe(1)
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
    // The key id is part of the button's name, so two keys of the same name stay apart.
    await page.getByRole('button', { name: `Revoke key Shop backend (${keyId})` }).click()
    const dialog = page.getByRole('dialog', { name: 'Revoke Shop backend?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Revoke key' }).click()
    await expect.poll(() => page.getByTestId('keys-status').textContent()).toContain(`Key ${keyId} revoked.`)
    await expect.poll(() => page.locator('[data-testid="api-keys"] tbody tr', { hasText: keyId }).count()).toBe(0)
    // The row and its focused button are gone: focus is on the list's heading, not <body>.
    await expect.poll(focused).toBe('H2#keys-heading "Keys"')
    const refused = await api.auth.token({ api_key: keyId, api_secret: secret }).catch((e: unknown) => e)
    expect(isWishlistApiError(refused, 'INVALID_CREDENTIALS')).toBe(true)
  })

  test('settings: toggles, the share-link lifetime and the page texts reach the API; the storefront key rotates after confirmation', async () => {
    await go('Settings')
    expect(await page.getByTestId('plan').textContent()).toBe('scale')
    const autoApprove = page.getByLabel('Publish new reviews without moderation')
    expect(await autoApprove.isChecked()).toBe(true)
    // With the keyboard: the switch is disabled while saving, and gets focus back after.
    await autoApprove.focus()
    await page.keyboard.press('Space')
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Publish new reviews without moderation: off.')
    expect((await api.admin.shop()).settings.reviews_auto_approve).toBe(false)
    await expect.poll(focused).toBe('INPUT#reviews_auto_approve ""')
    expect(await autoApprove.isChecked()).toBe(false)

    await page.getByLabel('Share-link lifetime (days)').fill('7')
    await page.getByLabel('Share-link lifetime (days)').press('Enter')
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Share links now last 7 days.')
    expect((await api.admin.shop()).settings.share_link_ttl_days).toBe(7)
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('ttl')
    expect(await page.getByLabel('Share-link lifetime (days)').inputValue()).toBe('7')

    // The currency, with the keyboard: typing a code picks it (passing EGP on the way: nothing is
    // saved before the button), Tab and Enter save it; "Not set" clears it.
    const currency = page.getByLabel('Store currency')
    const saveCurrency = page.getByRole('button', { name: 'Save currency' })
    await currency.focus()
    await page.keyboard.type('EUR')
    expect(await currency.inputValue()).toBe('EUR')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save currency')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Currency: EUR.')
    expect((await api.admin.shop()).settings.currency).toBe('EUR')
    expect(await currency.inputValue()).toBe('EUR')
    expect(await currency.locator('option:checked').textContent()).toBe('EUR · Euro')
    await currency.selectOption('')
    await saveCurrency.click()
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Currency: not set.')
    expect((await api.admin.shop()).settings.currency).toBeNull()

    // The pages' texts: JSON by language and key. A wrong key is named and stays in the box to be
    // corrected; what is stored (trimmed) is shown; empty clears.
    const texts = page.getByLabel('Your texts (JSON)')
    const saveTexts = page.getByRole('button', { name: 'Save page texts' })
    // The refused save is logged by the browser as a failed request.
    expectedConsoleErrors.push(/status of 400/)
    await texts.fill('{"fr": {"wishlistTitel": "Ma liste"}}')
    await saveTexts.click()
    await expect
      .poll(() => page.getByTestId('settings-status').textContent())
      .toContain('body.storefront_strings.fr.wishlistTitel is not a known string key')
    expect(await texts.inputValue()).toBe('{"fr": {"wishlistTitel": "Ma liste"}}')
    expect((await api.admin.shop()).settings.storefront_strings).toBeNull()
    await texts.fill('wishlistTitle: Ma liste')
    await saveTexts.click()
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Not a JSON object.' }).count()).toBe(1)
    expect(await texts.getAttribute('aria-invalid')).toBe('true')
    await texts.fill('{"fr": {"wishlistTitle": "  Mes coups de cœur "}}')
    await saveTexts.click()
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Page texts saved.')
    expect((await api.admin.shop()).settings.storefront_strings).toEqual({ fr: { wishlistTitle: 'Mes coups de cœur' } })
    await expect.poll(() => texts.inputValue()).toBe(JSON.stringify({ fr: { wishlistTitle: 'Mes coups de cœur' } }, null, 2))
    await texts.fill('')
    await saveTexts.click()
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Page texts cleared')
    expect((await api.admin.shop()).settings.storefront_strings).toBeNull()

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
    await expect.poll(focused).toBe('BUTTON "Rotate storefront key…"')
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
    expect(webhook?.events.sort()).toEqual([
      'wishlist.item.added',
      'wishlist.item.purchased',
      'wishlist.item.removed',
      'wishlist.product.back_in_stock',
    ])

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

  test('webhooks: a deletion is announced in the screen status, which outlives the card; focus goes to the list', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/second`
    await page.getByLabel('Endpoint URL').fill(url)
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByTestId('new-webhook').waitFor()
    await expect.poll(() => page.getByTestId('webhooks-status').textContent()).toMatch(/Webhook wh_\S+ created\./)
    await page.getByRole('button', { name: 'I have stored it' }).click()
    const second = (await api.webhooks.list()).webhooks.find((w) => w.url === url)
    const card = page.getByTestId(`webhook-${second?.webhookId}`)
    await card.getByRole('button', { name: 'Delete…' }).click()
    await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click()
    await expect.poll(() => card.count()).toBe(0)
    // The message outlives the card, and replaces the stale "created" one.
    await expect.poll(() => page.getByTestId('webhooks-status').textContent()).toContain('Endpoint deleted.')
    expect(await page.getByTestId('webhooks-status').textContent()).not.toContain('created.')
    await expect.poll(focused).toBe('H2#endpoints-heading "Endpoints"')
    expect((await api.webhooks.list()).webhooks.map((w) => w.url)).not.toContain(url)
  })

  test('webhooks: past 20 deliveries the card says so, and shows up to 100 on request', async () => {
    const [first] = (await api.webhooks.list()).webhooks
    const id = first?.webhookId ?? ''
    const before = (await api.webhooks.deliveries(id)).deliveries.length
    for (let i = before; i < 22; i++) await api.webhooks.test(id)
    await go('Reviews')
    await go('Webhooks')
    const card = page.getByTestId(`webhook-${id}`)
    const rows = card.locator('[data-testid="deliveries"] tbody tr')
    await expect.poll(() => rows.count()).toBe(20)
    expect(await card.getByText('Showing the 20 most recent deliveries.').count()).toBe(1)
    await card.getByRole('button', { name: 'Show up to 100' }).click()
    await expect.poll(() => rows.count()).toBe(22)
    expect(await card.getByText(/most recent deliveries/).count()).toBe(0)
    await expect.poll(focused).toBe('H4 "Recent deliveries"')
  })

  test('webhooks: a failed test says why in plain words, the raw error under its details', async () => {
    const refused = await api.webhooks.create({ url: 'http://127.0.0.1:1/closed', events: ['wishlist.item.added'] })
    await go('Reviews')
    await go('Webhooks')
    const card = page.getByTestId(`webhook-${refused.webhookId}`)
    await card.getByRole('button', { name: 'Send test event' }).click()
    await expect.poll(() => card.getByRole('alert').textContent()).toContain('Test not delivered: the connection was refused')
    expect(await card.locator('details').textContent()).toContain('ECONNREFUSED')
    await api.webhooks.delete(refused.webhookId)
  })

  test('webhooks: an endpoint deleted elsewhere leaves the list at the next action on it (404)', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/gone`
    const gone = await api.webhooks.create({ url, events: ['wishlist.item.added'] })
    await go('Reviews')
    await go('Webhooks')
    const goneCard = page.getByTestId(`webhook-${gone.webhookId}`)
    await goneCard.waitFor()
    await api.webhooks.delete(gone.webhookId)
    expectedConsoleErrors.push(/status of 404/)
    await goneCard.getByRole('button', { name: 'Send test event' }).click()
    await expect.poll(() => goneCard.count()).toBe(0)
    await expect.poll(() => page.getByTestId('webhooks-status').textContent()).toContain('no longer exists')
    await expect.poll(focused).toBe('H2#endpoints-heading "Endpoints"')
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
    await shopper.reviews.submit({
      productId: '1000003',
      customerEmail: 'bo@example.com',
      customerName: 'Bo',
      rating: 2,
      body: 'Runs small.',
    })
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

  test('reviews: removing the last review of the last page goes back a page, and focus goes to the summary', async () => {
    const { storefrontKey } = await api.admin.shop()
    const shopper = createWishlistClient({ baseUrl: env.baseUrl, credentials: { storefrontKey } })
    for (let i = 1; i <= 21; i++) {
      await shopper.reviews.submit({
        productId: '2000001',
        customerEmail: `buyer${i}@example.com`,
        customerName: `Buyer ${i}`,
        rating: 5,
        body: `Review number ${i}.`,
      })
    }
    await page.getByLabel('Status').selectOption('')
    await page.getByLabel('Product id').fill('2000001')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    const summary = reviewsSummary()
    await expect.poll(() => summary.textContent()).toBe('21 reviews; page 1 of 2.')
    await page.getByRole('button', { name: 'Next page' }).click()
    await expect.poll(() => summary.textContent()).toBe('21 reviews; page 2 of 2.')
    await expect.poll(() => page.locator('ol.reviews > li').count()).toBe(1)

    await page.locator('ol.reviews > li').getByRole('button', { name: 'Delete…' }).click()
    await page.getByRole('dialog', { name: 'Delete this review?' }).getByRole('button', { name: 'Delete review' }).click()
    await expect.poll(() => summary.textContent()).toBe('20 reviews; page 1 of 1.')
    await expect.poll(() => page.locator('ol.reviews > li').count()).toBe(20)
    // The deleted review took the focused button along: focus is on the summary.
    await expect.poll(focused).toBe('P "20 reviews; page 1 of 1."')
    expect((await api.reviews.admin.list({ product_id: '2000001' })).total).toBe(20)
  })

  test('reviews: the product filter takes a platform GID, as the API does', async () => {
    const summary = reviewsSummary()
    await page.getByLabel('Product id').fill('')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => summary.textContent()).not.toBe('20 reviews; page 1 of 1.')
    await page.getByLabel('Product id').fill('gid://shopify/Product/2000001')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => summary.textContent()).toBe('20 reviews; page 1 of 1.')
  })

  test('reviews: a removed reply is not offered again; an empty or failed reply stays in the box and says why; focus stays in the review', async () => {
    const { storefrontKey } = await api.admin.shop()
    const shopper = createWishlistClient({ baseUrl: env.baseUrl, credentials: { storefrontKey } })
    const review = await shopper.reviews.submit({
      productId: '2000002',
      customerEmail: 'cy@example.com',
      customerName: 'Cy',
      rating: 3,
      body: 'Fine.',
    })
    await api.reviews.admin.reply(review.id, 'Old reply, soon removed.')
    await page.getByLabel('Product id').fill('2000002')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    const item = page.getByTestId(`review-${review.id}`)
    await expect.poll(() => item.locator('blockquote').textContent()).toContain('Old reply, soon removed.')

    await item.getByRole('button', { name: 'Remove reply' }).click()
    await expect.poll(() => item.locator('blockquote').count()).toBe(0)
    await item.getByRole('button', { name: 'Reply', exact: true }).click()
    const box = item.getByLabel('Public reply to Cy')
    expect(await box.inputValue()).toBe('')

    await box.fill('   ')
    await item.getByRole('button', { name: 'Publish reply' }).click()
    await expect.poll(() => item.getByRole('alert').textContent()).toContain('spaces alone are not a reply')
    expect(await box.isVisible()).toBe(true)
    expect((await api.reviews.admin.list({ product_id: '2000002' })).data[0]?.replyBody).toBeNull()

    // A gateway error page (not the API's JSON): the box stays open with the text.
    expectedConsoleErrors.push(/status of 502/)
    await page.route('**/api/v1/reviews/*/reply', (route) =>
      route.fulfill({ status: 502, contentType: 'text/html', body: '<html>Bad gateway</html>' }),
    )
    await box.fill('Thanks, Cy.')
    await item.getByRole('button', { name: 'Publish reply' }).click()
    await expect.poll(() => item.getByRole('alert').textContent()).toBe('Not published: The server answered 502; try again shortly.')
    expect(await box.isVisible()).toBe(true)
    expect(await box.inputValue()).toBe('Thanks, Cy.')
    await page.unroute('**/api/v1/reviews/*/reply')
    await item.getByRole('button', { name: 'Publish reply' }).click()
    await expect.poll(() => item.locator('blockquote').textContent()).toContain('Thanks, Cy.')
    expect(await box.isVisible()).toBe(false)
    await expect.poll(focused).toBe('BUTTON "Edit reply"')
    // Remove reply goes with the reply: focus moves to the review's Reply button.
    await item.getByRole('button', { name: 'Remove reply' }).click()
    await expect.poll(() => item.locator('blockquote').count()).toBe(0)
    await expect.poll(focused).toBe('BUTTON "Reply"')
  })

  test('reviews: a review deleted elsewhere leaves the list at the next action on it', async () => {
    const { storefrontKey } = await api.admin.shop()
    const shopper = createWishlistClient({ baseUrl: env.baseUrl, credentials: { storefrontKey } })
    const review = await shopper.reviews.submit({
      productId: '2000003',
      customerEmail: 'di@example.com',
      customerName: 'Di',
      rating: 1,
      body: 'Broke.',
    })
    await page.getByLabel('Product id').fill('2000003')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    const item = page.getByTestId(`review-${review.id}`)
    await item.waitFor()
    await api.reviews.admin.delete(review.id)
    expectedConsoleErrors.push(/status of 404/)
    await item.getByRole('button', { name: 'Approve' }).click()
    await expect.poll(() => item.count()).toBe(0)
    await expect.poll(() => page.getByTestId('reviews-status').textContent()).toContain('no longer exists')
    await expect.poll(() => reviewsSummary().textContent()).toBe('No reviews match.')
    await page.getByLabel('Product id').fill('')
    await page.getByRole('button', { name: 'Apply filters' }).click()
  })

  test("reviews: each review says whether it is a verified purchase and how (the customer's order or a review invitation)", async () => {
    const { storefrontKey } = await api.admin.shop()
    const shopper = createWishlistClient({ baseUrl: env.baseUrl, credentials: { storefrontKey } })
    await api.events.send({
      events: [
        {
          type: 'order.created',
          order_id: '424242',
          customer_id: '9100',
          email: 'eve@example.com',
          line_items: [{ product_id: '2000004' }, { product_id: '2000005' }],
        },
      ],
    })
    const { invitations } = await api.admin.reviewInvitations({ order_id: '424242' })
    const invitation = invitations.find((i) => i.productId === '2000004')?.token ?? ''
    const invited = await shopper.reviews.submit({
      productId: '2000004',
      invitation,
      customerEmail: 'eve@example.com',
      customerName: 'Eve',
      rating: 5,
      body: 'As pictured.',
    })
    // An e-mail typed into a review proves nothing: not verified.
    const typed = await shopper.reviews.submit({
      productId: '2000004',
      customerEmail: 'eve@example.com',
      customerName: 'Not Eve',
      rating: 1,
      body: 'Awful.',
    })
    const { token } = await api.auth.token({ api_key: env.adminKey.keyId, api_secret: env.adminKey.secret, customer_id: '9100' })
    const customer = createWishlistClient({ baseUrl: env.baseUrl, credentials: { token, storefrontKey } })
    const own = await customer.reviews.submit({
      productId: '2000005',
      customerEmail: 'eve@example.com',
      customerName: 'Eve',
      rating: 4,
      body: 'Good value.',
    })

    const badge = (id: number) => page.getByTestId(`review-${id}`).getByTestId('verification').textContent()
    await page.getByLabel('Product id').fill('2000004')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => badge(invited.id)).toBe('verified purchase: review invitation')
    await expect.poll(() => badge(typed.id)).toBe('not verified')
    await shot('reviews-verification')
    await page.getByLabel('Product id').fill('2000005')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await expect.poll(() => badge(own.id)).toBe("verified purchase: customer's order")
    await page.getByLabel('Product id').fill('')
    await page.getByRole('button', { name: 'Apply filters' }).click()
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

  test('overview: top and sold products are named from the catalog (ids when unknown); both chart axes put zero on one line', async () => {
    const top = await api.analytics.topProducts({ limit: 10 })
    const [first, second] = top.products
    const sales = await api.analytics.topProducts({ limit: 100, sort: 'revenue' })
    const sold = sales.products.find((p) => p.productId !== first!.productId && p.productId !== second!.productId)!
    const unnamed = sales.products.find((p) => p.productId !== first!.productId && p.productId !== sold.productId)!
    await api.events.send({
      events: [
        {
          type: 'product.updated',
          product_id: first!.productId,
          handle: 'canvas-tote',
          title: 'Canvas tote',
          variants: [{ variant_id: '91', price: '39.00', inventory_quantity: 5 }],
        },
        {
          type: 'product.updated',
          product_id: sold.productId,
          handle: 'linen-shirt',
          title: 'Linen shirt, natural',
          variants: [{ variant_id: '92', price: '59.00', inventory_quantity: 4 }],
        },
      ],
    })
    await go('API keys')
    await go('Overview')
    const rows = page.locator('[data-testid="top-products"] tbody tr')
    await expect.poll(() => rows.first().locator('td').nth(1).textContent()).toBe(`Canvas tote ${first!.productId}`)
    expect(await rows.first().locator('td').nth(2).textContent()).toBe('canvas-tote')
    expect(await rows.nth(1).locator('td').nth(1).textContent()).toBe(second!.productId)
    expect(await rows.nth(1).locator('td').nth(2).textContent()).toBe('—')
    // The sold products too, in the table and its CSV; still the id for one the catalog does not know.
    const saleRow = (productId: string) =>
      page.locator('[data-testid="sales-products"] tbody tr').nth(sales.products.findIndex((p) => p.productId === productId))
    await expect.poll(() => saleRow(sold.productId).locator('td').nth(0).textContent()).toBe(`Linen shirt, natural ${sold.productId}`)
    expect(await saleRow(sold.productId).locator('td').nth(1).textContent()).toBe('linen-shirt')
    expect(await saleRow(unnamed.productId).locator('td').nth(0).textContent()).toBe(unnamed.productId)
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('sales-csv').click()])
    const csv = (await import('node:fs')).readFileSync(await download.path(), 'utf8').split('\r\n')
    expect(csv).toContain(
      `${sold.productId},"Linen shirt, natural",linen-shirt,${sold.wishlistCount},${sold.purchases},${sold.revenue[0]?.currency ?? ''},${sold.revenue[0]?.amount ?? ''}`,
    )
    const zero = Number(await page.getByTestId('zero-line').getAttribute('data-y'))
    const zeroTick = await page.locator('[data-testid="daily-chart"] .total-tick[data-value="0"]').getAttribute('data-y')
    expect(Math.abs(Number(zeroTick) - zero)).toBeLessThan(0.1)
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      await page.screenshot({ path: resolve(SCREENSHOTS, `dashboard-overview-${width}.png`), fullPage: true })
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  test('webhooks: the form offers every event the API accepts', async () => {
    await go('Webhooks')
    const offered = await page
      .getByRole('group', { name: 'Events' })
      .getByRole('checkbox')
      .evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))
    const document = (await (await fetch(`${env.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          post: {
            requestBody: {
              content: { 'application/json': { schema: { properties: { events: { items: { anyOf: { enum: string[] }[] } } } } } }
            }
          }
        }
      >
    }
    const accepted = document.paths['/v1/webhooks']!.post.requestBody.content[
      'application/json'
    ].schema.properties.events.items.anyOf.flatMap((a) => a.enum)
    expect(offered).toEqual(accepted)
    expect(offered).toContain('review.requested')
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      await page.getByRole('group', { name: 'Events' }).screenshot({ path: resolve(SCREENSHOTS, `dashboard-webhook-events-${width}.png`) })
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  test("an uninstalled shop's dashboard says so", async () => {
    const shops = env.testApp.app.services.shops
    const shop = await api.admin.shop()
    await shops.setUninstalled(shop.id, Date.parse('2026-11-20T10:00:00Z'))
    try {
      await page.reload()
      await go('Overview')
      const banner = page.getByTestId('uninstalled')
      expect(await banner.textContent()).toContain('The app is uninstalled from this shop')
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 })
        expect(await seriousViolations(page), `uninstalled banner at ${width} px`).toEqual([])
        await page.locator('main').screenshot({ path: resolve(SCREENSHOTS, `dashboard-uninstalled-${width}.png`) })
      }
    } finally {
      await shops.setUninstalled(shop.id, null)
      await page.setViewportSize({ width: 1280, height: 900 })
      await page.reload()
      await go('Overview')
    }
    expect(await page.getByTestId('uninstalled').count()).toBe(0)
  })

  test('axe-core: no serious or critical violation on any screen, at 1280 and 375 px; scrolling tables are reachable by keyboard', async () => {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      for (const section of ['Overview', 'Settings', 'API keys', 'Webhooks', 'Reviews', 'Privacy requests']) {
        await go(section)
        await page.waitForFunction(
          () => !document.querySelector('main [aria-busy="true"]') && !/Loading…/.test(document.querySelector('main')?.textContent ?? ''),
        )
        if (section === 'Overview') await page.getByText('Show the figures as a table').click()
        const found = await seriousViolations(page)
        expect(found, `${section} at ${width} px: ${JSON.stringify(found)}`).toEqual([])
        if (section === 'Reviews') await page.locator('main').screenshot({ path: resolve(SCREENSHOTS, `dashboard-reviews-${width}.png`) })
      }
    }
    // Each table's scrolling box is a named region in the tab order.
    await go('API keys')
    const region = page.getByRole('region', { name: 'API keys' })
    expect(await region.getAttribute('tabindex')).toBe('0')
    await region.focus()
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('API keys')
    // Stars read as one image with a text label.
    await go('Reviews')
    expect(await page.locator('.stars[role="img"]').first().getAttribute('aria-label')).toMatch(/^[1-5] of 5 stars$/)
    await page.setViewportSize({ width: 1280, height: 900 })
    const signIn = await browser.newPage({ viewport: { width: 375, height: 800 } })
    await signIn.goto(`${env.baseUrl}/dashboard`)
    await signIn.getByLabel('API key').waitFor()
    expect(await seriousViolations(signIn), 'sign-in at 375 px').toEqual([])
    await signIn.setViewportSize({ width: 1280, height: 800 })
    expect(await seriousViolations(signIn), 'sign-in at 1280 px').toEqual([])
    await signIn.close()
    expect(pageErrors).toEqual([])
    // Twelve axe runs over full screens: slow on a shared machine.
  }, 240_000)

  test('sign out forgets the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await page.reload()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
  })

  test('below Growth, the multi-wishlist switch is disabled and says why', async () => {
    const starter = await env.testApp.app.services.shops.create({ domain: 'starter-shop.myshopify.com', plan: 'starter' })
    await signInAs(starter.apiKey, 'starter-shop.myshopify.com')
    await go('Settings')
    const multi = page.getByLabel('Multiple wishlists per customer')
    expect(await multi.isDisabled()).toBe(true)
    const help = await page.locator(`#${await multi.getAttribute('aria-describedby')}`).textContent()
    expect(help).toContain('Needs the Growth plan or above (this shop is on starter)')
    await shot('settings-starter')
  })

  test('a customer-scope key is refused in plain words', async () => {
    const shop = await api.admin.shop()
    const customerKey = await env.testApp.app.services.shops.createApiKey(shop.id, { scope: 'customer' })
    await page.getByRole('button', { name: 'Sign out' }).click()
    expectedConsoleErrors.push(/status of 403/)
    await page.getByLabel('API key').fill(customerKey.keyId)
    await page.getByLabel('Secret').fill(customerKey.secret)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('This key has customer scope; sign in with an admin API key.')
  })

  test('free plan: multi-wishlist stored on is shown as stored and can be turned off; share links need Starter', async () => {
    const shops = env.testApp.app.services.shops
    const free = await shops.create({ domain: 'free-shop.myshopify.com', plan: 'free' })
    await shops.updateSettings(free.shop.id, { multi_wishlist_enabled: true })

    await signInAs(free.apiKey, 'free-shop.myshopify.com')
    await go('Settings')
    const multi = page.getByLabel('Multiple wishlists per customer')
    // Stored on below Growth: shown as stored, and enabled so that it can be turned off.
    expect(await multi.isChecked()).toBe(true)
    expect(await multi.isEnabled()).toBe(true)
    const help = () => page.locator(`#${'help-multi_wishlist_enabled'}`).textContent()
    expect(await help()).toContain('Stored as on, but it has no effect on this plan')
    const ttlHelp = await page
      .locator(`#${await page.getByLabel('Share-link lifetime (days)').getAttribute('aria-describedby')}`)
      .textContent()
    expect(ttlHelp).toContain('Share links need the Starter plan or above (this shop is on free)')
    await shot('settings-free')

    await multi.focus()
    await page.keyboard.press('Space')
    await expect.poll(() => page.getByTestId('settings-status').textContent()).toContain('Multiple wishlists per customer: off.')
    expect((await shops.get(free.shop.id))?.settings.multi_wishlist_enabled).toBe(false)
    // Off, it cannot be turned on again on this plan: disabled, and focus went to the heading.
    expect(await multi.isChecked()).toBe(false)
    expect(await multi.isDisabled()).toBe(true)
    expect(await help()).not.toContain('Stored as on')
    await expect.poll(focused).toBe('H2#features-heading "Features"')
    expect(pageErrors).toEqual([])
  })
})
