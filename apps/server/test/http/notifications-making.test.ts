/**
 * Making shopper notifications (docs/notifications.md, "Who is notified (consent, opt-out)",
 * "How often (frequency)"): the frequency settings, contacts and consent, the signed opt-out
 * link and page, the rules (no contact, opted out, cooldown, daily cap), the three sources
 * (product signals through the webhook worker's fan-out, item added, reminders) and what a
 * shop without channels costs. Klaviyo is connected through the admin API against the local
 * emulator; Flow's trigger status is recorded as its lifecycle callback records it.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bulkInsert } from '../../src/db/bulk-insert.js'
import { writeQueuedSignals } from '../../src/modules/events/product-fan-out.js'
import { FLOW_TRIGGERS, flowTriggersRepo } from '../../src/modules/notifications/flow.js'
import { enqueueNotifications, makeScheduledNotifications, NOTIFY_BATCH, optOutUrl } from '../../src/modules/notifications/notify.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'

const KEY = 'pk_5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c'
const HOUR = 3_600_000
const DAY = 24 * HOUR

let klaviyo: KlaviyoEmulator
let t: TestApp
let productCounter = 0
const nextProduct = () => String(9_000_000 + ++productCounter)

beforeAll(async () => {
  klaviyo = await startKlaviyoEmulator({ keys: { [KEY]: 'ACCT_MAIN' } })
  t = await createTestApp({ env: { KLAVIYO_BASE_URL: klaviyo.url } })
})
afterAll(async () => {
  await t?.close()
  await klaviyo?.close()
})

interface Shop extends TestShop {
  admin: string
}

async function shopWithKlaviyo(settings = {}): Promise<Shop> {
  const shop = await t.createShop('scale', settings)
  const admin = await shop.adminToken()
  const res = await t.call('PUT', '/v1/admin/channels/klaviyo', { token: admin, body: { private_key: KEY } })
  expect(res.status).toBe(200)
  return { ...shop, admin }
}

async function plainShop(): Promise<Shop> {
  const shop = await t.createShop('scale')
  return { ...shop, admin: await shop.adminToken() }
}

const setContact = async (shop: Shop, customerId: string, email = `c${customerId}@example.com`) => {
  const res = await t.call('PUT', `/v1/admin/customers/${customerId}/contact`, { token: shop.admin, body: { email } })
  expect(res.status).toBe(200)
  return res
}

const addItem = async (shop: Shop, customerId: string, productId: string, variantId?: string) => {
  const res = await t.call('POST', `/v1/wishlists/${customerId}/items`, {
    token: shop.admin,
    body: { product_id: productId, ...(variantId ? { variant_id: variantId } : {}) },
  })
  expect([200, 201]).toContain(res.status)
}

const events = async (shop: Shop, list: unknown[]) => {
  const res = await t.call('POST', '/v1/events', { token: shop.admin, body: { events: list } })
  expect(res.status).toBe(200)
}

const product = (productId: string, inventory: number, price = '20.00', title = 'Linen shirt') => ({
  type: 'product.updated',
  product_id: productId,
  handle: `p-${productId}`,
  title,
  image_url: `https://cdn.example.com/${productId}.jpg`,
  variants: [{ variant_id: `${productId}1`, price, inventory_quantity: inventory }],
})

/** Back in stock: a baseline at 0, then 10 (the webhook worker's fan-out written). */
async function backInStock(shop: Shop, productId: string) {
  await events(shop, [product(productId, 0)])
  await events(shop, [product(productId, 10)])
  while ((await writeQueuedSignals(t.storage.db)) > 0);
}

const notificationsOf = (shopId: string) =>
  t.storage.db.selectFrom('notifications').selectAll().where('shop_id', '=', shopId).orderBy('created_at').orderBy('id').execute()

const deliveriesOf = (shopId: string) =>
  t.storage.db.selectFrom('notification_deliveries').selectAll().where('shop_id', '=', shopId).execute()

