/**
 * The shop's currency (docs/api.md, "Shops, plans and settings"; docs/notifications.md, "What a
 * message carries"): the `currency` setting through the admin API (an ISO 4217 code or null,
 * anything else refused at the field); a Shopify shop's store currency read at install from
 * the local Shopify emulator and kept only when the shop has none; and the notifications made
 * afterwards carrying it, to Klaviyo (the event's value currency and `Currency` property) and to
 * Shopify Flow (the trigger's `Currency`), through the notification worker.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { writeQueuedSignals } from '../../src/modules/events/product-fan-out.js'
import type { NotificationSignal } from '../../src/modules/notifications/channel.js'
import { FLOW_TRIGGERS } from '../../src/modules/notifications/flow.js'
import type { NotificationWorker } from '../../src/modules/notifications/notification-worker.js'
import { makeScheduledNotifications } from '../../src/modules/notifications/notify.js'
import { createShopifyAdmin } from '../../src/platforms/shopify/admin-api.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { testNotificationWorker } from '../helpers/notification-worker.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'
import { catalogSyncOver, newShopDomain, sessionToken } from '../helpers/shopify.js'
import {
  type EmulatedShop,
  flowLifecycleBody,
  sendFlowLifecycle,
  type ShopifyEmulator,
  startShopifyEmulator,
} from '../helpers/shopify-emulator.js'

// One Klaviyo key per test: a stopped worker keeps its key's send lease for a while.
const KEY = 'pk_c0ffee0123456789abcdef0123456789ab'
const OTHER_KEY = 'pk_facade0123456789abcdef0123456789ab'

let emulator: ShopifyEmulator
let klaviyo: KlaviyoEmulator
let t: TestApp
const workers: NotificationWorker[] = []
let productCounter = 0
const nextProduct = () => String(8_700_000 + ++productCounter)

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  klaviyo = await startKlaviyoEmulator({ keys: { [KEY]: 'ACCT_CURRENCY', [OTHER_KEY]: 'ACCT_OTHER' } })
  t = await createTestApp({ env: { ...emulator.env, KLAVIYO_BASE_URL: klaviyo.url } })
})
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()))
})
afterAll(async () => {
  await t?.close()
  await klaviyo?.close()
  await emulator?.close()
})

const waitFor = <T>(fn: () => Promise<T> | T) => vi.waitFor(fn, { timeout: 10_000, interval: 10 })

const worker = (): NotificationWorker => testNotificationWorker(t, workers)

const shopOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!

/** A Shopify shop installed through its first session (its Admin API read done), its catalog sync over. */
async function installed(domain: string, emulated: EmulatedShop) {
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status).toBe(200)
  await catalogSyncOver(t, (await shopOf(domain)).id)
  return { domain, emulated, shop: await shopOf(domain) }
}

const call = (token: string, method: 'GET' | 'PATCH' | 'POST' | 'PUT', url: string, body?: unknown) =>
  t.call(method, url, { token, ...(body === undefined ? {} : { body }) })

/** The shop's product at `price`, first out of stock then back (the fan-out written): a back-in-stock signal. */
async function backInStock(admin: string, productId: string, price: string) {
  for (const inventory of [0, 10]) {
    const res = await call(admin, 'POST', '/v1/events', {
      events: [
        {
          type: 'product.updated',
          product_id: productId,
          handle: `p-${productId}`,
          title: 'Linen shirt',
          variants: [{ variant_id: `${productId}1`, price, inventory_quantity: inventory }],
        },
      ],
    })
    expect(res.status).toBe(200)
  }
  while ((await writeQueuedSignals(t.storage.db)) > 0);
}

async function holds(admin: string, customerId: string, productId: string) {
  expect((await call(admin, 'PUT', `/v1/admin/customers/${customerId}/contact`, { email: `c${customerId}@example.com` })).status).toBe(200)
  const added = await call(admin, 'POST', `/v1/wishlists/${customerId}/items`, { product_id: productId })
  expect([200, 201], JSON.stringify(added.body)).toContain(added.status)
}

const notificationsOf = (shopId: string) =>
  t.storage.db.selectFrom('notifications').select(['id', 'signal', 'payload']).where('shop_id', '=', shopId).orderBy('created_at').execute()

