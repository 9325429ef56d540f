/**
 * verifyWebhook against the Standard Webhooks reference library (`standardwebhooks`, which the
 * server signs with too) and against deliveries of the real server: a test event and an event
 * caused by an SDK call, received on a real HTTP endpoint.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from 'vitest'
import {
  createWishlistClient,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventMap,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
  type webhooks,
  type WishlistItemAddedEvent,
} from '../src/index.js'
import { type RunningServer, startServer } from './helpers/server.js'

const SECRET = `whsec_${Buffer.from('a-32-byte-secret-for-the-tests!!').toString('base64')}`
const OTHER_SECRET = `whsec_${Buffer.from('another-32-byte-secret-for-tests').toString('base64')}`

const event = {
  event: 'wishlist.item.added',
  shopDomain: 'example.myshopify.com',
  occurredAt: '2026-01-02T03:04:05.678Z',
  data: { customerId: '1001', productId: '7001', variantId: '70011', wishlistId: 'default' },
}
const BODY = JSON.stringify(event)

/** Headers as the reference library signs them, `at` seconds from now. */
function signed(body: string, opts: { secret?: string; id?: string; at?: number } = {}) {
  const id = opts.id ?? 'dlv_019bd1a2b3c4Xk2m9Qp4Rt7sVw'
  const at = new Date(Date.now() + (opts.at ?? 0) * 1000)
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(opts.secret ?? SECRET).sign(id, at, body),
  }
}

async function refusal(promise: Promise<unknown>): Promise<WebhookVerificationErrorCode> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(WebhookVerificationError)
  expect((err as WebhookVerificationError).name).toBe('WebhookVerificationError')
  return (err as WebhookVerificationError).code
}

/** The reference library's own verdict on the same delivery. */
function referenceAccepts(secret: string, headers: Record<string, string>, body: string): boolean {
  try {
    new Webhook(secret).verify(body, headers)
    return true
  } catch {
    return false
  }
}

