import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enqueueWebhookEvents } from '../../src/modules/events/outbox.js'
import type { ResolveHost } from '../../src/modules/webhooks/ssrf-guard.js'
import { createWebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

// The SSRF guard on (WEBHOOK_ALLOW_PRIVATE_TARGETS=false), plain http allowed so a local
// receiver can prove that nothing reaches it. A name the test controls resolves to loopback.
const resolve: ResolveHost = async (host) =>
  host === 'hooks.example.test'
    ? [{ address: '127.0.0.1', family: 4 }]
    : host === 'compat.example.test'
      ? [{ address: '::127.0.0.1', family: 6 }]
      : []

let t: TestApp
let strict: TestApp
let shop: TestShop
let admin: string
let receiver: Receiver

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_ALLOW_INSECURE: 'true' }, webhookResolve: resolve })
  strict = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_ALLOW_INSECURE: 'false' } })
  shop = await t.createShop('free')
  admin = await shop.adminToken()
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
  await strict.close()
  await t.close()
})

describe('SSRF guard', () => {
  it.each([
    'http://127.0.0.1:{port}/hook',
    'http://[::ffff:127.0.0.1]:{port}/hook',
    'http://[::1]:{port}/hook',
    'http://2130706433:{port}/hook',
    'http://0x7f.0.0.1:{port}/hook',
    'http://localhost:{port}/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://100.64.0.1/',
    'http://[fd00::1]/',
    'http://[ff02::1]/',
    'http://[::127.0.0.1]:{port}/hook',
    'http://[::7f00:1]:{port}/hook',
    'http://[::8.8.8.8]/',
  ])('refuses %s at creation', async (template) => {
    const res = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: template.replace('{port}', String(receiver.port)), events: ['wishlist.shared'] },
    })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'body.url', message: expect.stringMatching(/^must not point to/) }],
    })
  })

  it('requires https unless WEBHOOK_ALLOW_INSECURE is on', async () => {
    const s = await strict.createShop('free')
    const token = await s.adminToken()
    const http = await strict.call('POST', '/v1/webhooks', {
      token,
      body: { url: 'http://hooks.example.com/', events: ['wishlist.shared'] },
    })
    expect(http.status).toBe(400)
    expect(http.body.error.details).toEqual([{ path: 'body.url', message: 'must use https' }])
    const https = await strict.call('POST', '/v1/webhooks', {
      token,
      body: { url: 'https://hooks.example.com/', events: ['wishlist.shared'] },
    })
    expect(https.status).toBe(201)
  })

  it('refuses to deliver to a name that resolves to loopback', async () => {
    const created = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: `http://hooks.example.test:${receiver.port}/hook`, events: ['wishlist.shared'] },
    })
    expect(created.status).toBe(201) // the URL alone does not show where the name points
    const webhookId = created.body.data.webhookId

    const test = await t.call('POST', `/v1/webhooks/${webhookId}/test`, { token: admin })
    expect(test.status).toBe(200)
    // The merchant learns that the target is not allowed, never the address it resolved to.
    expect(test.body.data).toMatchObject({
      delivered: false,
      error: 'target not allowed',
      delivery: { status: 'failed', lastStatusCode: null, lastError: 'target not allowed' },
    })
    expect(JSON.stringify(test.body)).not.toContain('127.0.0.1')

    await t.storage.db
      .transaction()
      .execute((trx) => enqueueWebhookEvents(trx, shop.id, [{ event: 'wishlist.shared', data: { customerId: '1' } }]))
    const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, resolve })
    try {
      expect(await worker.runOnce()).toEqual({ dispatched: 1, attempted: 1 })
    } finally {
      await worker.stop()
    }
    const log = (await t.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries
    expect(log.find((d: { event: string }) => d.event === 'wishlist.shared')).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'target not allowed',
    })
    expect(JSON.stringify(log)).not.toContain('127.0.0.1')
    expect(receiver.received).toHaveLength(0)
  })

  it('refuses to deliver to a name that resolves to IPv4-compatible IPv6 (::/96); the address stays in the server log', async () => {
    const created = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: `http://compat.example.test:${receiver.port}/hook`, events: ['wishlist.shared'] },
    })
    expect(created.status).toBe(201)
    const webhookId = created.body.data.webhookId
    const test = await t.call('POST', `/v1/webhooks/${webhookId}/test`, { token: admin })
    expect(test.body.data).toMatchObject({
      delivered: false,
      error: 'target not allowed',
      delivery: { status: 'failed', lastError: 'target not allowed' },
    })

    await t.storage.db
      .transaction()
      .execute((trx) => enqueueWebhookEvents(trx, shop.id, [{ event: 'wishlist.shared', data: { customerId: '2' } }]))
    const warnings: object[] = []
    const log = { info() {}, error() {}, warn: (obj: object) => warnings.push(obj) }
    const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, resolve, log })
    try {
      await worker.runOnce()
    } finally {
      await worker.stop()
    }
    const deliveries = (await t.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries
    expect(deliveries.map((d: { lastError: string }) => d.lastError)).toEqual(['target not allowed', 'target not allowed'])
    expect(JSON.stringify(deliveries)).not.toContain('127.0.0.1')
    expect(warnings.filter((w) => (w as { webhookId?: string }).webhookId === webhookId)).toEqual([
      expect.objectContaining({ error: 'target not allowed', refusal: expect.stringContaining('::127.0.0.1') }),
    ])
    expect(receiver.received).toHaveLength(0)
  })
})