const klaviyoEvent = (notificationId: string) =>
  klaviyo
    .of('POST', '/api/events')
    .map((r) => (r.body as { data?: { attributes?: Record<string, unknown> } })?.data?.attributes)
    .find((a) => a?.unique_id === notificationId)

describe('the currency setting', () => {
  it('is null by default; an ISO 4217 code is kept and shown, null clears it', async () => {
    const shop = await t.createShop('scale')
    const admin = await shop.adminToken()
    expect((await call(admin, 'GET', '/v1/admin/shop')).body.data.settings.currency).toBeNull()
    for (const code of ['EUR', 'JPY', 'KWD']) {
      const res = await call(admin, 'PATCH', '/v1/admin/settings', { currency: code })
      expect(res.status).toBe(200)
      expect(res.body.data.currency).toBe(code)
      expect((await call(admin, 'GET', '/v1/admin/shop')).body.data.settings.currency).toBe(code)
    }
    // Other settings leave it as it is.
    expect((await call(admin, 'PATCH', '/v1/admin/settings', { reminder_after_days: 5 })).body.data).toMatchObject({
      reminder_after_days: 5,
      currency: 'KWD',
    })
    const cleared = await call(admin, 'PATCH', '/v1/admin/settings', { currency: null })
    expect([cleared.status, cleared.body.data.currency]).toEqual([200, null])
    expect((await call(admin, 'GET', '/v1/admin/shop')).body.data.settings.currency).toBeNull()
  })

  it('refuses what is not an ISO 4217 code in use: 400 VALIDATION_ERROR at the field, nothing changed', async () => {
    const shop = await t.createShop('scale', { currency: 'GBP' })
    const admin = await shop.adminToken()
    for (const currency of ['XYZ', 'eur', 'EURO', 'US', '', 'XXX', 978, true, { code: 'EUR' }]) {
      const res = await call(admin, 'PATCH', '/v1/admin/settings', { currency, share_link_ttl_days: 9 })
      expect([JSON.stringify(currency), res.status, res.body.error.code]).toEqual([JSON.stringify(currency), 400, 'VALIDATION_ERROR'])
      expect(res.body.error.details).toEqual([
        { path: 'body.currency', message: 'must be one of the 181 values the API reference lists for it' },
      ])
    }
    expect((await call(admin, 'GET', '/v1/admin/shop')).body.data.settings).toMatchObject({ currency: 'GBP', share_link_ttl_days: 30 })
  })
})

describe("a Shopify shop's store currency", () => {
  it('is read with the shop id at install and kept as the setting', async () => {
    const domain = newShopDomain()
    const { shop } = await installed(domain, emulator.addShop(domain, { currencyCode: 'CAD' }))
    expect(shop.shopifyShopId).toBe(emulator.shop(domain).id)
    expect(shop.settings.currency).toBe('CAD')
    const read = emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields[0] === 'shop')
    expect(read).toEqual([expect.objectContaining({ status: 200 })])
    expect(read[0]!.query).toMatch(/shop\s*\{\s*id\s+currencyCode\s*\}/)
    const admin = await sessionToken(domain)
    expect((await call(admin, 'GET', '/v1/admin/shop')).body.data.settings.currency).toBe('CAD')
  })

  it("never replaces the merchant's own choice, and leaves out a code the service does not know", async () => {
    // The shop is known with a currency of its own before its Admin API read (installed before, its tokens gone).
    const chosen = newShopDomain()
    const known = await t.app.services.shops.ensureByDomain(chosen, 'free')
    await t.app.services.shops.updateSettings(known.id, { currency: 'EUR' })
    const { shop } = await installed(chosen, emulator.addShop(chosen, { currencyCode: 'CAD' }))
    expect(shop.shopifyShopId).toBe(emulator.shop(chosen).id)
    expect(shop.settings.currency).toBe('EUR')

    const odd = newShopDomain()
    const unknown = await installed(odd, emulator.addShop(odd, { currencyCode: 'XXX' }))
    expect(unknown.shop.shopifyShopId).toBe(emulator.shop(odd).id)
    expect(unknown.shop.settings.currency).toBeNull()
  })

  it('the emulator refuses a Shop field Shopify does not have, as Shopify does', async () => {
    const domain = newShopDomain()
    const { shop } = await installed(domain, emulator.addShop(domain))
    const admin = createShopifyAdmin({ db: t.storage.db, config: t.config.shopify!, shops: t.app.services.shops, log: t.app.log })
    await expect(admin.graphql(shop.id, 'query { shop { id currency } }')).rejects.toMatchObject({
      message: expect.stringContaining("Field 'currency' doesn't exist on type 'Shop'"),
    })
    expect(await admin.graphql(shop.id, 'query { shop { currencyCode } }')).toEqual({ shop: { currencyCode: 'USD' } })
  })
})

