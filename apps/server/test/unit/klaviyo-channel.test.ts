/**
 * The Klaviyo channel (docs/notifications.md) through Klaviyo's official client against the
 * local Klaviyo emulator: every request is checked there against the client's own request
 * models, the key's header and the revision.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { NOTIFICATION_SIGNALS, type NotificationMessage, type NotificationSignal } from '../../src/modules/notifications/channel.js'
import {
  checkKey,
  createKlaviyoChannel,
  KLAVIYO_METRICS,
  requestProfileDeletion,
  retryAfterMs,
} from '../../src/modules/notifications/klaviyo.js'
import { type KlaviyoEmulator, modelProblems, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'

const KEY = 'pk_0123456789abcdef0123456789abcdef01'
const OTHER_KEY = 'pk_fedcba9876543210fedcba9876543210fe'
let klaviyo: KlaviyoEmulator
let opts: { baseUrl: string; timeoutMs: number }

beforeAll(async () => {
  klaviyo = await startKlaviyoEmulator({ keys: { [KEY]: 'ACCT1', [OTHER_KEY]: 'ACCT2' } })
  opts = { baseUrl: klaviyo.url, timeoutMs: 5_000 }
})
afterAll(() => klaviyo.close())
beforeEach(() => {
  klaviyo.requests.length = 0
  klaviyo.setRateLimit(undefined)
})

let counter = 0
const message = (signal: NotificationSignal, over: Partial<NotificationMessage['product']> = {}): NotificationMessage => ({
  id: `ntf_${++counter}_${signal}`,
  shopId: 'shop_1',
  signal,
  occurredAt: Date.UTC(2026, 10, 29, 8, 30, 15, 250),
  shopper: { customerId: `${7000 + counter}`, email: `shopper${counter}@example.com` },
  product: {
    productId: '7001',
    variantId: '42001',
    title: 'Linen shirt',
    url: 'https://shop.example.com/products/linen-shirt',
    imageUrl: 'https://cdn.example.com/linen.jpg',
    price: '39.90',
    previousPrice: signal === 'price_drop' ? '49.90' : null,
    currency: 'EUR',
    inventoryQuantity: signal === 'low_stock' ? 2 : null,
    ...over,
  },
  optOutUrl: 'https://wishlist.test/notifications/opt-out?t=abc',
})

describe('sending the five events', () => {
  it.each(NOTIFICATION_SIGNALS)(
    '%s: one Create Event request that the emulator takes, with the event Klaviyo would record',
    async (signal) => {
      const m = message(signal)
      expect(await createKlaviyoChannel(KEY, opts).send(m)).toEqual({ ok: true })
      const [req, ...more] = klaviyo.of('POST', '/api/events')
      expect(more).toEqual([])
      expect(req!.status).toBe(202)
      expect(req!.problems).toEqual([])
      expect(req!.headers.authorization).toBe(`Klaviyo-API-Key ${KEY}`)
      expect(req!.headers.revision).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(req!.body).toEqual({
        data: {
          type: 'event',
          attributes: {
            properties: {
              Signal: signal,
              ProductID: '7001',
              VariantID: '42001',
              ProductName: 'Linen shirt',
              URL: 'https://shop.example.com/products/linen-shirt',
              ImageURL: 'https://cdn.example.com/linen.jpg',
              Price: '39.90',
              ...(signal === 'price_drop' ? { PreviousPrice: '49.90' } : {}),
              Currency: 'EUR',
              ...(signal === 'low_stock' ? { InventoryQuantity: 2 } : {}),
              OptOutURL: m.optOutUrl,
            },
            time: '2026-11-29T08:30:15.250Z',
            value: 39.9,
            value_currency: 'EUR',
            unique_id: m.id,
            metric: { data: { type: 'metric', attributes: { name: KLAVIYO_METRICS[signal] } } },
            profile: { data: { type: 'profile', attributes: { email: m.shopper.email, external_id: m.shopper.customerId } } },
          },
        },
      })
    },
  )

  it('the metric names are the ones the merchant builds flows on', () => {
    expect(Object.values(KLAVIYO_METRICS)).toEqual([
      'Wishlist Back In Stock',
      'Wishlist Price Drop',
      'Wishlist Low Stock',
      'Wishlist Reminder',
      'Wishlist Item Added',
    ])
  })

  it('a product without price, variant or image: those properties and the value are left out, and the request is still valid', async () => {
    const m = message('reminder', { variantId: null, imageUrl: null, price: null, currency: null, title: null, url: null })
    expect(await createKlaviyoChannel(KEY, opts).send(m)).toEqual({ ok: true })
    const [req] = klaviyo.of('POST', '/api/events')
    expect(req!.problems).toEqual([])
    const attributes = (req!.body as { data: { attributes: Record<string, unknown> } }).data.attributes
    expect(attributes.properties).toEqual({ Signal: 'reminder', ProductID: '7001', OptOutURL: m.optOutUrl })
    expect(attributes).not.toHaveProperty('value')
    expect(attributes).not.toHaveProperty('value_currency')
  })
})

describe('the emulator checks what it receives against the client', () => {
  it('refuses a body that breaks the client model (unknown field, missing required field, wrong type)', () => {
    const good = {
      data: {
        type: 'event',
        attributes: {
          properties: {},
          metric: { data: { type: 'metric', attributes: { name: 'X' } } },
          profile: { data: { type: 'profile', attributes: { email: 'a@b.c' } } },
        },
      },
    }
    expect(modelProblems(good, 'EventCreateQueryV2')).toEqual([])
    const bad = structuredClone(good) as { data: { attributes: Record<string, unknown>; type: string } }
    bad.data.type = 'events'
    delete bad.data.attributes.metric
    bad.data.attributes.uniqueId = 'camel case is not what Klaviyo takes'
    bad.data.attributes.value = '12'
    expect(modelProblems(bad, 'EventCreateQueryV2').sort()).toEqual([
      'body.data.attributes.metric is required (EventCreateQueryV2ResourceObjectAttributes)',
      'body.data.attributes.uniqueId is not a field of EventCreateQueryV2ResourceObjectAttributes',
      'body.data.attributes.value must be a number',
      'body.data.type must be one of event',
    ])
  })
})

describe('failures', () => {
  it('429 with Retry-After (the key over its rate limit): retried after the seconds Klaviyo names', async () => {
    klaviyo.setRateLimit({ burstPerSecond: 1000, steadyPerMinute: 2 })
    const channel = createKlaviyoChannel(KEY, opts)
    expect(await channel.send(message('back_in_stock'))).toEqual({ ok: true })
    expect(await channel.send(message('back_in_stock'))).toEqual({ ok: true })
    const limited = await channel.send(message('back_in_stock'))
    const answered = klaviyo.of('POST', '/api/events').at(-1)!
    expect(answered.status).toBe(429)
    const seconds = Number(answered.answerHeaders['retry-after'])
    expect(seconds).toBeGreaterThanOrEqual(1)
    expect(seconds).toBeLessThanOrEqual(60)
    expect(limited).toMatchObject({ ok: false, permanent: false, retryAfterMs: seconds * 1000 })
    if (limited.ok) throw new Error('expected a failure')
    expect(limited.reason).toContain('HTTP 429')
    expect(limited.reason).toContain('throttled')
    // Another key has its own budget in the emulator (Klaviyo counts per account; one key per account here).
    expect(await createKlaviyoChannel(OTHER_KEY, opts).send(message('back_in_stock'))).toEqual({ ok: true })
  })

  it('503 with Retry-After and 500 without: retried, at the time named or the caller’s', async () => {
    const channel = createKlaviyoChannel(KEY, opts)
    klaviyo.failNext(1, 503, 30)
    expect(await channel.send(message('price_drop'))).toMatchObject({ ok: false, permanent: false, retryAfterMs: 30_000 })
    klaviyo.failNext(1, 500)
    expect(await channel.send(message('price_drop'))).toMatchObject({ ok: false, permanent: false, retryAfterMs: null })
    // One attempt per send: the client's own retry loop does not send again.
    expect(klaviyo.of('POST', '/api/events')).toHaveLength(2)
    expect(await channel.send(message('price_drop'))).toEqual({ ok: true })
  })

  it('an outage (nothing listening): retried later, and the reason never carries the key', async () => {
    const channel = createKlaviyoChannel(KEY, opts)
    await klaviyo.goDown()
    try {
      const down = await channel.send(message('low_stock'))
      expect(down).toMatchObject({ ok: false, permanent: false, retryAfterMs: null })
      if (down.ok) throw new Error('expected a failure')
      expect(down.reason).toMatch(/^klaviyo unreachable: (ECONNREFUSED|ECONNRESET)$/)
      expect(down.reason).not.toContain(KEY)
      expect(await checkKey(KEY, opts)).toMatchObject({ state: 'unreachable' })
    } finally {
      await klaviyo.comeBack()
    }
    expect(await channel.send(message('low_stock'))).toEqual({ ok: true })
  })

  it('Klaviyo hangs: the call gives up after its timeout, to be retried', async () => {
    const release = klaviyo.hold()
    try {
      const started = performance.now()
      const res = await createKlaviyoChannel(KEY, { baseUrl: klaviyo.url, timeoutMs: 300 }).send(message('reminder'))
      expect(res).toMatchObject({ ok: false, permanent: false, retryAfterMs: null })
      if (res.ok) throw new Error('expected a failure')
      expect(res.reason).toBe('klaviyo unreachable: ECONNABORTED')
      expect(performance.now() - started).toBeLessThan(5_000)
    } finally {
      release()
    }
  })

  it('a key Klaviyo does not know: permanent (401), and checkKey says invalid', async () => {
    const unknown = 'pk_00000000000000000000000000000000aa'
    const res = await createKlaviyoChannel(unknown, opts).send(message('item_added'))
    expect(res).toMatchObject({ ok: false, permanent: true, retryAfterMs: null })
    if (res.ok) throw new Error('expected a failure')
    expect(res.reason).toContain('HTTP 401')
    expect(res.reason).not.toContain(unknown)
    expect(await checkKey(unknown, opts)).toMatchObject({ state: 'invalid' })
    expect(await checkKey('not-a-key', opts)).toMatchObject({ state: 'invalid' })
    expect(await checkKey(KEY, opts)).toEqual({ state: 'valid', accountId: 'ACCT1' })
  })

  it('Retry-After as an HTTP date', () => {
    const at = Date.UTC(2026, 10, 29, 9, 0, 0)
    expect(retryAfterMs(new Date(at + 90_000).toUTCString(), at)).toBe(90_000)
    expect(retryAfterMs('soon', at)).toBeNull()
    expect(retryAfterMs(undefined, at)).toBeNull()
  })
})

describe('profile deletion (Data Privacy API)', () => {
  it('by e-mail: one deletion job naming the e-mail', async () => {
    expect(await requestProfileDeletion(KEY, { email: 'gone@example.com' }, opts)).toEqual({ ok: true, profiles: 1 })
    const [job] = klaviyo.of('POST', '/api/data-privacy-deletion-jobs')
    expect(job!.problems).toEqual([])
    expect(job!.body).toEqual({
      data: {
        type: 'data-privacy-deletion-job',
        attributes: { profile: { data: { type: 'profile', attributes: { email: 'gone@example.com' } } } },
      },
    })
  })

  it('by external id: the profile is looked up, then deleted by its Klaviyo id; an unknown one is nothing to delete', async () => {
    const m = message('item_added')
    expect(await createKlaviyoChannel(KEY, opts).send(m)).toEqual({ ok: true })
    expect(await requestProfileDeletion(KEY, { externalId: m.shopper.customerId }, opts)).toEqual({ ok: true, profiles: 1 })
    const [lookup] = klaviyo.of('GET', '/api/profiles')
    expect(lookup!.query.get('filter')).toBe(`equals(external_id,"${m.shopper.customerId}")`)
    const [job] = klaviyo.of('POST', '/api/data-privacy-deletion-jobs')
    expect(job!.problems).toEqual([])
    expect((job!.body as { data: { attributes: { profile: { data: { id: string } } } } }).data.attributes.profile.data.id).toMatch(/^01K/)
    expect(await requestProfileDeletion(KEY, { externalId: 'never-seen' }, opts)).toEqual({ ok: true, profiles: 0 })
    expect(klaviyo.of('POST', '/api/data-privacy-deletion-jobs')).toHaveLength(1)
  })
})