describe('the frequency settings', () => {
  it('default to 24 hours, 3 a day and 7 days; PATCH checks their ranges', async () => {
    const shop = await plainShop()
    const read = await t.call('GET', '/v1/admin/shop', { token: shop.admin })
    expect(read.body.data.settings).toMatchObject({ notification_cooldown_hours: 24, notifications_per_day: 3, reminder_after_days: 7 })
    for (const body of [
      { notification_cooldown_hours: 0 },
      { notification_cooldown_hours: 721 },
      { notifications_per_day: 51 },
      { reminder_after_days: 91 },
      { reminder_after_days: 1.5 },
    ]) {
      const res = await t.call('PATCH', '/v1/admin/settings', { token: shop.admin, body })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
      expect(res.body.error.details[0].path).toBe(`body.${Object.keys(body)[0]}`)
    }
    const ok = await t.call('PATCH', '/v1/admin/settings', {
      token: shop.admin,
      body: { notification_cooldown_hours: 720, notifications_per_day: 50, reminder_after_days: 90 },
    })
    expect(ok.status).toBe(200)
    expect(ok.body.data).toMatchObject({ notification_cooldown_hours: 720, notifications_per_day: 50, reminder_after_days: 90 })
  })
})

describe('contacts and consent', () => {
  it("the shopper's own e-mail needs consent: true, and the consent text is stored", async () => {
    const shop = await plainShop()
    const guest = shop.guest('guest-consent-1')
    const consent = 'E-mail me about my wishlist. I can stop at any time.'
    for (const body of [
      { email: 'g@example.com', consent_text: consent },
      { email: 'g@example.com', consent: false, consent_text: consent },
      { email: 'g@example.com', consent: 'true', consent_text: consent },
      { email: 'g@example.com', consent: true },
      { email: 'not-an-email', consent: true, consent_text: consent },
    ]) {
      const res = await t.call('PUT', '/v1/wishlists/me/contact', { headers: guest, body })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect(await t.storage.db.selectFrom('notification_contacts').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])

    const res = await t.call('PUT', '/v1/wishlists/me/contact', {
      headers: guest,
      body: { email: 'G@Example.com', consent: true, consent_text: consent },
    })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      ownerType: 'guest',
      ownerId: 'guest-consent-1',
      email: 'g@example.com',
      source: 'shopper',
      consentText: consent,
      optedOut: false,
    })
    const row = await t.storage.db.selectFrom('notification_contacts').selectAll().where('shop_id', '=', shop.id).executeTakeFirstOrThrow()
    expect(row).toMatchObject({ owner_type: 'guest', owner_id: 'guest-consent-1', source: 'shopper', consent_text: consent })

    // Someone else's guest id: refused as on the wishlist routes.
    const other = await t.call('PUT', '/v1/wishlists/guest-consent-2/contact', {
      headers: guest,
      body: { email: 'x@example.com', consent: true, consent_text: consent },
    })
    expect(other.status).toBe(403)

    // A customer token on its own id; the admin token is not the shopper.
    const token = await shop.customerToken('5001')
    const mine = await t.call('PUT', '/v1/wishlists/5001/contact', {
      token,
      body: { email: 'c5001@example.com', consent: true, consent_text: consent },
    })
    expect(mine.status).toBe(200)
    expect(mine.body.data).toMatchObject({ ownerType: 'customer', ownerId: '5001', source: 'shopper' })
    const asAdmin = await t.call('PUT', '/v1/wishlists/5001/contact', {
      token: shop.admin,
      body: { email: 'c5001@example.com', consent: true, consent_text: consent },
    })
    expect(asAdmin.status).toBe(403)

    // An owner who opted out and gives an e-mail again with consent is notified again: their own new consent.
    const link = optOutUrl(t.config, shop.id, { type: 'guest', id: 'guest-consent-1' }).slice('http://wishlist.test'.length)
    expect((await t.inject({ method: 'POST', url: link })).statusCode).toBe(200)
    const back = await t.call('PUT', '/v1/wishlists/me/contact', {
      headers: guest,
      body: { email: 'g@example.com', consent: true, consent_text: consent },
    })
    expect(back.body.data.optedOut).toBe(false)

    const deleted = await t.call('DELETE', '/v1/wishlists/me/contact', { headers: guest })
    expect(deleted.status).toBe(200)
    expect((await t.call('DELETE', '/v1/wishlists/me/contact', { headers: guest })).status).toBe(404)
  })

  it("the merchant's e-mail of a customer, and an order's e-mail (which never replaces the merchant's)", async () => {
    const shop = await plainShop()
    const res = await setContact(shop, '6001', 'Ann@Example.com')
    expect(res.body.data).toMatchObject({
      ownerType: 'customer',
      ownerId: '6001',
      email: 'ann@example.com',
      source: 'merchant',
      consentText: null,
    })
    const p = nextProduct()
    await events(shop, [
      { type: 'order.created', order_id: '7001', customer_id: '6001', email: 'other@example.com', line_items: [{ product_id: p }] },
      { type: 'order.created', order_id: '7002', customer_id: '6002', email: 'bob@example.com', line_items: [{ product_id: p }] },
      { type: 'order.created', order_id: '7003', email: 'nocustomer@example.com', line_items: [{ product_id: p }] },
    ])
    const rows = await t.storage.db
      .selectFrom('notification_contacts')
      .select(['owner_id', 'email', 'source'])
      .where('shop_id', '=', shop.id)
      .orderBy('owner_id')
      .execute()
    expect(rows).toEqual([
      { owner_id: '6001', email: 'ann@example.com', source: 'merchant' },
      { owner_id: '6002', email: 'bob@example.com', source: 'order' },
    ])
    // A later order's e-mail replaces an order's.
    await events(shop, [
      { type: 'order.created', order_id: '7004', customer_id: '6002', email: 'bob2@example.com', line_items: [{ product_id: p }] },
    ])
    const bob = await t.storage.db
      .selectFrom('notification_contacts')
      .select('email')
      .where('shop_id', '=', shop.id)
      .where('owner_id', '=', '6002')
      .executeTakeFirstOrThrow()
    expect(bob.email).toBe('bob2@example.com')
  })
})

