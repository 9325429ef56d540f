/**
 * Reporting of shopper notifications (docs/notifications.md, "Reporting" and "Attribution"):
 * the Channels page's counts per signal over a period and Flow's triggers
 * (GET /v1/admin/channels), and orders influenced per channel (conversions). The
 * notifications and deliveries are written as the rule engine and the delivery worker write
 * them (migration 0032's meaning); everything else goes through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NotificationDeliveriesTable, NotificationsTable } from '../../src/db/schema.js'
import type { Db } from '../../src/db/types.js'
import { DAY_MS } from '../../src/lib/time.js'
import { dayOf } from '../../src/modules/analytics/analytics.periods.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { SHOPIFY_ENV } from '../helpers/shopify.js'

const HOUR = 3_600_000
/** Noon UTC `k` days before today. */
const noon = (k: number) => (dayOf(Date.now()) - k) * DAY_MS + 12 * HOUR

let seq = 0
interface Seed {
  owner?: string
  signal?: NotificationsTable['signal']
  product?: string
  at: number
  suppressed?: NonNullable<NotificationsTable['reason']>
  deliveries?: { channel: NotificationDeliveriesTable['channel']; state: NotificationDeliveriesTable['state']; sentAt?: number }[]
}

/** One notification and its deliveries, as the rule engine and the worker leave them. */
async function seed(db: Db, shopId: string, s: Seed): Promise<void> {
  const id = `ntf_${++seq}`
  await db
    .insertInto('notifications')
    .values({
      shop_id: shopId,
      id,
      owner_type: 'customer',
      owner_id: s.owner ?? '501',
      signal: s.signal ?? 'back_in_stock',
      product_id: s.product ?? '9001',
      variant_id: null,
      payload: JSON.stringify({ title: 'Mug' }),
      state: s.suppressed ? 'suppressed' : 'queued',
      reason: s.suppressed ?? null,
      created_at: s.at,
    })
    .execute()
  for (const d of s.deliveries ?? [])
    await db
      .insertInto('notification_deliveries')
      .values({
        shop_id: shopId,
        id: `${id}_${d.channel}`,
        notification_id: id,
        channel: d.channel,
        state: d.state,
        attempts: d.state === 'pending' ? 0 : 1,
        next_attempt_at: s.at,
        lease_owner: null,
        lease_until: null,
        last_error: d.state === 'failed' ? 'HTTP 400 invalid' : null,
        created_at: s.at,
        sent_at: d.state === 'sent' ? (d.sentAt ?? s.at + 1_000) : null,
      })
      .execute()
}

const zeros = { sent: 0, failed: 0, pending: 0, skipped: 0 }
const none = { cooldown: 0, daily_cap: 0, opted_out: 0 }

