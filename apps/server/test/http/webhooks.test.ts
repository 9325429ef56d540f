import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { isoMillis } from '../../src/lib/time.js'
import { enqueueWebhookEvents, type WebhookEventName } from '../../src/modules/events/outbox.js'
import { createWebhookWorker, type WebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

let t: TestApp
let shop: TestShop
let admin: string
let receiver: Receiver
let worker: WebhookWorker

// The clock is vitest's fake Date (the webhook code reads it through lib/time.ts): it stands
// still unless a test moves it, so a retry schedule of minutes runs at once, step by step.
// Timers stay real: the send timeout and the sockets.
const SCHEDULE_MS = [5_000, 300_000, 1_800_000]
/** Moves the clock on, as the wait before a retry. */
const later = (ms: number) => void vi.advanceTimersByTime(ms)

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] })
  // Retries 5 s, 5 min and 30 min after the failures before them, then failed (4 attempts); 1 s send timeout.
  t = await createTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: SCHEDULE_MS.map((ms) => ms / 1000).join(','), WEBHOOK_TIMEOUT_MS: '1000' } })
  shop = await t.createShop('free')
  admin = await shop.adminToken()
  receiver = await startReceiver()
  // Driven by hand (runOnce) so every step is deterministic.
  worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, leaseMs: 5_000 })
})
afterAll(async () => {
  await worker.stop()
  await receiver.close()
  await t.close()
  vi.useRealTimers()
})
beforeEach(async () => {
  receiver.received.length = 0
  receiver.respond = (_r, res) => {
    res.writeHead(200).end('ok')
  }
  // Each test starts with no endpoints.
  const list = await t.call('GET', '/v1/webhooks', { token: admin })
  for (const w of list.body.data.webhooks) await t.call('DELETE', `/v1/webhooks/${w.webhookId}`, { token: admin })
})

async function createWebhook(events: string[], path = '/hook', _shop: TestShop = shop, token = admin) {
  const res = await t.call('POST', '/v1/webhooks', { token, body: { url: `${receiver.url}${path}`, events } })
  expect(res.status).toBe(201)
  return res.body.data as { webhookId: string; url: string; events: string[]; createdAt: string; secret: string }
}

async function emit(event: WebhookEventName, data: Record<string, unknown>, shopId = shop.id) {
  await t.storage.db.transaction().execute((trx) => enqueueWebhookEvents(trx, shopId, [{ event, data }]))
}

/** One worker pass: fans the outbox out, then attempts what is due, and returns once every attempt it started has settled. */
const pass = () => worker.runOnce()