describe('the opt-out link', () => {
  it('opens a page in the shopper’s language with a confirm button; POST opts out; a tampered token is 404', async () => {
    const shop = await plainShop()
    await setContact(shop, '8001')
    const url = optOutUrl(t.config, shop.id, { type: 'customer', id: '8001' })
    expect(url.startsWith('http://wishlist.test/notifications/opt-out/')).toBe(true)
    const path = url.slice('http://wishlist.test'.length)

    const fr = await t.inject({ method: 'GET', url: path, headers: { 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.5' } })
    expect(fr.statusCode).toBe(200)
    expect(fr.headers['content-type']).toContain('text/html')
    expect(fr.headers['cache-control']).toContain('no-store')
    expect(fr.body).toContain('<html lang="fr">')
    expect(fr.body).toContain('Ne plus recevoir les notifications de votre liste d’envies')
    expect(fr.body).toContain(`${shop.domain} ne vous enverra plus de messages`)
    expect(fr.body).toMatch(/<form method="post" action="\/notifications\/opt-out\/[^"]+\?locale=fr">/)
    expect(fr.body).toContain('<button type="submit">Ne plus recevoir de notifications</button>')

    const en = await t.inject({ method: 'GET', url: path, headers: { 'accept-language': 'en-GB' } })
    expect(en.body).toContain('<html lang="en">')
    expect(en.body).toContain('Stop wishlist notifications')
    // Looking is not opting out.
    expect(await t.storage.db.selectFrom('notification_opt_outs').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])

    const posted = await t.inject({ method: 'POST', url: `${path}?locale=fr` })
    expect(posted.statusCode).toBe(200)
    expect(posted.body).toContain('Vous ne recevrez plus de notifications de votre liste d’envies')
    const rows = await t.storage.db.selectFrom('notification_opt_outs').selectAll().where('shop_id', '=', shop.id).execute()
    expect(rows).toMatchObject([{ owner_type: 'customer', owner_id: '8001' }])
    // The page says so afterwards; the merchant's view of the contact too.
    const again = await t.inject({ method: 'GET', url: path })
    expect(again.body).toContain('You will no longer receive wishlist notifications')
    const contact = await setContact(shop, '8001')
    expect(contact.body.data.optedOut).toBe(true)

    // Tampered: another owner in the body with the old signature, a changed signature, garbage.
    const token = path.split('/').at(-1) as string
    const [body, sig] = token.split('.') as [string, string]
    const forged = Buffer.from(JSON.stringify([shop.id, 'customer', '8002'])).toString('base64url')
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`
    for (const bad of [`${forged}.${sig}`, `${body}.${flipped}`, 'nothing', `${body}`]) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.inject({ method, url: `/notifications/opt-out/${bad}`, headers: { 'accept-language': 'fr' } })
        expect(res.statusCode).toBe(404)
        expect(res.body).toContain('Ce lien n’est pas valide')
      }
    }
    expect(await t.storage.db.selectFrom('notification_opt_outs').selectAll().where('shop_id', '=', shop.id).execute()).toHaveLength(1)
  })

  it('RFC 8058 one-click: a POST with List-Unsubscribe=One-Click and no credentials opts out', async () => {
    const shop = await plainShop()
    const urlencoded = optOutUrl(t.config, shop.id, { type: 'guest', id: 'guest-oneclick-1' }).slice('http://wishlist.test'.length)
    const res = await t.inject({
      method: 'POST',
      url: urlencoded,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })
    expect(res.statusCode).toBe(200)
    const multipart = optOutUrl(t.config, shop.id, { type: 'customer', id: '8101' }).slice('http://wishlist.test'.length)
    const boundary = 'xYzZY'
    const res2 = await t.inject({
      method: 'POST',
      url: multipart,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
    })
    expect(res2.statusCode).toBe(200)
    const rows = await t.storage.db
      .selectFrom('notification_opt_outs')
      .select(['owner_type', 'owner_id'])
      .where('shop_id', '=', shop.id)
      .orderBy('owner_type')
      .execute()
    expect(rows).toEqual([
      { owner_type: 'customer', owner_id: '8101' },
      { owner_type: 'guest', owner_id: 'guest-oneclick-1' },
    ])
  })
})

describe('the rules, from product signals', () => {
  it('no contact: nothing; opted out: suppressed; else queued with one pending delivery per channel', async () => {
    const shop = await shopWithKlaviyo()
    const p = nextProduct()
    for (const c of ['101', '102', '103']) await addItem(shop, c, p)
    await setContact(shop, '101')
    await setContact(shop, '102')
    // 103 has no contact. 102 opts out through the link.
    const link = optOutUrl(t.config, shop.id, { type: 'customer', id: '102' }).slice('http://wishlist.test'.length)
    expect((await t.inject({ method: 'POST', url: link })).statusCode).toBe(200)
    await backInStock(shop, p)

    const rows = await notificationsOf(shop.id)
    expect(rows.map((r) => [r.owner_id, r.signal, r.state, r.reason])).toEqual(
      expect.arrayContaining([
        ['101', 'back_in_stock', 'queued', null],
        ['102', 'back_in_stock', 'suppressed', 'opted_out'],
      ]),
    )
    expect(rows).toHaveLength(2)
    const queued = rows.find((r) => r.owner_id === '101')!
    expect(JSON.parse(queued.payload)).toEqual({
      productId: p,
      variantId: `${p}1`,
      title: 'Linen shirt',
      url: `https://${shop.domain}/products/p-${p}?variant=${p}1`,
      imageUrl: `https://cdn.example.com/${p}.jpg`,
      price: '20.00',
      previousPrice: null,
      currency: null,
      inventoryQuantity: 10,
    })
    const deliveries = await deliveriesOf(shop.id)
    expect(deliveries).toMatchObject([{ notification_id: queued.id, channel: 'klaviyo', state: 'pending', attempts: 0 }])
  })

  it('cooldown per owner, product and signal; a price drop of the same product still goes', async () => {
    const shop = await shopWithKlaviyo()
    const p = nextProduct()
    await addItem(shop, '201', p)
    await setContact(shop, '201')
    await backInStock(shop, p)
    await backInStock(shop, p)
    // A price drop: another signal of the same product.
    await events(shop, [product(p, 10, '15.00')])
    while ((await writeQueuedSignals(t.storage.db)) > 0);
    const rows = await notificationsOf(shop.id)
    expect(rows.map((r) => [r.signal, r.state, r.reason])).toEqual([
      ['back_in_stock', 'queued', null],
      ['back_in_stock', 'suppressed', 'cooldown'],
      ['price_drop', 'queued', null],
    ])
    expect(JSON.parse(rows[2]!.payload)).toMatchObject({ price: '15.00', previousPrice: '20.00' })
    expect(await deliveriesOf(shop.id)).toHaveLength(2)

    // After the cooldown (1 hour here) the same signal goes again.
    const updated = await t.call('PATCH', '/v1/admin/settings', { token: shop.admin, body: { notification_cooldown_hours: 1 } })
    expect(updated.status).toBe(200)
    const fresh = (await t.app.services.shops.get(shop.id))!
    const candidate = {
      owner: { type: 'customer' as const, id: '201' },
      signal: 'back_in_stock' as const,
      productId: p,
      variantId: `${p}1`,
      product: JSON.parse(rows[0]!.payload),
    }
    const at = Date.now()
    const soon = await t.storage.db.transaction().execute((trx) => enqueueNotifications(trx, fresh, [candidate], at + 30 * 60_000))
    expect(soon).toEqual({ queued: 0, suppressed: 1, skipped: 0 })
    const later = await t.storage.db.transaction().execute((trx) => enqueueNotifications(trx, fresh, [candidate], at + 2 * HOUR))
    expect(later).toEqual({ queued: 1, suppressed: 0, skipped: 0 })
  })

  it('at most notifications_per_day per owner in any 24 hours: the rest suppressed daily_cap', async () => {
    const shop = await shopWithKlaviyo({ notifications_per_day: 2 })
    const products = [nextProduct(), nextProduct(), nextProduct()]
    await setContact(shop, '301')
    await setContact(shop, '302')
    for (const p of products) await addItem(shop, '301', p)
    await addItem(shop, '302', products[2]!)
    for (const p of products) await backInStock(shop, p)
    const rows = await notificationsOf(shop.id)
    const of301 = rows.filter((r) => r.owner_id === '301').map((r) => [r.product_id, r.state, r.reason])
    expect(of301).toEqual([
      [products[0], 'queued', null],
      [products[1], 'queued', null],
      [products[2], 'suppressed', 'daily_cap'],
    ])
    // Another owner has a cap of their own.
    expect(rows.filter((r) => r.owner_id === '302').map((r) => r.state)).toEqual(['queued'])
    // A day later the owner may be notified again.
    const fresh = (await t.app.services.shops.get(shop.id))!
    const r = await t.storage.db.transaction().execute((trx) =>
      enqueueNotifications(
        trx,
        fresh,
        [
          {
            owner: { type: 'customer', id: '301' },
            signal: 'low_stock',
            productId: products[2]!,
            variantId: null,
            product: JSON.parse(rows[0]!.payload),
          },
        ],
        Date.now() + DAY + HOUR,
      ),
    )
    expect(r.queued).toBe(1)
  })

  it('Flow: a delivery per enabled trigger, for customers only; Klaviyo and Flow together make two', async () => {
    const shop = await plainShop()
    const at = Date.now()
    await flowTriggersRepo.record(t.storage.db, shop.id, FLOW_TRIGGERS.back_in_stock.handle, true, at, at)
    await flowTriggersRepo.record(t.storage.db, shop.id, FLOW_TRIGGERS.price_drop.handle, false, at, at)
    const p = nextProduct()
    await addItem(shop, '401', p)
    await setContact(shop, '401')
    const guest = shop.guest('guest-flow-0001')
    expect((await t.call('POST', '/v1/wishlists/me/items', { headers: guest, body: { product_id: p } })).status).toBe(201)
    const consent = await t.call('PUT', '/v1/wishlists/me/contact', {
      headers: guest,
      body: { email: 'guest@example.com', consent: true, consent_text: 'Tell me when it is back.' },
    })
    expect(consent.status).toBe(200)
    await backInStock(shop, p)
    // The price-drop trigger has no enabled workflow: nothing made of a price drop.
    await events(shop, [product(p, 10, '15.00')])
    while ((await writeQueuedSignals(t.storage.db)) > 0);
    const rows = await notificationsOf(shop.id)
    expect(rows.map((r) => [r.owner_type, r.signal, r.state])).toEqual([['customer', 'back_in_stock', 'queued']])
    expect((await deliveriesOf(shop.id)).map((d) => d.channel)).toEqual(['flow'])

    // With Klaviyo connected too: one delivery each, and the guest through Klaviyo only.
    expect((await t.call('PUT', '/v1/admin/channels/klaviyo', { token: shop.admin, body: { private_key: KEY } })).status).toBe(200)
    const q = nextProduct()
    await addItem(shop, '401', q)
    expect((await t.call('POST', '/v1/wishlists/me/items', { headers: guest, body: { product_id: q } })).status).toBe(201)
    await backInStock(shop, q)
    const byOwner = new Map((await notificationsOf(shop.id)).filter((r) => r.product_id === q).map((r) => [r.owner_type, r.id]))
    const channels = (id: string | undefined) =>
      (deliveriesOf(shop.id) as Promise<{ notification_id: string; channel: string }[]>).then((ds) =>
        ds
          .filter((d) => d.notification_id === id)
          .map((d) => d.channel)
          .sort(),
      )
    expect(await channels(byOwner.get('customer'))).toEqual(['flow', 'klaviyo'])
    expect(await channels(byOwner.get('guest'))).toEqual(['klaviyo'])
  })

  it("holders of the signal's variant, or of the product without a variant when it is the default one; bought items none", async () => {
    const shop = await shopWithKlaviyo({ notifications_per_day: 50 })
    const p = nextProduct()
    const [v1, v2] = [`${p}1`, `${p}2`]
    const variants = (inv1: number, inv2: number) => ({
      type: 'product.updated',
      product_id: p,
      handle: `p-${p}`,
      variants: [
        { variant_id: v1, price: '10.00', inventory_quantity: inv1 },
        { variant_id: v2, price: '10.00', inventory_quantity: inv2 },
      ],
    })
    await events(shop, [variants(0, 0)])
    for (const c of ['801', '802', '803', '804']) await setContact(shop, c)
    await addItem(shop, '801', p, v1)
    await addItem(shop, '802', p, v2)
    await addItem(shop, '803', p) // no variant: the catalog's default (v1)
    await addItem(shop, '804', p, v2)
    await events(shop, [{ type: 'order.created', order_id: `${p}7`, customer_id: '804', line_items: [{ product_id: p }] }])
    // Only v2 comes back.
    await events(shop, [variants(0, 5)])
    while ((await writeQueuedSignals(t.storage.db)) > 0);
    expect((await notificationsOf(shop.id)).map((n) => [n.owner_id, n.variant_id])).toEqual([['802', v2]])
    // Then v1: its holder and the holder of the product without a variant.
    await events(shop, [variants(5, 5)])
    while ((await writeQueuedSignals(t.storage.db)) > 0);
    const v1Rows = (await notificationsOf(shop.id)).filter((n) => n.variant_id === v1)
    expect(v1Rows.map((n) => n.owner_id).sort()).toEqual(['801', '803'])
  })

  it('a shop without channels writes nothing, whatever its holders and contacts', async () => {
    const shop = await plainShop()
    await shop.subscribe()
    const p = nextProduct()
    await addItem(shop, '501', p)
    await setContact(shop, '501')
    await backInStock(shop, p)
    // The webhook got its signal; no notification was made.
    const outbox = await t.storage.db
      .selectFrom('outbox')
      .select('event')
      .where('shop_id', '=', shop.id)
      .where('event', '=', 'wishlist.product.back_in_stock')
      .execute()
    expect(outbox).toHaveLength(1)
    expect(await notificationsOf(shop.id)).toEqual([])
    const scheduled = await makeScheduledNotifications(t.storage.db, Date.now() + 30 * DAY, 1000)
    expect(await notificationsOf(shop.id)).toEqual([])
    expect(await t.storage.db.selectFrom('notification_cursors').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])
    expect(scheduled.made).toBeGreaterThanOrEqual(0)
  })

  it('2,500 holders: bounded transactions of at most NOTIFY_BATCH notifications, all made in the end', async () => {
    const shop = await shopWithKlaviyo({ notifications_per_day: 50 })
    const p = nextProduct()
    const at = Date.now()
    const owners = Array.from({ length: 2500 }, (_, i) => String(1_000_000 + i))
    await bulkInsert(
      t.storage.db,
      'wishlist_items',
      owners.map((id) => ({
        shop_id: shop.id,
        owner_type: 'customer' as const,
        owner_id: id,
        list_id: 'default',
        product_id: p,
        variant_id: null,
        handle: null,
        metadata: null,
        added_at: at - DAY,
      })),
    )
    await bulkInsert(
      t.storage.db,
      'notification_contacts',
      owners.map((id) => ({
        shop_id: shop.id,
        owner_type: 'customer' as const,
        owner_id: id,
        email: `h${id}@example.com`,
        source: 'merchant' as const,
        consent_text: null,
        consented_at: at,
        updated_at: at,
      })),
    )
    await events(shop, [product(p, 0)])
    await events(shop, [product(p, 10)])
    const counts: number[] = []
    let total = 0
    for (;;) {
      const before = total
      const took = await writeQueuedSignals(t.storage.db)
      total = Number(
        (await sql<{ n: number }>`select count(*) as n from notifications where shop_id = ${shop.id}`.execute(t.storage.db)).rows[0]!.n,
      )
      if (took === 0) break
      counts.push(total - before)
    }
    expect(total).toBe(2500)
    expect(Math.max(...counts)).toBeLessThanOrEqual(NOTIFY_BATCH)
    expect(counts.length).toBeGreaterThanOrEqual(Math.ceil(2500 / NOTIFY_BATCH))
    const states = await sql<{
      state: string
      n: number
    }>`select state, count(*) as n from notifications where shop_id = ${shop.id} group by state`.execute(t.storage.db)
    expect(states.rows.map((r) => [r.state, Number(r.n)])).toEqual([['queued', 2500]])
    expect(await t.storage.db.selectFrom('outbox_fan_outs').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])
  })
})

