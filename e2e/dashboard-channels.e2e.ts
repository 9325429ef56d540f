/**
 * The dashboard's Channels page in Chromium against the real server (Shopify app mode, so the
 * demo shop has Shopify Flow) and the local Klaviyo emulator (KLAVIYO_BASE_URL): a key Klaviyo
 * refuses is said in words and announced; a good one connects and shows its last four
 * characters; Flow's triggers and the counts per signal come from rows written as the rule
 * engine and the delivery worker write them; the frequency settings save; disconnecting asks
 * first. Everything is done with the keyboard alone; axe-core runs at 1280 and 375 px.
 * Screenshots land in e2e/screenshots/.
 */
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createWishlistClient, type WishlistClient } from 'wishlist-service-sdk'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DAY_MS } from '../apps/server/src/lib/time.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../apps/server/test/helpers/klaviyo-emulator.js'
import { SHOPIFY_ENV } from '../apps/server/test/helpers/shopify.js'
import { seriousViolations, WIDTHS } from './helpers/axe.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'
import { watchedPage } from './helpers/watched-page.js'

const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), 'screenshots')
const GOOD_KEY = 'pk_e2e0c4a1b2c3d4e5f6a7b8c9d0e1f2a3b7c1d'
const UNKNOWN_KEY = 'pk_e2e000000000000000000000000000000dead'

let klaviyo: KlaviyoEmulator
let env: Env
let browser: Browser
let page: Page
let api: WishlistClient
let shopId: string
const pageErrors: string[] = []
// The refused key's 400 is logged by the browser as a failed request.
const expectedConsoleErrors: RegExp[] = [/status of 400/]

/** Writes a notification and its deliveries as the rule engine and the delivery worker leave them. */
let seq = 0
async function seed(
  signal: 'back_in_stock' | 'price_drop' | 'low_stock' | 'reminder' | 'item_added',
  at: number,
  outcome:
    | { suppressed: 'cooldown' | 'daily_cap' | 'opted_out' }
    | { deliveries: [channel: 'klaviyo' | 'flow', state: 'sent' | 'failed' | 'pending' | 'skipped'][] },
): Promise<void> {
  const db = env.testApp.storage.db
  const id = `ntf_e2e_${++seq}`
  const suppressed = 'suppressed' in outcome ? outcome.suppressed : null
  await db
    .insertInto('notifications')
    .values({
      shop_id: shopId,
      id,
      owner_type: 'customer',
      owner_id: String(1000 + seq),
      signal,
      product_id: '9001',
      variant_id: null,
      payload: JSON.stringify({ title: 'Linen shirt' }),
      state: suppressed ? 'suppressed' : 'queued',
      reason: suppressed,
      created_at: at,
    })
    .execute()
  for (const [channel, state] of 'deliveries' in outcome ? outcome.deliveries : [])
    await db
      .insertInto('notification_deliveries')
      .values({
        shop_id: shopId,
        id: `${id}_${channel}`,
        notification_id: id,
        channel,
        state,
        attempts: state === 'pending' ? 0 : 1,
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: at,
        sent_at: state === 'sent' ? at + 1_000 : null,
      })
      .execute()
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  klaviyo = await startKlaviyoEmulator({ keys: { [GOOD_KEY]: 'ACCT_E2E' } })
  ;[env, browser] = await Promise.all([startEnv({ ...SHOPIFY_ENV, KLAVIYO_BASE_URL: klaviyo.url }), launchChromium()])
  api = createWishlistClient({ baseUrl: env.baseUrl, credentials: { apiKey: env.adminKey.keyId, apiSecret: env.adminKey.secret } })
  shopId = (await api.admin.shop()).id

  const now = Date.now()
  // Within the last 7 days: back in stock 3 sent through Klaviyo (and 2 fired in Flow), 1 failed,
  // 2 waiting; suppressed 2 cooldown, 1 daily cap, 1 opted out. A price drop sent 12 days ago
  // (in 30 days, not in 7).
  for (let i = 0; i < 2; i++)
    await seed('back_in_stock', now - 3_600_000, {
      deliveries: [
        ['klaviyo', 'sent'],
        ['flow', 'sent'],
      ],
    })
  await seed('back_in_stock', now - DAY_MS, { deliveries: [['klaviyo', 'sent']] })
  await seed('back_in_stock', now - DAY_MS, { deliveries: [['klaviyo', 'failed']] })
  await seed('back_in_stock', now - 60_000, { deliveries: [['klaviyo', 'pending']] })
  await seed('back_in_stock', now - 60_000, { deliveries: [['klaviyo', 'pending']] })
  await seed('back_in_stock', now - 2 * DAY_MS, { suppressed: 'cooldown' })
  await seed('back_in_stock', now - 2 * DAY_MS, { suppressed: 'cooldown' })
  await seed('back_in_stock', now - 2 * DAY_MS, { suppressed: 'daily_cap' })
  await seed('reminder', now - 2 * DAY_MS, { suppressed: 'opted_out' })
  await seed('price_drop', now - 12 * DAY_MS, { deliveries: [['klaviyo', 'sent']] })
  // What Shopify Flow said of two triggers (its lifecycle callback).
  await env.testApp.storage.db
    .insertInto('shopify_flow_triggers')
    .values([
      { shop_id: shopId, handle: 'wishlist-flow-back-in-stock', has_enabled_flow: 1, status_at: now - DAY_MS, updated_at: now - DAY_MS },
      { shop_id: shopId, handle: 'wishlist-flow-price-drop', has_enabled_flow: 0, status_at: now - DAY_MS, updated_at: now - DAY_MS },
    ])
    .execute()

  page = await watchedPage(browser, pageErrors, expectedConsoleErrors)
})