describe('the Channels page: counts per signal over a period', () => {
  let t: TestApp
  let shop: TestShop
  let admin: string
  const report = async (query = '', token = admin) => {
    const res = await t.call('GET', `/v1/admin/channels${query}`, { token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data
  }

  beforeAll(async () => {
    t = await createTestApp()
    shop = await t.createShop('free')
    admin = await shop.adminToken()
    const db = t.storage.db
    // Today: two back-in-stock notifications sent through Klaviyo, one failed and one waiting;
    // suppressions by each reason; a price drop sent; a reminder skipped.
    await seed(db, shop.id, { at: noon(0) - 2 * HOUR, deliveries: [{ channel: 'klaviyo', state: 'sent' }] })
    await seed(db, shop.id, { at: noon(0) - 2 * HOUR, owner: '502', deliveries: [{ channel: 'klaviyo', state: 'sent' }] })
    await seed(db, shop.id, { at: noon(1), owner: '503', deliveries: [{ channel: 'klaviyo', state: 'failed' }] })
    await seed(db, shop.id, { at: noon(1), owner: '504', deliveries: [{ channel: 'klaviyo', state: 'pending' }] })
    await seed(db, shop.id, { at: noon(2), owner: '505', suppressed: 'cooldown' })
    await seed(db, shop.id, { at: noon(2), owner: '505', suppressed: 'cooldown' })
    await seed(db, shop.id, { at: noon(3), owner: '506', suppressed: 'daily_cap' })
    await seed(db, shop.id, { at: noon(3), owner: '507', suppressed: 'opted_out' })
    await seed(db, shop.id, { at: noon(4), signal: 'price_drop', deliveries: [{ channel: 'klaviyo', state: 'sent' }] })
    await seed(db, shop.id, { at: noon(5), signal: 'reminder', deliveries: [{ channel: 'klaviyo', state: 'skipped' }] })
    // Day −10 (in 14d and 30d, not 7d), day −100 (1y only), day −400 (all only).
    await seed(db, shop.id, { at: noon(10), signal: 'low_stock', deliveries: [{ channel: 'klaviyo', state: 'sent' }] })
    await seed(db, shop.id, { at: noon(10), signal: 'low_stock', suppressed: 'daily_cap' })
    await seed(db, shop.id, { at: noon(100), signal: 'item_added', deliveries: [{ channel: 'klaviyo', state: 'sent' }] })
    await seed(db, shop.id, { at: noon(400), signal: 'item_added', suppressed: 'opted_out' })
    // Another shop's notifications never count here.
    const other = await t.createShop('free')
    await seed(db, other.id, { at: noon(0), deliveries: [{ channel: 'klaviyo', state: 'sent' }] })
    await seed(db, other.id, { at: noon(0), suppressed: 'cooldown' })
  })
  afterAll(() => t?.close())

  it('7 days: per signal, Klaviyo deliveries by state and the suppressions by reason', async () => {
    const data = await report('?period=7d')
    expect(data.period).toBe('7d')
    // No Shopify app mode: no Flow entry.
    expect(data.channels.map((c: { channel: string }) => c.channel)).toEqual(['klaviyo'])
    expect(data.channels[0]).toMatchObject({ channel: 'klaviyo', connected: false, triggers: null })
    expect(data.channels[0].deliveries).toEqual({
      back_in_stock: { sent: 2, failed: 1, pending: 1, skipped: 0 },
      price_drop: { sent: 1, failed: 0, pending: 0, skipped: 0 },
      low_stock: zeros,
      reminder: { sent: 0, failed: 0, pending: 0, skipped: 1 },
      item_added: zeros,
    })
    expect(data.suppressed).toEqual({
      back_in_stock: { cooldown: 2, daily_cap: 1, opted_out: 1 },
      price_drop: none,
      low_stock: none,
      reminder: none,
      item_added: none,
    })
  })

  it('longer periods take in older notifications; 30d is the default', async () => {
    const month = await report()
    expect(month.period).toBe('30d')
    expect(month.channels[0].deliveries.low_stock).toEqual({ ...zeros, sent: 1 })
    expect(month.suppressed.low_stock).toEqual({ ...none, daily_cap: 1 })
    expect(month.channels[0].deliveries.item_added).toEqual(zeros)
    expect((await report('?period=14d')).channels[0].deliveries.low_stock.sent).toBe(1)
    expect((await report('?period=90d')).channels[0].deliveries.item_added.sent).toBe(0)
    const year = await report('?period=1y')
    expect(year.channels[0].deliveries.item_added).toEqual({ ...zeros, sent: 1 })
    expect(year.suppressed.item_added).toEqual(none)
    const all = await report('?period=all')
    expect(all.suppressed.item_added).toEqual({ ...none, opted_out: 1 })
    expect(all.channels[0].deliveries.back_in_stock).toEqual({ sent: 2, failed: 1, pending: 1, skipped: 0 })
  })

  it('an unknown period is refused; a customer token is refused', async () => {
    const bad = await t.call('GET', '/v1/admin/channels?period=2d', { token: admin })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('VALIDATION_ERROR')
    expect((await t.call('GET', '/v1/admin/channels', { token: await shop.customerToken('501') })).status).toBe(403)
  })

  it("a shop without notifications: zeros for every signal (another shop's rows not counted)", async () => {
    const fresh = await t.createShop('free')
    const data = await report('?period=all', await fresh.adminToken())
    for (const counts of Object.values(data.channels[0].deliveries)) expect(counts).toEqual(zeros)
    for (const counts of Object.values(data.suppressed)) expect(counts).toEqual(none)
  })
})

describe('Shopify Flow on the Channels page (Shopify app mode)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp({ env: SHOPIFY_ENV })
  })
  afterAll(() => t?.close())

  it("a Shopify shop: Flow listed with each trigger's state as Flow last said it, and its deliveries", async () => {
    const shop = await t.createShop('free')
    const admin = await shop.adminToken()
    const said = noon(1)
    await t.storage.db
      .insertInto('shopify_flow_triggers')
      .values([
        { shop_id: shop.id, handle: 'wishlist-flow-back-in-stock', has_enabled_flow: 1, status_at: said, updated_at: said },
        { shop_id: shop.id, handle: 'wishlist-flow-price-drop', has_enabled_flow: 0, status_at: said, updated_at: said },
      ])
      .execute()
    await seed(t.storage.db, shop.id, {
      at: noon(0) - HOUR,
      deliveries: [
        { channel: 'klaviyo', state: 'sent' },
        { channel: 'flow', state: 'sent' },
      ],
    })
    await seed(t.storage.db, shop.id, { at: noon(0) - HOUR, owner: '777', deliveries: [{ channel: 'flow', state: 'pending' }] })

    const res = await t.call('GET', '/v1/admin/channels?period=7d', { token: admin })
    expect(res.status).toBe(200)
    const [klaviyo, flow] = res.body.data.channels
    expect(klaviyo).toMatchObject({ channel: 'klaviyo', triggers: null, deliveries: { back_in_stock: { ...zeros, sent: 1 } } })
    const iso = new Date(said).toISOString()
    expect(flow).toEqual({
      channel: 'flow',
      connected: true,
      keyLast4: null,
      connectedAt: null,
      lastCheck: null,
      triggers: [
        { signal: 'back_in_stock', handle: 'wishlist-flow-back-in-stock', state: 'enabled', since: iso },
        { signal: 'price_drop', handle: 'wishlist-flow-price-drop', state: 'disabled', since: iso },
        { signal: 'low_stock', handle: 'wishlist-flow-low-stock', state: 'unknown', since: null },
        { signal: 'reminder', handle: 'wishlist-flow-reminder', state: 'unknown', since: null },
        { signal: 'item_added', handle: 'wishlist-flow-item-added', state: 'unknown', since: null },
      ],
      deliveries: {
        back_in_stock: { sent: 1, failed: 0, pending: 1, skipped: 0 },
        price_drop: zeros,
        low_stock: zeros,
        reminder: zeros,
        item_added: zeros,
      },
    })
  })
})

