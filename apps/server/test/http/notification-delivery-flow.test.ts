/**
 * Delivering notifications through Shopify Flow (docs/notifications.md, "Delivery") against the
 * local Shopify emulator: the Flow channel the Shopify platform hands the worker fires the
 * signal's trigger; a trigger no enabled workflow uses is a skip, not a failure; Shopify's
 * throttling makes that shop's Flow deliveries wait the time Shopify names while another
 * shop's go out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { NotificationSignal } from '../../src/modules/notifications/channel.js'
import { FLOW_NOT_ENABLED, FLOW_TRIGGERS } from '../../src/modules/notifications/flow.js'
import type { NotificationWorker } from '../../src/modules/notifications/notification-worker.js'
import { optOutUrl } from '../../src/modules/notifications/opt-out.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { testNotificationWorker } from '../helpers/notification-worker.js'
import { deliveryOf, queueNotification } from '../helpers/notification-rows.js'
import { catalogSyncOver, newShopDomain, sessionToken } from '../helpers/shopify.js'
import {
  type EmulatedShop,
  flowLifecycleBody,
  sendFlowLifecycle,
  type ShopifyEmulator,
  startShopifyEmulator,
} from '../helpers/shopify-emulator.js'

let emulator: ShopifyEmulator
let t: TestApp
const workers: NotificationWorker[] = []

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  t = await createTestApp({ env: emulator.env })
})
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()))
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

const worker = (): NotificationWorker => testNotificationWorker(t, workers)

async function installed() {
  const domain = newShopDomain()
  const emulated = emulator.addShop(domain)
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status).toBe(200)
  const shop = (await t.app.services.shops.byDomain(domain))!
  await catalogSyncOver(t, shop.id)
  return { domain, emulated, shop }
}

const enable = async (shop: EmulatedShop, signal: NotificationSignal, enabled = true) => {
  const res = await sendFlowLifecycle(t, flowLifecycleBody(shop, FLOW_TRIGGERS[signal].handle, enabled, new Date()))
  expect(res.status).toBe(200)
}

const delivery = async (shopId: string, notificationId: string) =>
  (await deliveryOf(t.storage.db, shopId, notificationId)) ?? expect.unreachable(`no delivery of ${notificationId}`)

const waitFor = <T>(fn: () => Promise<T> | T) => vi.waitFor(fn, { timeout: 10_000, interval: 10 })

describe('sending through Shopify Flow', () => {
  it("fires the signal's trigger for the customer, with the signed opt-out link", async () => {
    const { domain, emulated, shop } = await installed()
    await enable(emulated, 'back_in_stock')
    const id = await queueNotification(t.storage.db, shop.id, '7001234567890', { channel: 'flow' })
    worker().start()
    await waitFor(async () => expect(await delivery(shop.id, id)).toMatchObject({ state: 'sent', attempts: 1 }))
    const [call] = emulator.flowCalls.filter((c) => c.shop === domain)
    expect(call).toMatchObject({ handle: 'wishlist-flow-back-in-stock', userErrors: [] })
    expect(call!.payload).toMatchObject({
      customer_id: 7001234567890,
      product_id: 8123456789012,
      'Variant ID': '45012345678901',
      Price: 29.9,
      'Inventory quantity': 12,
      'Opt out URL': optOutUrl(t.config, shop.id, { type: 'customer', id: '7001234567890' }),
    })
  })

  it('skips a message whose trigger no enabled workflow uses: nothing fired, and no failure', async () => {
    const { domain, emulated, shop } = await installed()
    await enable(emulated, 'price_drop', false)
    const id = await queueNotification(t.storage.db, shop.id, '7001234567891', { channel: 'flow', signal: 'price_drop' })
    await worker().runOnce()
    const d = await delivery(shop.id, id)
    expect(d.state).toBe('skipped')
    expect(d.last_error).toMatch(new RegExp(`^${FLOW_NOT_ENABLED}:`))
    expect(emulator.flowCalls.filter((c) => c.shop === domain)).toEqual([])
  })

  it("waits the time Shopify names when it throttles a shop, while another shop's messages go out", async () => {
    const slow = await installed()
    const other = await installed()
    for (const s of [slow, other]) await enable(s.emulated, 'low_stock')
    emulator.costs.set('flowTriggerReceive', 50)
    // The slow shop's bucket is empty (1 point a second); the other's is full.
    slow.emulated.bucket = { maximumAvailable: 100, restoreRate: 1, currentlyAvailable: 0 }
    slow.emulated.bucketAt = performance.now()
    try {
      const throttled = await queueNotification(t.storage.db, slow.shop.id, '7001234567892', { channel: 'flow', signal: 'low_stock' })
      const w = worker()
      await w.runOnce()
      const first = await delivery(slow.shop.id, throttled)
      expect(first).toMatchObject({ state: 'pending', attempts: 1 })
      // Due again when the bucket holds the 50 points: about 50 s.
      expect(first.next_attempt_at - Date.now()).toBeGreaterThan(45_000)

      // The shop's other Flow message waits too (no call while throttled); the other shop's goes out.
      const waiting = await queueNotification(t.storage.db, slow.shop.id, '7001234567893', { channel: 'flow', signal: 'low_stock' })
      const sent = await queueNotification(t.storage.db, other.shop.id, '7001234567894', { channel: 'flow', signal: 'low_stock' })
      const throttledCalls = emulator.graphqlRequests.filter((r) => r.shop === slow.domain).length
      await w.runOnce()
      expect(await delivery(other.shop.id, sent)).toMatchObject({ state: 'sent' })
      expect(await delivery(slow.shop.id, waiting)).toMatchObject({ state: 'pending', attempts: 0 })
      expect(emulator.graphqlRequests.filter((r) => r.shop === slow.domain)).toHaveLength(throttledCalls)
    } finally {
      emulator.costs.delete('flowTriggerReceive')
      slow.emulated.bucket = { maximumAvailable: 2000, restoreRate: 100, currentlyAvailable: 2000 }
    }
  })
})