describe('notifications carry the shop currency', () => {
  it("to Klaviyo: the event's value currency and Currency property (product signals and adds alike carry it)", async () => {
    const shop = await t.createShop('scale', { currency: 'EUR', notifications_per_day: 50 })
    const admin = await shop.adminToken()
    expect((await call(admin, 'PUT', '/v1/admin/channels/klaviyo', { private_key: KEY })).status).toBe(200)
    const p = nextProduct()
    await holds(admin, '8101', p)
    await backInStock(admin, p, '24.50')
    const [signalled] = await notificationsOf(shop.id)
    expect(signalled?.signal).toBe('back_in_stock')
    // The add's own notification (item added), as made once the add has settled (a minute on).
    await makeScheduledNotifications(t.storage.db, Date.now() + 60_000, 1000)
    const rows = await notificationsOf(shop.id)
    expect(rows.map((r) => r.signal).sort()).toEqual(['back_in_stock', 'item_added'])
    for (const r of rows) expect(JSON.parse(r.payload)).toMatchObject({ price: '24.50', currency: 'EUR' })

    worker().start()
    await waitFor(() => expect(klaviyoEvent(signalled!.id)).toBeDefined())
    expect(klaviyoEvent(signalled!.id)).toMatchObject({
      value: 24.5,
      value_currency: 'EUR',
      properties: { Signal: 'back_in_stock', Price: '24.50', Currency: 'EUR' },
    })
  })

  it('to Klaviyo without a currency when the shop has none', async () => {
    const shop = await t.createShop('scale')
    const admin = await shop.adminToken()
    expect((await call(admin, 'PUT', '/v1/admin/channels/klaviyo', { private_key: OTHER_KEY })).status).toBe(200)
    const p = nextProduct()
    await holds(admin, '8201', p)
    await backInStock(admin, p, '12.00')
    const [row] = (await notificationsOf(shop.id)).filter((r) => r.signal === 'back_in_stock')
    expect(JSON.parse(row!.payload)).toMatchObject({ price: '12.00', currency: null })
    worker().start()
    await waitFor(() => expect(klaviyoEvent(row!.id)).toBeDefined())
    const event = klaviyoEvent(row!.id)!
    expect(event.value).toBe(12)
    expect(event).not.toHaveProperty('value_currency')
    expect(event.properties).not.toHaveProperty('Currency')
  })

  it("to Shopify Flow: the trigger's Currency is the store currency read at install", async () => {
    const domain = newShopDomain()
    const { emulated, shop } = await installed(domain, emulator.addShop(domain, { currencyCode: 'CHF' }))
    const enable = async (signal: NotificationSignal) => {
      const res = await sendFlowLifecycle(t, flowLifecycleBody(emulated, FLOW_TRIGGERS[signal].handle, true, new Date()))
      expect(res.status).toBe(200)
    }
    await enable('back_in_stock')
    // The storefront's own calls (a paid plan's), through an admin API key of the shop.
    await t.app.services.shops.setPlan(shop.id, 'scale')
    const key = await t.app.services.shops.createApiKey(shop.id, {})
    const token = await t.call('POST', '/v1/auth/token', { body: { api_key: key.keyId, api_secret: key.secret } })
    const admin = token.body.data.token as string
    const p = nextProduct()
    await holds(admin, '7009876543210', p)
    await backInStock(admin, p, '49.90')
    const [row] = (await notificationsOf(shop.id)).filter((r) => r.signal === 'back_in_stock')
    expect(JSON.parse(row!.payload)).toMatchObject({ currency: 'CHF' })
    worker().start()
    await waitFor(() => expect(emulator.flowCalls.filter((c) => c.shop === domain)).toHaveLength(1))
    const [fired] = emulator.flowCalls.filter((c) => c.shop === domain)
    expect(fired).toMatchObject({ handle: 'wishlist-flow-back-in-stock', userErrors: [] })
    expect(fired!.payload).toMatchObject({ customer_id: 7009876543210, product_id: Number(p), Price: 49.9, Currency: 'CHF' })
  })
})