afterAll(async () => {
  await browser?.close()
  await env?.close()
  await klaviyo?.close()
})

const shot = (name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true })
const heading = () => page.getByRole('heading', { level: 1 })
/** What has keyboard focus: `TAG[type] name=… "text"`, or BODY when focus was lost. */
const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement
    if (!el || el === document.body) return 'BODY'
    const type = el.tagName === 'INPUT' ? `[${el.getAttribute('type') ?? 'text'}]` : ''
    const name = el.getAttribute('name')
    return `${el.tagName}${type}${name ? ` name=${name}` : ''} "${(el.textContent ?? '').trim().slice(0, 60)}"`
  })
/** Presses Tab (or Shift+Tab) until focus is on what `matches` describes; fails after `max` presses. */
async function tabTo(matches: RegExp, opts: { back?: boolean; max?: number } = {}): Promise<void> {
  for (let i = 0; i < (opts.max ?? 60); i++) {
    if (matches.test(await focused())) return
    await page.keyboard.press(opts.back ? 'Shift+Tab' : 'Tab')
  }
  throw new Error(`Tab never reached ${matches} (last: ${await focused()})`)
}
/** A counts table's row of one signal, as its cells' texts. */
const row = async (testId: string, signal: string) =>
  (await page.getByTestId(testId).locator('tr', { hasText: signal }).first().locator('td').allInnerTexts()).map((s) => s.trim())