describe('item added and reminders (the scheduled pass)', () => {
  it('item added once per add; the reminder once, reminder_after_days after an add not bought', async () => {
    const shop = await shopWithKlaviyo({ notifications_per_day: 50 })
    const [p1, p2] = [nextProduct(), nextProduct()]
    await events(shop, [product(p1, 3, '30.00', 'Wool scarf')])
    await setContact(shop, '601')
    await setContact(shop, '602')
    await addItem(shop, '601', p1)
    await addItem(shop, '601', p2)
    await addItem(shop, '602', p1)
    await addItem(shop, '603', p1) // no contact
    const now = Date.now()

    const r = await makeScheduledNotifications(t.storage.db, now + 60_000, 1000)
    let rows = await notificationsOf(shop.id)
    expect(rows.map((n) => [n.owner_id, n.signal, n.product_id, n.state]).sort()).toEqual(
      [
        ['601', 'item_added', p1, 'queued'],
        ['601', 'item_added', p2, 'queued'],
        ['602', 'item_added', p1, 'queued'],
      ].sort(),
    )
    expect(JSON.parse(rows.find((n) => n.owner_id === '602')!.payload)).toMatchObject({
      title: 'Wool scarf',
      price: '30.00',
      inventoryQuantity: 3,
    })
    expect(r.read).toBeGreaterThanOrEqual(4)
    // Again: nothing new (the cursor moved past them).
    await makeScheduledNotifications(t.storage.db, now + 120_000, 1000)
    expect(await notificationsOf(shop.id)).toHaveLength(3)

    // 601 buys p2; six days on, no reminder yet; eight days on, one per add not bought.
    await events(shop, [{ type: 'order.created', order_id: `${p2}9`, customer_id: '601', line_items: [{ product_id: p2 }] }])
    await makeScheduledNotifications(t.storage.db, now + 6 * DAY, 1000)
    expect((await notificationsOf(shop.id)).filter((n) => n.signal === 'reminder')).toEqual([])
    await makeScheduledNotifications(t.storage.db, now + 8 * DAY, 1000)
    rows = (await notificationsOf(shop.id)).filter((n) => n.signal === 'reminder')
    expect(rows.map((n) => [n.owner_id, n.product_id, n.state]).sort()).toEqual(
      [
        ['601', p1, 'queued'],
        ['602', p1, 'queued'],
      ].sort(),
    )
    await makeScheduledNotifications(t.storage.db, now + 9 * DAY, 1000)
    expect((await notificationsOf(shop.id)).filter((n) => n.signal === 'reminder')).toHaveLength(2)
  })

  it('bounded per call: `limit` adds at most, the rest on the next calls', async () => {
    const shop = await shopWithKlaviyo({ notifications_per_day: 50 })
    await setContact(shop, '701')
    const products = Array.from({ length: 7 }, nextProduct)
    for (const p of products) await addItem(shop, '701', p)
    const now = Date.now() + 60_000
    // Every call reads 4 adds at most (of any shop), and visits 4 shops' cursors at most; in turn they reach every add.
    for (let i = 0; i < 60; i++) {
      const pass = await makeScheduledNotifications(t.storage.db, now, 4)
      expect(pass.read).toBeLessThanOrEqual(4)
    }
    const added = (await notificationsOf(shop.id)).filter((n) => n.signal === 'item_added')
    expect(added.map((n) => n.product_id).sort()).toEqual([...products].sort())
  })
})
