/**
 * Abuse of the webhook pipeline, reproduced with smaller numbers that still show each bound:
 * - one events request that would fan out to thousands of fat outbox rows;
 * - one shop whose dead endpoints would take every delivery slot of the worker;
 * - erasure of a customer whose data waits in the outbox, in pending deliveries and in
 *   product signals still queued.
 */
import type { ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { enqueueWebhookEvents } from '../../src/modules/events/outbox.js'
import { FAN_OUT_BATCH, writeQueuedSignals } from '../../src/modules/events/product-fan-out.js'
import { CANCELLED_BY_ERASURE } from '../../src/modules/webhooks/customer-erasure.js'
import { createWebhookWorker, MAX_DELIVERY_BODY_BYTES } from '../../src/modules/webhooks/webhook-worker.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function app(opts: Parameters<typeof createTestApp>[0] = {}): Promise<TestApp> {
  const t = await createTestApp(opts)
  cleanups.push(() => t.close())
  return t
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver()
  cleanups.push(() => r.close())
  return r
}

async function hook(t: TestApp, shop: TestShop, url: string, events: string[]): Promise<string> {
  const res = await t.call('POST', '/v1/webhooks', { token: await shop.adminToken(), body: { url, events } })
  expect(res.status).toBe(201)
  return res.body.data.webhookId as string
}

/** `n` customers holding the product, written directly (the API would take n requests). */
async function holders(t: TestApp, shopId: string, productId: string, n: number, from = 100_000): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => ({
    shop_id: shopId,
    owner_type: 'customer' as const,
    owner_id: String(from + i),
    list_id: 'default',
    product_id: productId,
    variant_id: null,
    handle: null,
    metadata: null,
    added_at: Date.now(),
  }))
  for (let i = 0; i < rows.length; i += 200)
    await t.storage.db
      .insertInto('wishlist_items')
      .values(rows.slice(i, i + 200))
      .execute()
}

const count = async (t: TestApp, table: 'outbox' | 'outbox_fan_outs' | 'webhook_deliveries', shopId: string) =>
  Number(
    (
      await t.storage.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('shop_id', '=', shopId)
        .executeTakeFirstOrThrow()
    ).n,
  )

const productUpdate = (productId: string, variants: number, price: number, stock: number) => ({
  type: 'product.updated',
  product_id: productId,
  variants: Array.from({ length: variants }, (_, v) => ({ variant_id: String(v + 1), price: String(price), inventory_quantity: stock })),
})