const deliveries = async (webhookId: string) =>
  (await t.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries

describe('webhook endpoints CRUD', () => {
  it('creates a webhook and shows its secret only once', async () => {
    const res = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: 'https://hooks.example.com/wishlist', events: ['wishlist.item.added', 'wishlist.shared'] },
    })
    expect(res.status).toBe(201)
    expect(res.headers['cache-control']).toBe('private, no-store')
    expect(res.body).toEqual({
      ok: true,
      data: {
        webhookId: expect.stringMatching(/^wh_/),
        url: 'https://hooks.example.com/wishlist',
        events: ['wishlist.item.added', 'wishlist.shared'],
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      },
    })
    const list = await t.call('GET', '/v1/webhooks', { token: admin })
    expect(list.status).toBe(200)
    expect(list.body.data.webhooks).toEqual([
      {
        webhookId: res.body.data.webhookId,
        url: 'https://hooks.example.com/wishlist',
        events: ['wishlist.item.added', 'wishlist.shared'],
        createdAt: res.body.data.createdAt,
      },
    ])
    expect(JSON.stringify(list.body)).not.toContain('whsec_')
  })

  it('validates the URL and the event names', async () => {
    const cases = [
      { url: 'not a url', events: ['wishlist.shared'] },
      { url: 'ftp://hooks.example.com/', events: ['wishlist.shared'] },
      { url: 'https://user:pw@hooks.example.com/', events: ['wishlist.shared'] },
      { url: 'https://hooks.example.com/', events: [] },
      { url: 'https://hooks.example.com/', events: ['wishlist.item.updated'] },
      { url: 'https://hooks.example.com/' },
    ]
    for (const body of cases) {
      const res = await t.call('POST', '/v1/webhooks', { token: admin, body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect((await t.call('GET', '/v1/webhooks', { token: admin })).body.data.webhooks).toEqual([])
  })

  it('allows 20 webhooks per shop and refuses the 21st with WEBHOOK_LIMIT', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await t.call('POST', '/v1/webhooks', {
        token: admin,
        body: { url: `https://hooks.example.com/${i}`, events: ['wishlist.shared'] },
      })
      expect(res.status).toBe(201)
    }
    const over = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: 'https://hooks.example.com/21', events: ['wishlist.shared'] },
    })
    expect(over.status).toBe(400)
    expect(over.body.error.code).toBe('WEBHOOK_LIMIT')
    // Another shop has its own budget.
    const other = await t.createShop('free')
    const res = await t.call('POST', '/v1/webhooks', {
      token: await other.adminToken(),
      body: { url: 'https://hooks.example.com/x', events: ['wishlist.shared'] },
    })
    expect(res.status).toBe(201)
  })

  it("deletes a webhook; unknown and other shops' webhooks are 404", async () => {
    const w = await createWebhook(['wishlist.shared'])
    const other = await t.createShop('free')
    const otherToken = await other.adminToken()
    expect((await t.call('DELETE', `/v1/webhooks/${w.webhookId}`, { token: otherToken })).status).toBe(404)
    expect((await t.call('GET', `/v1/webhooks/${w.webhookId}/deliveries`, { token: otherToken })).status).toBe(404)
    const del = await t.call('DELETE', `/v1/webhooks/${w.webhookId}`, { token: admin })
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ ok: true, data: { deleted: true } })
    const again = await t.call('DELETE', `/v1/webhooks/${w.webhookId}`, { token: admin })
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('NOT_FOUND')
    expect((await t.call('GET', '/v1/webhooks/wh_unknown/deliveries', { token: admin })).status).toBe(404)
    expect((await t.call('POST', '/v1/webhooks/wh_unknown/test', { token: admin })).status).toBe(404)
  })

  it('is for admin tokens only', async () => {
    const customer = await shop.customerToken('42')
    expect((await t.call('GET', '/v1/webhooks', { token: customer })).status).toBe(403)
    expect(
      (await t.call('POST', '/v1/webhooks', { token: customer, body: { url: 'https://hooks.example.com/', events: ['wishlist.shared'] } }))
        .status,
    ).toBe(403)
    expect((await t.call('GET', '/v1/webhooks', { headers: shop.guest('guest-1234') })).status).toBe(403)
    expect((await t.call('GET', '/v1/webhooks')).status).toBe(401)
  })
})