describe('attribution per channel', () => {
  let t: TestApp
  let shop: TestShop
  let admin: string
  const conversions = async () => {
    const res = await t.call('GET', '/v1/admin/analytics/conversions?period=7d', { token: admin })
    expect(res.status).toBe(200)
    return res.body.data
  }
  const add = async (customerId: string, productId: string) =>
    expect((await t.call('POST', `/v1/wishlists/${customerId}/items`, { token: admin, body: { product_id: productId } })).status).toBe(201)
  const order = async (orderId: string, customerId: string, products: string[]) => {
    const res = await t.call('POST', '/v1/events', {
      token: admin,
      body: {
        events: [
          {
            type: 'order.created',
            order_id: orderId,
            customer_id: customerId,
            currency: 'EUR',
            line_items: products.map((p) => ({ product_id: p, price: '10.00' })),
          },
        ],
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
  }

  beforeAll(async () => {
    t = await createTestApp()
    shop = await t.createShop('growth', { attribution_window_days: 7 })
    admin = await shop.adminToken()
  })
  afterAll(() => t?.close())

  it('a line counts under each channel that sent its customer a notification of the product within the window', async () => {
    const now = Date.now()
    await add('601', '71')
    await add('601', '72')
    await add('601', '73')
    await add('601', '74')
    // 71: Klaviyo and Flow both sent (the same notification). 72: Klaviyo sent 3 days ago, twice.
    // 73: sent 8 days ago, beyond the 7-day window; and a failed and a pending delivery. 74: nothing.
    await seed(t.storage.db, shop.id, {
      owner: '601',
      product: '71',
      at: now - HOUR,
      deliveries: [
        { channel: 'klaviyo', state: 'sent' },
        { channel: 'flow', state: 'sent' },
      ],
    })
    await seed(t.storage.db, shop.id, {
      owner: '601',
      product: '72',
      at: now - 3 * DAY_MS,
      deliveries: [{ channel: 'klaviyo', state: 'sent' }],
    })
    await seed(t.storage.db, shop.id, {
      owner: '601',
      product: '72',
      signal: 'price_drop',
      at: now - 2 * DAY_MS,
      deliveries: [{ channel: 'klaviyo', state: 'sent' }],
    })
    await seed(t.storage.db, shop.id, {
      owner: '601',
      product: '73',
      at: now - 9 * DAY_MS,
      deliveries: [{ channel: 'klaviyo', state: 'sent', sentAt: now - 8 * DAY_MS }],
    })
    await seed(t.storage.db, shop.id, {
      owner: '601',
      product: '73',
      at: now - DAY_MS,
      deliveries: [
        { channel: 'klaviyo', state: 'failed' },
        { channel: 'flow', state: 'pending' },
      ],
    })
    // Another customer's notification of 74 does not count for 601.
    await seed(t.storage.db, shop.id, { owner: '602', product: '74', at: now - HOUR, deliveries: [{ channel: 'klaviyo', state: 'sent' }] })

    await order('8001', '601', ['71', '72', '73', '74'])
    const data = await conversions()
    expect(data).toMatchObject({ ordersInfluenced: 1, linesInfluenced: 4 })
    expect(data.channelsInfluenced).toEqual({ klaviyo: 2, flow: 1 })
  })

  it('a delivery sent after the order, or a product the customer never held, does not count', async () => {
    const now = Date.now()
    await add('603', '81')
    // Sent an hour from now: after the order.
    await seed(t.storage.db, shop.id, {
      owner: '603',
      product: '81',
      at: now,
      deliveries: [{ channel: 'klaviyo', state: 'sent', sentAt: now + HOUR }],
    })
    // 82 was never in a list: not wishlist-influenced, so not counted under a channel either.
    await seed(t.storage.db, shop.id, { owner: '603', product: '82', at: now - HOUR, deliveries: [{ channel: 'flow', state: 'sent' }] })
    await order('8002', '603', ['81', '82'])
    const data = await conversions()
    expect(data).toMatchObject({ ordersInfluenced: 2, linesInfluenced: 5 })
    expect(data.channelsInfluenced).toEqual({ klaviyo: 2, flow: 1 })
  })

  it('the counts are kept in the daily rows: the same order applied again adds nothing', async () => {
    await order('8001', '601', ['71', '72', '73', '74'])
    expect((await conversions()).channelsInfluenced).toEqual({ klaviyo: 2, flow: 1 })
    const row = await t.storage.db
      .selectFrom('analytics_daily')
      .select(['channel_klaviyo', 'channel_flow'])
      .where('shop_id', '=', shop.id)
      .where('day', '=', dayOf(Date.now()))
      .executeTakeFirstOrThrow()
    expect([Number(row.channel_klaviyo), Number(row.channel_flow)]).toEqual([2, 1])
  })
})
