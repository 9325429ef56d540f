/**
 * The Shopify Flow channel (docs/shopify.md, "Shopify Flow") against the local Shopify
 * emulator: Flow's trigger lifecycle callback recorded per shop and trigger (signed like a
 * webhook, newest timestamp wins), the channel firing a trigger only while a workflow uses it,
 * its payload as the deployed extension declares it, and each of Shopify's answers mapped to
 * what the sender does next (done, never again, again after a wait).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createShopifyAdmin } from '../../src/platforms/shopify/admin-api.js'
import { webhookHmac } from '../../src/platforms/shopify/signatures.js'
import type { NotificationMessage, NotificationSignal } from '../../src/modules/notifications/channel.js'
import { createFlowChannel, FLOW_TRIGGERS, type FlowChannel, isFlowSkip } from '../../src/modules/notifications/flow.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { sampleMessage } from '../helpers/notification-rows.js'
import { catalogSyncOver, newShopDomain, sessionToken } from '../helpers/shopify.js'
import {
  type EmulatedShop,
  flowLifecycleBody,
  flowUserErrors,
  sendFlowLifecycle,
  type ShopifyEmulator,
  startShopifyEmulator,
} from '../helpers/shopify-emulator.js'

let emulator: ShopifyEmulator
let t: TestApp
let flow: FlowChannel

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  t = await createTestApp({ env: emulator.env })
  const admin = createShopifyAdmin({ db: t.storage.db, config: t.config.shopify!, shops: t.app.services.shops, log: t.app.log })
  flow = createFlowChannel({ db: t.storage.db, admin, log: t.app.log })
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

const shopOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!

/** A shop installed through its first session (holding its Admin API tokens), its catalog sync over. */
async function installed() {
  const domain = newShopDomain()
  const emulated = emulator.addShop(domain)
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status).toBe(200)
  await catalogSyncOver(t, (await shopOf(domain)).id)
  return { domain, emulated, shop: await shopOf(domain) }
}

const message = (shopId: string, signal: NotificationSignal, product: Partial<NotificationMessage['product']> = {}): NotificationMessage =>
  sampleMessage(signal, { id: `m-${Math.random().toString(36).slice(2)}`, shopId, occurredAt: Date.now(), product })

const enable = async (shop: EmulatedShop, signal: NotificationSignal, enabled = true, at = new Date()) => {
  const res = await sendFlowLifecycle(t, flowLifecycleBody(shop, FLOW_TRIGGERS[signal].handle, enabled, at))
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.result as string
}
const callsOf = (domain: string) => emulator.flowCalls.filter((c) => c.shop === domain)