describe('payloads signed by the Standard Webhooks reference library', () => {
  test('verify and come back parsed, typed by their event', async () => {
    const payload = await verifyWebhook(SECRET, signed(BODY), BODY)
    expect(payload).toEqual(event)
    if (payload.event !== 'wishlist.item.added') throw new Error(`unexpected ${payload.event}`)
    expectTypeOf(payload).toEqualTypeOf<WishlistItemAddedEvent>()
    expect(payload.data.productId).toBe('7001')
  })

  test('the body may be a string, bytes (a Buffer too) or an ArrayBuffer; UTF-8 is signed as bytes', async () => {
    const body = JSON.stringify({ ...event, data: { ...event.data, productId: 'Schuh – grün ✓' } })
    const headers = signed(body)
    const bytes = new TextEncoder().encode(body)
    for (const raw of [body, bytes, Buffer.from(body), bytes.buffer]) {
      const payload = await verifyWebhook(SECRET, headers, raw)
      expect(payload.data).toMatchObject({ productId: 'Schuh – grün ✓' })
    }
  })

  test('headers as a Headers instance, or a plain object whose names have any case', async () => {
    const headers = signed(BODY)
    await expect(verifyWebhook(SECRET, new Headers(headers), BODY)).resolves.toEqual(event)
    const shouting = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]))
    await expect(verifyWebhook(SECRET, shouting, BODY)).resolves.toEqual(event)
    const mixed = {
      'Webhook-Id': headers['webhook-id'],
      'Webhook-Timestamp': headers['webhook-timestamp'],
      'Webhook-Signature': headers['webhook-signature'],
    }
    await expect(verifyWebhook(SECRET, mixed, BODY)).resolves.toEqual(event)
  })

  test('one matching signature among several space-separated ones is enough (secret rotation)', async () => {
    const headers = signed(BODY)
    const old = signed(BODY, { secret: OTHER_SECRET })['webhook-signature']
    const several = { ...headers, 'webhook-signature': `${old} v1a,c29tZXRoaW5nIGVsc2U= ${headers['webhook-signature']}` }
    await expect(verifyWebhook(SECRET, several, BODY)).resolves.toEqual(event)
    await expect(verifyWebhook(OTHER_SECRET, several, BODY)).resolves.toEqual(event)
    expect(await refusal(verifyWebhook(SECRET, { ...headers, 'webhook-signature': `${old} v1a,c29tZXRoaW5nIGVsc2U=` }, BODY))).toBe(
      'INVALID_SIGNATURE',
    )
  })

  test('a changed body, id or timestamp, or another secret, fails as the reference library fails it', async () => {
    const headers = signed(BODY)
    const cases: [string, Record<string, string>, string][] = [
      ['body', headers, BODY.replace('7001', '7002')],
      ['body whitespace', headers, `${BODY}\n`],
      ['id', { ...headers, 'webhook-id': 'dlv_another' }, BODY],
      ['timestamp', { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }, BODY],
      [
        'signature',
        { ...headers, 'webhook-signature': headers['webhook-signature'].replace(/(?<=^v1,)./, (c) => (c === 'A' ? 'B' : 'A')) },
        BODY,
      ],
    ]
    for (const [what, h, body] of cases) {
      expect(await refusal(verifyWebhook(SECRET, h, body)), what).toBe('INVALID_SIGNATURE')
      expect(referenceAccepts(SECRET, h, body), what).toBe(false)
    }
    expect(await refusal(verifyWebhook(OTHER_SECRET, headers, BODY))).toBe('INVALID_SIGNATURE')
    expect(referenceAccepts(OTHER_SECRET, headers, BODY)).toBe(false)
  })

  test('a timestamp more than 5 minutes old or ahead fails; within 5 minutes it passes', async () => {
    for (const [at, code] of [
      [-301, 'TIMESTAMP_TOO_OLD'],
      [-3600, 'TIMESTAMP_TOO_OLD'],
      [301, 'TIMESTAMP_TOO_NEW'],
      [86_400, 'TIMESTAMP_TOO_NEW'],
    ] as const) {
      const headers = signed(BODY, { at })
      expect(await refusal(verifyWebhook(SECRET, headers, BODY)), `${at} s`).toBe(code)
      expect(referenceAccepts(SECRET, headers, BODY), `${at} s`).toBe(false)
    }
    for (const at of [-290, 290]) {
      const headers = signed(BODY, { at })
      await expect(verifyWebhook(SECRET, headers, BODY)).resolves.toEqual(event)
      expect(referenceAccepts(SECRET, headers, BODY)).toBe(true)
    }
    // A replay an hour later is refused; a wider tolerance is the receiver's own choice.
    const hourOld = signed(BODY, { at: -3600 })
    await expect(verifyWebhook(SECRET, hourOld, BODY, { toleranceSeconds: 7200 })).resolves.toEqual(event)
    expect(await refusal(verifyWebhook(SECRET, { ...hourOld, 'webhook-timestamp': '1767323045.5' }, BODY))).toBe('INVALID_TIMESTAMP')
  })

  test('a missing or empty header fails before anything else', async () => {
    const headers = signed(BODY)
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _dropped, ...without } = headers
      expect(await refusal(verifyWebhook(SECRET, without, BODY)), name).toBe('MISSING_HEADERS')
      expect(await refusal(verifyWebhook(SECRET, { ...headers, [name]: ' ' }, BODY)), name).toBe('MISSING_HEADERS')
    }
    expect(await refusal(verifyWebhook(SECRET, {}, BODY))).toBe('MISSING_HEADERS')
  })

  test('a secret that is not whsec_ + base64 is refused; the bare base64 part works too', async () => {
    expect(await refusal(verifyWebhook('whsec_not*base64', signed(BODY), BODY))).toBe('INVALID_SECRET')
    expect(await refusal(verifyWebhook('whsec_', signed(BODY), BODY))).toBe('INVALID_SECRET')
    await expect(verifyWebhook(SECRET.slice('whsec_'.length), signed(BODY), BODY)).resolves.toEqual(event)
  })

  test('a correctly signed body that is not a JSON event object is INVALID_PAYLOAD', async () => {
    for (const body of ['not json', '[1,2]', '{"data":{}}', 'null']) {
      expect(await refusal(verifyWebhook(SECRET, signed(body), body)), body).toBe('INVALID_PAYLOAD')
    }
  })
})