describe('bounded fan-out of one events request', () => {
  it('coalesces a repeated product, writes no outbox rows in the request, and the worker writes them in bounded batches', async () => {
    const t = await app()
    const shop = await t.createShop('scale')
    const admin = await shop.adminToken()
    const r = await receiver()
    await hook(t, shop, `${r.url}/hook`, ['wishlist.product.back_in_stock', 'wishlist.product.price_dropped'])
    const VARIANTS = 200
    await holders(t, shop.id, '1', 300)
    const baseline = await t.call('POST', '/v1/events', { token: admin, body: { events: [productUpdate('1', VARIANTS, 100, 0)] } })
    expect(baseline.status).toBe(200)

    // The attack, smaller: 10 updates of the product in one request, every one cheaper than
    // the last and every other one back in stock: 10 × 200 price drops and 5 × 200
    // back-in-stock signals before, each with the 300 holders.
    const events = Array.from({ length: 10 }, (_, i) => productUpdate('1', VARIANTS, 99 - i, i % 2 === 0 ? 5 : 0))
    const res = await t.call('POST', '/v1/events', { token: admin, body: { events } })
    expect(res.status).toBe(200)
    // The request wrote one queued fan-out and no outbox rows, whatever the holder count.
    expect(await count(t, 'outbox', shop.id)).toBe(0)
    expect(await count(t, 'outbox_fan_outs', shop.id)).toBe(1)

    // The worker writes them a bounded batch per transaction.
    expect(await writeQueuedSignals(t.storage.db)).toBe(FAN_OUT_BATCH)
    expect(await count(t, 'outbox', shop.id)).toBe(FAN_OUT_BATCH)

    // One delivery per (variant, signal): 2 × 200, not 3,000; the first `before`, the last `after`.
    const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, batchSize: 100 })
    try {
      await worker.runOnce()
      expect(await count(t, 'outbox_fan_outs', shop.id)).toBe(0)
      expect(await count(t, 'webhook_deliveries', shop.id)).toBe(2 * VARIANTS)
      await r.waitFor(5) // the endpoint's share of the pass
      const rows = await t.storage.db.selectFrom('webhook_deliveries').select('body').where('shop_id', '=', shop.id).execute()
      for (const row of rows) expect(Buffer.byteLength(row.body)).toBeLessThanOrEqual(MAX_DELIVERY_BODY_BYTES)
      const bodies = rows.map((row) => JSON.parse(row.body) as { event: string; data: Record<string, unknown> })
      const keys = bodies.map((b) => `${b.data.variantId} ${b.event}`)
      expect(new Set(keys).size).toBe(keys.length)
      const drop = bodies.find((b) => b.event === 'wishlist.product.price_dropped')!
      expect(drop.data).toMatchObject({
        productId: '1',
        before: { price: '100.00', inventoryQuantity: 0 },
        after: { price: '90.00', inventoryQuantity: 0 },
        wishlistCount: 300,
        truncated: false,
      })
      expect(drop.data.customerIds).toHaveLength(300)
      const back = bodies.find((b) => b.event === 'wishlist.product.back_in_stock')!
      expect(back.data).toMatchObject({
        before: { price: '100.00', inventoryQuantity: 0 },
        after: { price: '91.00', inventoryQuantity: 5 },
      })
    } finally {
      await worker.stop()
    }
  })
})

describe('fair delivery across shops', () => {
  it("one shop's endpoints that never answer do not delay another shop's delivery, with two workers", async () => {
    // A long timeout: the dead shop's attempts hang for the whole test.
    const t = await app({
      env: { WEBHOOK_POLL_INTERVAL_MS: '20', WEBHOOK_TIMEOUT_MS: '60000' },
      worker: { batchSize: 4, maxInFlight: 8, leaseMs: 120_000 },
    })
    const second = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, batchSize: 4, maxInFlight: 8, leaseMs: 120_000 })
    const dead = await receiver()
    const held: ServerResponse[] = []
    dead.respond = (_r, res) => {
      held.push(res)
    }
    cleanups.push(async () => {
      for (const res of held) res.writeHead(200).end()
      await second.stop()
    })
    second.start()

    // The attack, smaller: 4 endpoints that never answer and 120 due deliveries.
    const rival = await t.createShop('scale')
    for (let i = 0; i < 4; i++) await hook(t, rival, `${dead.url}/dead-${i}`, ['wishlist.shared'])
    await t.storage.db.transaction().execute((trx) =>
      enqueueWebhookEvents(
        trx,
        rival.id,
        Array.from({ length: 30 }, (_, i) => ({ event: 'wishlist.shared' as const, data: { customerId: String(i) } })),
      ),
    )
    // Each worker gives the rival half its slots (it is alone): 2 × 4 attempts hang.
    await dead.waitFor(8)

    const victim = await t.createShop('scale')
    const healthy = await receiver()
    await hook(t, victim, `${healthy.url}/hook`, ['wishlist.shared'])
    const emittedAt = Date.now()
    await t.storage.db
      .transaction()
      .execute((trx) => enqueueWebhookEvents(trx, victim.id, [{ event: 'wishlist.shared', data: { customerId: 'victim' } }]))
    const [hit] = await healthy.waitFor(1, undefined, 10_000)
    // Without fairness it waited for the rival's attempts to time out (60 s here).
    expect(hit!.at - emittedAt).toBeLessThan(2_000)
    expect(held.every((res) => !res.writableEnded)).toBe(true)
    expect(held.length).toBeLessThanOrEqual(8)
  })
})