describe('delivery', () => {
  it('delivers subscribed events with Standard Webhooks headers and the documented payload', async () => {
    const w = await createWebhook(['wishlist.item.added'])
    await emit('wishlist.item.added', { customerId: '7', productId: '100', variantId: '200' })
    await emit('wishlist.item.removed', { customerId: '7', productId: '100' })
    await pass()
    await pass()
    expect(receiver.received).toHaveLength(1) // the unsubscribed event is not sent
    const [hit] = receiver.received
    expect(hit!.path).toBe('/hook')
    expect(hit!.headers['content-type']).toBe('application/json')
    expect(hit!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    expect(Math.abs(Number(hit!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30)
    // The reference library accepts our signature over the exact bytes received ...
    const verified = new Webhook(w.secret).verify(hit!.body, hit!.headers as Record<string, string>)
    expect(verified).toEqual({
      event: 'wishlist.item.added',
      shopDomain: shop.domain,
      occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { customerId: '7', productId: '100', variantId: '200' },
    })
    // ... and refuses it under another secret or a changed body.
    const other = await createWebhook(['wishlist.shared'])
    expect(() => new Webhook(other.secret).verify(hit!.body, hit!.headers as Record<string, string>)).toThrow()
    expect(() => new Webhook(w.secret).verify(hit!.body.replace('"100"', '"101"'), hit!.headers as Record<string, string>)).toThrow()

    const log = await deliveries(w.webhookId)
    expect(log).toEqual([
      {
        id: hit!.headers['webhook-id'],
        event: 'wishlist.item.added',
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 200,
        lastError: null,
        nextAttemptAt: null,
        createdAt: expect.any(String),
      },
    ])
  })

  it('fans one event out to every subscribed endpoint of the shop only', async () => {
    const a = await createWebhook(['wishlist.shared'], '/a')
    const b = await createWebhook(['wishlist.shared', 'wishlist.item.added'], '/b')
    await createWebhook(['wishlist.item.removed'], '/c')
    const other = await t.createShop('free')
    await createWebhook(['wishlist.shared'], '/other', other, await other.adminToken())
    await emit('wishlist.shared', { customerId: '9' })
    await pass()
    await pass()
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/a', '/b'])
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(2)
    expect((await deliveries(a.webhookId))[0].status).toBe('succeeded')
    expect((await deliveries(b.webhookId))[0].status).toBe('succeeded')
  })

  it('retries a failed attempt with the same webhook-id and a fresh signature', async () => {
    const w = await createWebhook(['wishlist.item.added'])
    let calls = 0
    receiver.respond = (_r, res) => {
      calls++
      res.writeHead(calls === 1 ? 500 : 204).end()
    }
    await emit('wishlist.item.added', { customerId: '1', productId: '2', variantId: '3' })
    const failedAt = Date.now()
    await pass()
    expect(receiver.received).toHaveLength(1)
    const pending = (await deliveries(w.webhookId))[0]
    expect(pending).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: 500,
      nextAttemptAt: isoMillis(failedAt + SCHEDULE_MS[0]!),
    })
    later(SCHEDULE_MS[0]! - 1)
    await pass()
    expect(receiver.received).toHaveLength(1) // not due yet
    later(1)
    await pass()
    expect(receiver.received).toHaveLength(2)
    const [first, second] = receiver.received
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id'])
    for (const r of [first!, second!]) expect(() => new Webhook(w.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow()
    expect(second!.body).toBe(first!.body)
    expect((await deliveries(w.webhookId))[0]).toMatchObject({ status: 'succeeded', attempts: 2, lastStatusCode: 204, nextAttemptAt: null })
  })

  it('marks the delivery failed after the last retry of the schedule', async () => {
    const w = await createWebhook(['wishlist.shared'])
    receiver.respond = (_r, res) => {
      res.writeHead(503).end('down')
    }
    await emit('wishlist.shared', { customerId: '1' })
    await pass()
    for (const [i, wait] of SCHEDULE_MS.entries()) {
      const retryAt = Date.now() + wait
      expect((await deliveries(w.webhookId))[0]).toMatchObject({ status: 'pending', attempts: i + 1, nextAttemptAt: isoMillis(retryAt) })
      later(wait)
      await pass()
      expect(receiver.received).toHaveLength(i + 2)
    }
    expect(receiver.received).toHaveLength(4) // the first attempt and 3 retries
    expect((await deliveries(w.webhookId))[0]).toMatchObject({ status: 'failed', attempts: 4, lastStatusCode: 503, nextAttemptAt: null })
    later(3_600_000) // an hour on (the admin token lasts a day of this clock)
    await pass()
    expect(receiver.received).toHaveLength(4)
  })

  it('disables the webhook when the receiver answers 410 Gone', async () => {
    const w = await createWebhook(['wishlist.shared'])
    receiver.respond = (_r, res) => {
      res.writeHead(410).end()
    }
    await emit('wishlist.shared', { customerId: '1' })
    await pass()
    expect(receiver.received).toHaveLength(1)
    expect((await deliveries(w.webhookId))[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410, nextAttemptAt: null })
    receiver.respond = (_r, res) => {
      res.writeHead(200).end()
    }
    await emit('wishlist.shared', { customerId: '2' })
    later(SCHEDULE_MS[0]!)
    await pass()
    await pass()
    expect(receiver.received).toHaveLength(1)
    expect(await deliveries(w.webhookId)).toHaveLength(1)
  })

  it('sends nothing more after the webhook is deleted', async () => {
    const w = await createWebhook(['wishlist.shared'])
    receiver.respond = (_r, res) => {
      res.writeHead(500).end()
    }
    await emit('wishlist.shared', { customerId: '1' })
    await pass() // one failed attempt, a retry is due in 5 s
    expect(receiver.received).toHaveLength(1)
    await emit('wishlist.shared', { customerId: '2' }) // not even fanned out yet
    expect((await t.call('DELETE', `/v1/webhooks/${w.webhookId}`, { token: admin })).status).toBe(200)
    for (const wait of SCHEDULE_MS) {
      later(wait)
      await pass()
    }
    expect(receiver.received).toHaveLength(1)
  })

  it('does not follow redirects', async () => {
    const w = await createWebhook(['wishlist.shared'], '/moved')
    receiver.respond = (r, res) => {
      if (r.path === '/moved') res.writeHead(302, { location: `${receiver.url}/elsewhere` }).end()
      else res.writeHead(200).end()
    }
    await emit('wishlist.shared', { customerId: '1' })
    await pass() // the attempt has settled: a followed redirect would have been part of it
    expect(receiver.received.map((r) => r.path)).toEqual(['/moved'])
    expect((await deliveries(w.webhookId))[0]).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 302 })
  })

  it('gives up an attempt after the timeout and keeps only the start of a large response body', async () => {
    const w = await createWebhook(['wishlist.shared', 'wishlist.item.added'])
    receiver.respond = (r, res) => {
      if (r.body.includes('wishlist.shared')) return // never answers
      res.writeHead(500, { 'content-type': 'text/plain' }).end('x'.repeat(50_000))
    }
    await emit('wishlist.shared', { customerId: '1' })
    await emit('wishlist.item.added', { customerId: '1', productId: '2', variantId: '3' })
    const started = performance.now() // the send timeout is a real timer
    await pass()
    expect(performance.now() - started).toBeLessThan(5_000)
    const log = await deliveries(w.webhookId)
    expect(log.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([
      ['pending', 1],
      ['pending', 1],
    ])
    const attempts = await t.storage.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('shop_id', '=', shop.id)
      .where(
        'delivery_id',
        'in',
        log.map((d: { id: string }) => d.id),
      )
      .execute()
    const timedOut = attempts.find((a) => a.status_code === null)
    const large = attempts.find((a) => a.status_code === 500)
    expect(timedOut?.error).toBe('timeout')
    expect(large?.response_body).toBe('x'.repeat(1024))
  })
})

describe('POST /v1/webhooks/{id}/test', () => {
  it('sends a signed webhook.test event now and logs it', async () => {
    const w = await createWebhook(['wishlist.item.removed'])
    const res = await t.call('POST', `/v1/webhooks/${w.webhookId}/test`, { token: admin })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      delivered: true,
      error: null,
      delivery: { event: 'webhook.test', status: 'succeeded', attempts: 1, lastStatusCode: 200 },
    })
    expect(receiver.received).toHaveLength(1)
    const payload = new Webhook(w.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>)
    expect(payload).toMatchObject({ event: 'webhook.test', shopDomain: shop.domain, data: { webhookId: w.webhookId } })
    expect(receiver.received[0]!.headers['webhook-id']).toBe(res.body.data.delivery.id)
    expect((await deliveries(w.webhookId))[0]).toMatchObject({ id: res.body.data.delivery.id, event: 'webhook.test', status: 'succeeded' })
  })

  it('reports a failing receiver without retrying the test', async () => {
    const w = await createWebhook(['wishlist.item.removed'])
    receiver.respond = (_r, res) => {
      res.writeHead(500).end('secret internals')
    }
    const res = await t.call('POST', `/v1/webhooks/${w.webhookId}/test`, { token: admin })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      delivered: false,
      delivery: { status: 'failed', attempts: 1, lastStatusCode: 500, nextAttemptAt: null },
    })
    expect(JSON.stringify(res.body)).not.toContain('secret internals')
    later(SCHEDULE_MS[0]!)
    await pass()
    expect(receiver.received).toHaveLength(1)
  })
})

describe('deliveries log', () => {
  it('lists newest first and validates limit', async () => {
    const w = await createWebhook(['wishlist.shared'])
    for (let i = 0; i < 3; i++) {
      await emit('wishlist.shared', { customerId: String(i) })
      later(2)
    }
    await pass()
    expect(receiver.received).toHaveLength(3)
    const res = await t.call('GET', `/v1/webhooks/${w.webhookId}/deliveries?limit=2`, { token: admin })
    expect(res.status).toBe(200)
    expect(res.body.data.deliveries).toHaveLength(2)
    const all = await deliveries(w.webhookId)
    expect(all).toHaveLength(3)
    expect([...all].map((d: { createdAt: string }) => d.createdAt)).toEqual(
      [...all]
        .map((d: { createdAt: string }) => d.createdAt)
        .sort()
        .reverse(),
    )
    expect((await t.call('GET', `/v1/webhooks/${w.webhookId}/deliveries?limit=101`, { token: admin })).status).toBe(400)
    expect((await t.call('GET', `/v1/webhooks/${w.webhookId}/deliveries?limit=0`, { token: admin })).status).toBe(400)
  })
})