describe("Flow's trigger lifecycle callback", () => {
  it('records per shop and trigger whether a workflow uses it; the status shows every trigger', async () => {
    const { emulated, shop } = await installed()
    expect((await flow.status(shop.id)).map((s) => s.state)).toEqual(['unknown', 'unknown', 'unknown', 'unknown', 'unknown'])
    const at = new Date(Date.now() - 60_000)
    expect(await enable(emulated, 'price_drop', true, at)).toBe('recorded')
    expect(await enable(emulated, 'low_stock', false, at)).toBe('recorded')
    const status = await flow.status(shop.id)
    expect(status.map((s) => [s.handle, s.state])).toEqual([
      ['wishlist-flow-back-in-stock', 'unknown'],
      ['wishlist-flow-price-drop', 'enabled'],
      ['wishlist-flow-low-stock', 'disabled'],
      ['wishlist-flow-reminder', 'unknown'],
      ['wishlist-flow-item-added', 'unknown'],
    ])
    expect(status[1]?.since).toBe(at.getTime())
    expect(await flow.enabled(shop.id, 'price_drop')).toBe(true)
    expect(await flow.enabled(shop.id, 'low_stock')).toBe(false)
  })

  it('keeps the newest: an older callback, or the same one again, changes nothing', async () => {
    const { emulated, shop } = await installed()
    const at = Date.now() - 10_000
    expect(await enable(emulated, 'back_in_stock', true, new Date(at))).toBe('recorded')
    expect(await enable(emulated, 'back_in_stock', false, new Date(at - 1))).toBe('stale')
    expect(await enable(emulated, 'back_in_stock', false, new Date(at))).toBe('stale')
    expect(await flow.enabled(shop.id, 'back_in_stock')).toBe(true)
    expect(await enable(emulated, 'back_in_stock', false, new Date(at + 1))).toBe('recorded')
    expect(await flow.enabled(shop.id, 'back_in_stock')).toBe(false)
  })

  it("takes a trigger named by its name too, and ignores another app's trigger and an unknown shop", async () => {
    const { emulated, shop } = await installed()
    const byName = await sendFlowLifecycle(t, flowLifecycleBody(emulated, 'Wishlist reminder due', true))
    expect(byName.body.data.result).toBe('recorded')
    expect(await flow.enabled(shop.id, 'reminder')).toBe(true)
    const other = await sendFlowLifecycle(t, flowLifecycleBody(emulated, 'Add row to spreadsheet', true))
    expect([other.status, other.body.data.result]).toEqual([200, 'ignored'])
    const unknownShop = await sendFlowLifecycle(t, flowLifecycleBody({ id: '1', domain: newShopDomain() }, 'wishlist-flow-reminder', true))
    expect([unknownShop.status, unknownShop.body.data.result]).toEqual([200, 'ignored'])
  })

  it('refuses a body not signed with the app secret, one not of Flow shape, and another shop id than the shop', async () => {
    const { emulated, shop } = await installed()
    const body = flowLifecycleBody(emulated, 'wishlist-flow-item-added', true)
    expect((await sendFlowLifecycle(t, body, { hmac: null })).status).toBe(401)
    expect((await sendFlowLifecycle(t, body, { secret: 'another-secret' })).status).toBe(401)
    const tampered = await sendFlowLifecycle(t, JSON.stringify(body), { hmac: webhookHmac('{}', emulator.apiSecret) })
    expect(tampered.status).toBe(401)
    for (const bad of [
      { ...body, has_enabled_flow: 'true' },
      { ...body, timestamp: 'yesterday' },
      { ...body, shopify_domain: 'example.com' },
      { ...body, shop_id: 'x1' },
      'not json',
    ]) {
      const res = await sendFlowLifecycle(t, bad)
      expect([JSON.stringify(bad), res.status, res.body.error.code]).toEqual([JSON.stringify(bad), 400, 'VALIDATION_ERROR'])
    }
    // The shop's Shopify id is read at install: a callback naming another one is refused.
    expect(shop.shopifyShopId).toBe(emulated.id)
    const other = await sendFlowLifecycle(t, { ...body, shop_id: Number(emulated.id) + 1 })
    expect([other.status, other.body.error.code]).toEqual([400, 'VALIDATION_ERROR'])
    expect(await flow.enabled(shop.id, 'item_added')).toBe(false)
  })
})