test('WebhookEvent is the union of every entry of the document’s webhooks, discriminated by event', () => {
  expectTypeOf<WebhookEvent['event']>().toEqualTypeOf<keyof webhooks>()
  expectTypeOf<keyof WebhookEventMap>().toEqualTypeOf<keyof webhooks>()
  expectTypeOf<Extract<WebhookEvent, { event: 'wishlist.item.removed' }>>().toEqualTypeOf<WebhookEventMap['wishlist.item.removed']>()
  expectTypeOf<WebhookEventMap['wishlist.product.back_in_stock']['data']>().toHaveProperty('customerIds')
  expectTypeOf<WebhookEventMap['review.requested']['data']>().toHaveProperty('reviewUrl')
  expectTypeOf<WebhookEventMap['webhook.test']['data']>().toHaveProperty('webhookId')
  expect(true).toBe(true)
})

describe('deliveries of the real server', () => {
  interface Delivery {
    headers: IncomingHttpHeaders
    body: Buffer
  }
  let server: RunningServer
  const deliveries: Delivery[] = []
  const waiting: (() => void)[] = []
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks) })
      for (const wake of waiting.splice(0)) wake()
      res.writeHead(204).end()
    })
  })
  /** The first delivery whose body names `eventName`, once it has arrived. */
  function delivery(eventName: string): Promise<Delivery> {
    return new Promise((resolve) => {
      const look = () => {
        const found = deliveries.find((d) => d.body.toString('utf8').includes(`"event":"${eventName}"`))
        if (found) resolve(found)
        else waiting.push(look)
      }
      look()
    })
  }

  beforeAll(async () => {
    // The worker delivers events within 50 ms of being woken.
    server = await startServer({ WEBHOOK_POLL_INTERVAL_MS: '50' }, { worker: true })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  })
  afterAll(async () => {
    await server.close()
    await new Promise<void>((resolve) => receiver.close(() => resolve()))
  })

  test("the test event and a wishlist event verify with the endpoint's secret, and only with it", async () => {
    const shop = await server.createShop('growth')
    const admin = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: shop.keyId, apiSecret: shop.secret } })
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const endpoint = await admin.webhooks.create({ url, events: ['wishlist.item.added'] })
    expect(endpoint.secret).toMatch(/^whsec_/)

    expect((await admin.webhooks.test(endpoint.webhookId)).delivery.status).toBe('succeeded')
    const ping = await delivery('webhook.test')
    const test = await verifyWebhook(endpoint.secret, ping.headers, ping.body)
    if (test.event !== 'webhook.test') throw new Error(`unexpected ${test.event}`)
    expect(test.data.webhookId).toBe(endpoint.webhookId)
    expect(test.shopDomain).toBe(shop.domain)

    const customer = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret, customerId: '5005' },
    })
    await customer.wishlist.add('5005', { product_id: '9001' })
    const added = await delivery('wishlist.item.added')
    const payload = await verifyWebhook(endpoint.secret, added.headers, new Uint8Array(added.body))
    expect(payload.event).toBe('wishlist.item.added')
    if (payload.event !== 'wishlist.item.added') return
    expect(payload.data).toMatchObject({ customerId: '5005', productId: '9001', wishlistId: 'default' })
    expect(added.headers['webhook-id']).toMatch(/^dlv_/)

    // The same delivery as a fetch handler sees it (a Headers instance, the body as text).
    const headers = new Headers(Object.entries(added.headers).map(([k, v]) => [k, String(v)] as [string, string]))
    await expect(verifyWebhook(endpoint.secret, headers, added.body.toString('utf8'))).resolves.toEqual(payload)

    expect(await refusal(verifyWebhook(OTHER_SECRET, added.headers, added.body))).toBe('INVALID_SIGNATURE')
    const tampered = Buffer.from(added.body.toString('utf8').replace('9001', '9002'))
    expect(await refusal(verifyWebhook(endpoint.secret, added.headers, tampered))).toBe('INVALID_SIGNATURE')
    // Replayed ten minutes after it was sent.
    const later = Date.now() + 10 * 60 * 1000
    expect(await refusal(verifyWebhook(endpoint.secret, added.headers, added.body, { now: () => later }))).toBe('TIMESTAMP_TOO_OLD')
  })
})