describe('the Channels page', () => {
  test('signing in and reaching Channels with the keyboard alone', async () => {
    await page.goto(`${env.baseUrl}/dashboard`)
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name')), { timeout: 10_000 }).toBe('apiKey')
    await page.keyboard.type(env.adminKey.keyId)
    await page.keyboard.press('Tab')
    await page.keyboard.type(env.adminKey.secret)
    await page.keyboard.press('Enter')
    await expect.poll(() => heading().textContent()).toBe('Overview')
    // Back from the Overview's heading into the navigation above it.
    await tabTo(/^A "Channels"$/, { back: true })
    await page.keyboard.press('Enter')
    await expect.poll(() => heading().textContent()).toBe('Channels')
    // Focus is on the screen's heading, so Tab continues from the top of the screen.
    expect(await focused()).toBe('H1 "Channels"')
    await expect.poll(() => page.getByTestId('klaviyo-connected').textContent()).toBe('Not connected.')
  })

  test('a key Klaviyo refuses: the refusal in words, announced, and nothing connected', async () => {
    await tabTo(/^INPUT\[password\] name=private_key/)
    await page.keyboard.type(UNKNOWN_KEY)
    await page.keyboard.press('Enter')
    const alert = page.getByTestId('channels-status').getByRole('alert')
    await expect
      .poll(() => alert.textContent())
      .toMatch(/^Klaviyo refused this key, so it was not saved\. Check that it is a private API key/)
    // Said beside the field too, which is marked invalid and described by it.
    const input = page.getByLabel('Private API key')
    expect(await input.getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByTestId('klaviyo-key-error').textContent()).toContain('Klaviyo refused this key')
    const describedBy = (await input.getAttribute('aria-describedby'))?.split(' ') ?? []
    expect(describedBy).toContain(await page.getByTestId('klaviyo-key-error').getAttribute('id'))
    // Focus came back to the field after the request; the key was checked with Klaviyo, not kept.
    expect(await focused()).toMatch(/^INPUT\[password\] name=private_key/)
    expect(klaviyo.of('GET', '/api/accounts').map((r) => [r.key, r.status])).toEqual([[UNKNOWN_KEY, 401]])
    expect(await page.getByTestId('klaviyo-connected').textContent()).toBe('Not connected.')
    // Klaviyo's own answer is said once, without the server's wrapping.
    expect(await alert.textContent()).toMatch(/Klaviyo's answer: HTTP 401: not_authenticated: [^()]+\.$/)
    expect(await seriousViolations(page), 'the refusal at 1280 px').toEqual([])
    await shot('dashboard-channels-refused-1280')

    // Not a private key at all: refused by the server without asking Klaviyo, in words.
    await page.keyboard.press('Control+A')
    await page.keyboard.type('pk_short!')
    await page.keyboard.press('Enter')
    await expect.poll(() => alert.textContent()).toMatch(/^This is not a Klaviyo private API key, so it was not saved/)
    expect(klaviyo.of('GET', '/api/accounts')).toHaveLength(1)
  })

  test('a good key: connected, its last four characters shown, the key itself never', async () => {
    expect(await focused()).toMatch(/^INPUT\[password\] name=private_key/)
    await page.keyboard.press('Control+A')
    await page.keyboard.type(GOOD_KEY)
    await page.keyboard.press('Enter')
    await expect
      .poll(() => page.getByTestId('channels-status').getByRole('status').textContent())
      .toBe(`Klaviyo connected: Klaviyo accepted the key ending in ${GOOD_KEY.slice(-4)}.`)
    await expect.poll(() => page.getByTestId('klaviyo-connected').textContent()).toBe('Connected')
    expect(await page.getByTestId('klaviyo-last4').textContent()).toBe(GOOD_KEY.slice(-4))
    expect(await page.getByTestId('klaviyo-check').textContent()).toMatch(/^Klaviyo accepted the key\. \(/)
    // The error beside the field is gone, the field emptied; the key is nowhere in the page.
    expect(await page.getByTestId('klaviyo-key-error').count()).toBe(0)
    expect(await page.getByLabel('New private API key').inputValue()).toBe('')
    expect(await page.content()).not.toContain(GOOD_KEY)
    expect(klaviyo.of('GET', '/api/accounts').at(-1)).toMatchObject({ key: GOOD_KEY, status: 200, problems: [] })
  })

  test("Shopify Flow: each trigger's state in words", async () => {
    const triggers = page.getByTestId('flow-triggers')
    expect(await triggers.locator('tbody tr').count()).toBe(5)
    const since = await row('flow-triggers', 'Back in stock')
    expect(since.slice(0, 2)).toEqual(['Back in stock\nwishlist-flow-back-in-stock', 'On: a workflow uses it'])
    expect(since[2]).toMatch(/\d/)
    expect((await row('flow-triggers', 'Price drop')).slice(0, 2)).toEqual([
      'Price drop\nwishlist-flow-price-drop',
      'Off: no workflow turned on uses it',
    ])
    expect(await row('flow-triggers', 'Low stock')).toEqual(['Low stock\nwishlist-flow-low-stock', 'Not reported yet', '—'])
  })

  test('counts per signal of the seeded notifications; the period is changed with the arrow keys', async () => {
    // 30 days (the default): the price drop of 12 days ago is in.
    expect(await row('counts-klaviyo', 'Back in stock')).toEqual(['Back in stock', '3', '1', '2', '0'])
    expect(await row('counts-klaviyo', 'Price drop')).toEqual(['Price drop', '1', '0', '0', '0'])
    expect(await row('counts-flow', 'Back in stock')).toEqual(['Back in stock', '2', '0', '0', '0'])
    expect(await row('counts-suppressed', 'Back in stock')).toEqual(['Back in stock', '2', '1', '0'])
    expect(await row('counts-suppressed', 'Reminder')).toEqual(['Reminder', '0', '0', '1'])
    await shot('dashboard-channels-1280')

    // The period's radio group: Tab reaches the checked option, the arrow keys move it.
    await tabTo(/^INPUT\[radio\]/)
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe('30d')
    await page.keyboard.press('ArrowLeft')
    await page.keyboard.press('ArrowLeft')
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe('7d')
    await expect.poll(() => row('counts-klaviyo', 'Price drop')).toEqual(['Price drop', '0', '0', '0', '0'])
    expect(await row('counts-klaviyo', 'Back in stock')).toEqual(['Back in stock', '3', '1', '2', '0'])
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Showing notifications' }).textContent())
      .toBe('Showing notifications of the last 7 days.')
  })

  test('the frequency settings: changed and saved with the keyboard', async () => {
    await tabTo(/^INPUT\[number\] name=notification_cooldown_hours/)
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe('24')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('48')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('2')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('10')
    await page.keyboard.press('Tab')
    expect(await focused()).toBe('BUTTON "Save frequency"')
    await page.keyboard.press('Enter')
    await expect
      .poll(() => page.getByTestId('channels-status').getByRole('status').textContent())
      .toBe('Frequency saved: it applies to the notifications due from now on.')
    const settings = (await api.admin.shop()).settings as unknown as Record<string, number>
    expect([settings.notification_cooldown_hours, settings.notifications_per_day, settings.reminder_after_days]).toEqual([48, 2, 10])
    expect(await focused()).toBe('BUTTON "Save frequency"')
  })

  test('axe-core: no serious or critical violation at 1280 and 375 px', async () => {
    // Reloaded (the session stays): the page as it opens, without the last action's message.
    await page.reload()
    await expect.poll(() => row('counts-klaviyo', 'Back in stock')).toEqual(['Back in stock', '3', '1', '2', '0'])
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"]'))
      const found = await seriousViolations(page)
      expect(found, `Channels at ${width} px: ${JSON.stringify(found)}`).toEqual([])
      await shot(`dashboard-channels-${width}`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  }, 120_000)

  test('disconnecting asks first: Escape keeps the key, the confirm button deletes it', async () => {
    await page.getByRole('heading', { name: 'Klaviyo', level: 2 }).focus()
    await tabTo(/^BUTTON "Disconnect Klaviyo…"$/)
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog', { name: 'Disconnect Klaviyo?' })
    await dialog.waitFor()
    expect(await focused()).toBe('BUTTON "Cancel"')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    expect(await focused()).toBe('BUTTON "Disconnect Klaviyo…"')
    expect(await page.getByTestId('klaviyo-connected').textContent()).toBe('Connected')

    await page.keyboard.press('Enter')
    await dialog.waitFor()
    await page.keyboard.press('Tab')
    expect(await focused()).toBe('BUTTON "Disconnect Klaviyo"')
    await page.keyboard.press('Enter')
    await expect
      .poll(() => page.getByTestId('channels-status').getByRole('status').textContent())
      .toBe('Klaviyo disconnected: its key was deleted.')
    await expect.poll(() => page.getByTestId('klaviyo-connected').textContent()).toBe('Not connected.')
    // The button went: focus is on Klaviyo's heading, not lost.
    expect(await focused()).toBe('H2 "Klaviyo"')
    const channels = await (
      await fetch(`${env.baseUrl}/v1/admin/channels`, { headers: { authorization: `Bearer ${await api.auth.currentToken()}` } })
    ).json()
    expect(channels.data.channels[0]).toMatchObject({ channel: 'klaviyo', connected: false })
    expect(pageErrors).toEqual([])
  })
})