describe('the Flow channel', () => {
  it('fires nothing for a trigger no enabled workflow uses: not sent, and no failure', async () => {
    const { domain, emulated, shop } = await installed()
    const never = await flow.send(message(shop.id, 'back_in_stock'))
    expect(never.ok).toBe(false)
    expect(isFlowSkip(never)).toBe(true)
    await enable(emulated, 'back_in_stock', false)
    const disabled = await flow.send(message(shop.id, 'back_in_stock'))
    expect([isFlowSkip(disabled), !disabled.ok && disabled.permanent]).toEqual([true, true])
    expect(callsOf(domain)).toEqual([])
  })

  it("fires the signal's trigger with the payload its extension declares, which Flow accepts", async () => {
    const { domain, emulated, shop } = await installed()
    for (const signal of Object.keys(FLOW_TRIGGERS) as NotificationSignal[]) {
      await enable(emulated, signal)
      expect(await flow.send(message(shop.id, signal)), signal).toEqual({ ok: true })
    }
    const calls = callsOf(domain)
    expect(calls.map((c) => c.handle)).toEqual(Object.values(FLOW_TRIGGERS).map((tr) => tr.handle))
    expect(calls.map((c) => c.userErrors)).toEqual([[], [], [], [], []])
    expect(calls[1]?.payload).toEqual({
      customer_id: 7001234567890,
      product_id: 8123456789012,
      'Variant ID': '45012345678901',
      'Product URL': 'https://shop.example.com/products/canvas-tote',
      Price: 29.9,
      'Previous price': 39,
      Currency: 'EUR',
      'Opt out URL': 'https://wishlist.example.com/proxy/notifications/opt-out?token=abc',
    })
  })

  it('is a permanent failure when Flow refuses the payload (userErrors), or the notification cannot fill the trigger', async () => {
    const { domain, emulated, shop } = await installed()
    await enable(emulated, 'price_drop')
    // The app's deployed trigger lacks a field the service sends (an extension not deployed again).
    const deployed = emulator.flowTriggers.get('wishlist-flow-price-drop')!
    emulator.flowTriggers.set('wishlist-flow-price-drop', { ...deployed, fields: deployed.fields.filter((f) => f.key !== 'Currency') })
    try {
      const refused = await flow.send(message(shop.id, 'price_drop'))
      expect(refused).toMatchObject({ ok: false, permanent: true, retryAfterMs: null })
      expect(!refused.ok && refused.reason).toMatch(/payload\.Currency: Currency is not a field of wishlist-flow-price-drop/)
    } finally {
      emulator.flowTriggers.set('wishlist-flow-price-drop', deployed)
    }
    const before = callsOf(domain).length
    const unfillable = await flow.send(message(shop.id, 'price_drop', { previousPrice: null }))
    expect(unfillable).toMatchObject({ ok: false, permanent: true })
    expect(!unfillable.ok && unfillable.reason).toMatch(/Previous price/)
    expect(callsOf(domain)).toHaveLength(before)
  })

  it("is retried after the time the shop's bucket needs when Shopify throttles it", async () => {
    const { domain, emulated, shop } = await installed()
    await enable(emulated, 'low_stock')
    // 50 points missing at 1 point a second: beyond the Admin API client's own longest wait.
    emulator.costs.set('flowTriggerReceive', 50)
    emulated.bucket = { maximumAvailable: 100, restoreRate: 1, currentlyAvailable: 0 }
    emulated.bucketAt = performance.now()
    try {
      const throttled = await flow.send(message(shop.id, 'low_stock'))
      expect(throttled).toMatchObject({ ok: false, permanent: false })
      expect(!throttled.ok && throttled.retryAfterMs).toBeGreaterThanOrEqual(49_000)
      expect(!throttled.ok && throttled.retryAfterMs).toBeLessThanOrEqual(50_000)
      expect(callsOf(domain)).toEqual([])
      expect(emulator.graphqlRequests.filter((r) => r.shop === domain && r.throttled !== undefined).length).toBeGreaterThan(0)
    } finally {
      emulator.costs.delete('flowTriggerReceive')
      emulated.bucket = { maximumAvailable: 2000, restoreRate: 100, currentlyAvailable: 2000 }
    }
    expect(await flow.send(message(shop.id, 'low_stock'))).toEqual({ ok: true })
  })

  it('is retried later when the shop holds no token yet, and never again once Shopify refuses its token', async () => {
    const domain = newShopDomain()
    const emulated = emulator.addShop(domain)
    const { shop } = await t.app.services.shops.create({ domain, plan: 'free' })
    await enable(emulated, 'reminder')
    expect(await flow.send(message(shop.id, 'reminder'))).toMatchObject({ ok: false, permanent: false, retryAfterMs: null })

    const held = await installed()
    await enable(held.emulated, 'reminder')
    emulator.revokeTokens(held.domain)
    expect(await flow.send(message(held.shop.id, 'reminder'))).toMatchObject({ ok: false, permanent: true })
  })

  it('is retried later when Shopify cannot be reached, or fails (5xx)', async () => {
    const { emulated, shop } = await installed()
    await enable(emulated, 'item_added')
    await emulator.goDown()
    try {
      expect(await flow.send(message(shop.id, 'item_added'))).toMatchObject({ ok: false, permanent: false, retryAfterMs: null })
    } finally {
      await emulator.comeBack()
    }
    emulator.handle('flowTriggerReceive', () => {
      throw new Error('Shopify is failing')
    })
    try {
      const failing = await flow.send(message(shop.id, 'item_added'))
      expect(failing).toMatchObject({ ok: false, permanent: false, retryAfterMs: null })
      expect(!failing.ok && failing.reason).toMatch(/500/)
    } finally {
      // Flow's own check again (this file's last test: its calls are no longer recorded).
      emulator.handle('flowTriggerReceive', ({ args }) => ({
        userErrors: flowUserErrors(emulator.flowTriggers, args.handle, args.payload),
      }))
    }
    expect(await flow.send(message(shop.id, 'item_added'))).toEqual({ ok: true })
  })
})
