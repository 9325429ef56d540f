/**
 * Connecting Klaviyo (docs/notifications.md): the admin endpoints against the local Klaviyo
 * emulator, the key checked there first, kept sealed in the database and never answered.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { createTokenCipher } from '../../src/lib/token-cipher.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'

const KEY = 'pk_5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c'
const SECOND_KEY = 'pk_77aa66bb55cc44dd33ee22ff1100aa9911'
const REVOKED = 'pk_00000000000000000000000000000000dd'

let klaviyo: KlaviyoEmulator
let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  klaviyo = await startKlaviyoEmulator({ keys: { [KEY]: 'ACCT_MAIN', [SECOND_KEY]: 'ACCT_MAIN' } })
  t = await createTestApp({ env: { KLAVIYO_BASE_URL: klaviyo.url } })
  shop = await t.createShop('free')
  admin = await shop.adminToken()
})
afterAll(async () => {
  await t?.close()
  await klaviyo?.close()
})

const channels = async (token = admin) => {
  const res = await t.call('GET', '/v1/admin/channels', { token })
  expect(res.status).toBe(200)
  return res.body.data.channels as { channel: string; connected: boolean; keyLast4: string | null; lastCheck: unknown }[]
}
const connect = async (privateKey: string, token = admin) =>
  t.call('PUT', '/v1/admin/channels/klaviyo', { token, body: { private_key: privateKey } })
const rawRow = async (shopId: string) =>
  (
    await sql<Record<string, unknown>>`select * from notification_channels where shop_id = ${shopId} and channel = 'klaviyo'`.execute(
      t.storage.db,
    )
  ).rows[0]

describe('connecting Klaviyo', () => {
  it('not connected at first', async () => {
    expect(await channels()).toEqual([
      {
        channel: 'klaviyo',
        connected: false,
        keyLast4: null,
        connectedAt: null,
        lastCheck: null,
        triggers: null,
        deliveries: expect.any(Object),
      },
    ])
  })

  it('a key Klaviyo takes: checked with Klaviyo, stored sealed, answered by its last four characters only', async () => {
    const checksBefore = klaviyo.of('GET', '/api/accounts').length
    const res = await connect(KEY)
    expect(res.status).toBe(200)
    expect(JSON.stringify(res.body)).not.toContain(KEY)
    expect(res.body.data).toMatchObject({
      channel: 'klaviyo',
      connected: true,
      keyLast4: KEY.slice(-4),
      lastCheck: { state: 'valid', error: null },
    })
    // The check went to Klaviyo with the key, as the official client sends it.
    const [check] = klaviyo.of('GET', '/api/accounts').slice(checksBefore)
    expect(check).toMatchObject({ status: 200, problems: [], key: KEY })

    const listed = await channels()
    expect(listed).toEqual([{ ...res.body.data, triggers: null, deliveries: expect.any(Object) }])
    expect(JSON.stringify(listed)).not.toContain(KEY)

    // At rest: sealed (never in clear), and it opens only for this shop and column.
    const row = await rawRow(shop.id)
    expect(JSON.stringify(row)).not.toContain(KEY.slice(3, -4))
    expect(row!.secret).toMatch(/^v1\.[A-Za-z0-9_-]+$/)
    expect(row!.secret_last4).toBe(KEY.slice(-4))
    const cipher = createTokenCipher(t.config.notifications.secretsKey())
    expect(cipher.open(shop.id, 'channel:klaviyo', String(row!.secret))).toBe(KEY)
    expect(() => cipher.open('shop_other', 'channel:klaviyo', String(row!.secret))).toThrow()
    expect(() => cipher.open(shop.id, 'access_token', String(row!.secret))).toThrow()
  })

  it('the stored key is the one the channel sends with', async () => {
    const channel = await t.app.services.channels.klaviyo(shop.id)
    const sent = await channel!.send({
      id: 'ntf_stored_key',
      shopId: shop.id,
      signal: 'back_in_stock',
      occurredAt: Date.now(),
      shopper: { customerId: '1001', email: 'c1@example.com' },
      product: {
        productId: 'p-1',
        variantId: null,
        title: 'Mug',
        url: null,
        imageUrl: null,
        price: '12.00',
        previousPrice: null,
        currency: 'USD',
        inventoryQuantity: 5,
      },
      optOutUrl: 'https://wishlist.test/opt-out',
    })
    expect(sent).toEqual({ ok: true })
    expect(klaviyo.of('POST', '/api/events').at(-1)).toMatchObject({ key: KEY, status: 202, problems: [] })
  })

  it('a key Klaviyo refuses: 400 CHANNEL_KEY_REJECTED, and the key stored before stays', async () => {
    const res = await connect(REVOKED)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ ok: false, error: { code: 'CHANNEL_KEY_REJECTED' } })
    expect(res.body.error.message).toContain('HTTP 401')
    expect(JSON.stringify(res.body)).not.toContain(REVOKED)
    expect((await channels())[0]).toMatchObject({ connected: true, keyLast4: KEY.slice(-4) })
  })

  it('a value that is not a Klaviyo private key: 400 VALIDATION_ERROR, Klaviyo not asked', async () => {
    const before = klaviyo.requests.length
    for (const body of [{ private_key: 'sk_live_123' }, { private_key: '' }, {}, { private_key: KEY, extra: 1 }]) {
      const res = await t.call('PUT', '/v1/admin/channels/klaviyo', { token: admin, body })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect(klaviyo.requests.length).toBe(before)
  })

  it('Klaviyo unreachable: 503 UNAVAILABLE saying so, nothing stored', async () => {
    const other = await t.createShop('free')
    const token = await other.adminToken()
    await klaviyo.goDown()
    try {
      const res = await connect(KEY, token)
      expect(res.status).toBe(503)
      expect(res.body.error.code).toBe('UNAVAILABLE')
      expect(res.body.error.message).toMatch(/^Klaviyo cannot be reached/)
      expect(res.headers['retry-after']).toBeDefined()
    } finally {
      await klaviyo.comeBack()
    }
    klaviyo.failNext(1, 503)
    expect((await connect(KEY, token)).status).toBe(503)
    expect(await rawRow(other.id)).toBeUndefined()
    expect((await channels(token))[0]).toMatchObject({ connected: false })
  })

  it('replacing the key: the new one is stored, the last check moves on', async () => {
    const res = await connect(SECOND_KEY)
    expect(res.status).toBe(200)
    expect(res.body.data.keyLast4).toBe(SECOND_KEY.slice(-4))
    const row = await rawRow(shop.id)
    expect(createTokenCipher(t.config.notifications.secretsKey()).open(shop.id, 'channel:klaviyo', String(row!.secret))).toBe(SECOND_KEY)
  })

  it("another shop's admin sees its own channels only; customer tokens and no token are refused", async () => {
    const other = await t.createShop('free')
    expect((await channels(await other.adminToken()))[0]).toMatchObject({ connected: false })
    const customer = await shop.customerToken('1001')
    expect((await t.call('GET', '/v1/admin/channels', { token: customer })).status).toBe(403)
    expect((await t.call('PUT', '/v1/admin/channels/klaviyo', { token: customer, body: { private_key: KEY } })).status).toBe(403)
    expect((await t.call('GET', '/v1/admin/channels')).status).toBe(401)
    expect((await t.call('DELETE', '/v1/admin/channels/klaviyo')).status).toBe(401)
  })

  it('disconnecting: the key is deleted; a second time is 404', async () => {
    const res = await t.call('DELETE', '/v1/admin/channels/klaviyo', { token: admin })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, data: { deleted: true } })
    expect(await rawRow(shop.id)).toBeUndefined()
    expect((await channels())[0]).toMatchObject({ connected: false, keyLast4: null })
    expect(await t.app.services.channels.klaviyo(shop.id)).toBeUndefined()
    const again = await t.call('DELETE', '/v1/admin/channels/klaviyo', { token: admin })
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('NOT_FOUND')
  })
})

describe('the key the credentials are sealed with', () => {
  const pg = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/none', JWT_SECRET: 'x'.repeat(32) }

  it('PostgreSQL without SHOPIFY_TOKEN_KEY: the server starts, and connecting a channel names the setting', () => {
    const config = loadConfig(pg)
    expect(() => config.notifications.secretsKey()).toThrow(ConfigError)
    expect(() => config.notifications.secretsKey()).toThrow(
      /SHOPIFY_TOKEN_KEY is required with PostgreSQL to connect a notification channel/,
    )
  })

  it('SHOPIFY_TOKEN_KEY set: the same key as the Shopify tokens; malformed: refused at start', () => {
    const hex = 'cd'.repeat(32)
    expect(loadConfig({ ...pg, SHOPIFY_TOKEN_KEY: hex }).notifications.secretsKey()).toEqual(Buffer.from(hex, 'hex'))
    const app = loadConfig({ ...pg, SHOPIFY_TOKEN_KEY: hex, SHOPIFY_API_SECRET: 'shpss_x' })
    expect(app.notifications.secretsKey()).toBe(app.shopify!.tokenKey)
    expect(() => loadConfig({ ...pg, SHOPIFY_TOKEN_KEY: 'short' })).toThrow(/must be 32 bytes/)
  })

  it('KLAVIYO_BASE_URL: Klaviyo by default, an http(s) URL otherwise', () => {
    expect(loadConfig(pg).notifications.klaviyoBaseUrl).toBe('https://a.klaviyo.com')
    expect(loadConfig({ ...pg, KLAVIYO_BASE_URL: 'http://127.0.0.1:4650/' }).notifications.klaviyoBaseUrl).toBe('http://127.0.0.1:4650')
    expect(() => loadConfig({ ...pg, KLAVIYO_BASE_URL: 'ftp://example.com' })).toThrow(ConfigError)
  })
})