describe('erasure and webhook deliveries', () => {
  it('cancels what is only about the customer, removes them from lists, and queued signals never bring them back', async () => {
    const t = await app({ env: { WEBHOOK_RETRY_SCHEDULE: '3600' } })
    const shop = await t.createShop('scale')
    const admin = await shop.adminToken()
    const r = await receiver()
    const webhookId = await hook(t, shop, `${r.url}/hook`, ['wishlist.item.added', 'wishlist.product.back_in_stock'])
    const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks })
    cleanups.push(() => worker.stop())
    const erased = '7001'
    const other = '7002'
    const add = async (customerId: string, productId: string) =>
      expect((await t.call('POST', `/v1/wishlists/${customerId}/items`, { token: admin, body: { product_id: productId } })).status).toBe(
        201,
      )
    const restock = (productId: string, stock: number) =>
      t.call('POST', '/v1/events', { token: admin, body: { events: [productUpdate(productId, 1, 10, stock)] } })

    await restock('50', 0)
    await restock('51', 0)
    await add(erased, '50')
    await add(other, '50')
    await add(erased, '51') // product 51: only the erased customer holds it
    await restock('50', 3)
    await restock('51', 3)
    // The receiver fails: every delivery so far stays pending (retry in an hour).
    r.respond = (_req, res) => {
      res.writeHead(500).end()
    }
    await worker.runOnce()
    await restock('50', 0)
    await restock('50', 4) // queued: not yet written when the customer is erased
    await add(erased, '52') // in the outbox: not yet fanned out
    expect(await count(t, 'outbox_fan_outs', shop.id)).toBe(1)
    expect(await count(t, 'outbox', shop.id)).toBe(1)

    const res = await t.call('DELETE', `/v1/admin/customers/${erased}`, { token: admin })
    expect(res.status).toBe(200)
    // Pending: item.added 50 and 51 (cancelled), back-in-stock 51 (cancelled), back-in-stock 50 (rewritten).
    expect(res.body.data.webhookDeliveries).toBe(4)
    expect(await count(t, 'outbox', shop.id)).toBe(0)

    r.respond = (_req, res) => {
      res.writeHead(200).end()
    }
    const before = r.received.length
    await t.storage.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: 0 })
      .where('shop_id', '=', shop.id)
      .where('status', '=', 'pending')
      .execute()
    await worker.runOnce()
    const log = (await t.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries as {
      event: string
      status: string
      lastError: string | null
    }[]
    expect(
      log
        .filter((d) => d.lastError === CANCELLED_BY_ERASURE)
        .map((d) => [d.event, d.status])
        .sort(),
    ).toEqual([
      ['wishlist.item.added', 'failed'],
      ['wishlist.item.added', 'failed'],
      ['wishlist.product.back_in_stock', 'failed'],
    ])
    const sent = r.received.slice(before).map((x) => JSON.parse(x.body) as { event: string; data: Record<string, unknown> })
    // What was sent after the erasure: the other customer's item and both restocks of 50, without the erased customer.
    expect(sent.map((b) => [b.event, b.data.customerIds ?? b.data.customerId]).sort()).toEqual([
      ['wishlist.item.added', other],
      ['wishlist.product.back_in_stock', [other]],
      ['wishlist.product.back_in_stock', [other]],
    ])
    for (const x of r.received.slice(before)) expect(x.body).not.toContain(`"${erased}"`)
    const bodies = await t.storage.db.selectFrom('webhook_deliveries').select('body').where('shop_id', '=', shop.id).execute()
    expect(bodies.filter((b) => b.body.includes(`"${erased}"`))).toEqual([])
  })
})
