/**
 * The shopper's e-mail for notifications through Shopify's app proxy (docs/notifications.md,
 * "Who is notified (consent, opt-out)"): `PUT`/`DELETE /v1/wishlists/me/contact` signed as
 * Shopify signs proxied requests, for the logged-in customer Shopify names and for a guest
 * (guest id), on every plan (the storefront widget, not the headless API); the merchant's route
 * is not served through the proxy; a refusal stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { newShopDomain, proxyCall, SHOPIFY_ENV } from '../helpers/shopify.js'

let t: TestApp

beforeAll(async () => {
  t = await createTestApp({ env: SHOPIFY_ENV })
})
afterAll(() => t.close())

const CONSENT = 'E-mail me when an item of my wishlist is back in stock or cheaper. I can stop this at any time.'

/** A shop the proxy has created (first signed request), on the free plan. */
async function proxiedShop() {
  const domain = newShopDomain()
  const first = await proxyCall(t, 'GET', '/api/v1/products/1/reviews', { shop: domain })
  expect(first.status, JSON.stringify(first.body)).toBe(200)
  const shop = await t.app.services.shops.byDomain(domain)
  if (!shop) throw new Error('the proxy did not create the shop')
  expect(shop.plan).toBe('free')
  return { domain, id: shop.id }
}

const stored = (shopId: string, ownerType: 'customer' | 'guest', ownerId: string) =>
  t.storage.db
    .selectFrom('notification_contacts')
    .select(['email', 'source', 'consent_text'])
    .where('shop_id', '=', shopId)
    .where('owner_type', '=', ownerType)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst()

describe('the contact routes through the app proxy', () => {
  it("store the logged-in customer's own e-mail with the consent text, and withdraw it", async () => {
    const shop = await proxiedShop()
    const me = { shop: shop.domain, customerId: '8101' }
    // Authorization and X-Storefront-Key are ignored behind the proxy: Shopify's signature names the customer.
    const put = await proxyCall(t, 'PUT', '/v1/wishlists/me/contact', me, {
      body: { email: 'Ann@Example.com', consent: true, consent_text: CONSENT },
      headers: { authorization: 'Bearer not-a-token', 'x-storefront-key': 'sfk_not_a_key' },
    })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    expect(put.headers['cache-control']).toBe('private, no-store')
    expect(put.body.data).toMatchObject({
      ownerType: 'customer',
      ownerId: '8101',
      email: 'ann@example.com',
      source: 'shopper',
      consentText: CONSENT,
      optedOut: false,
    })
    expect(await stored(shop.id, 'customer', '8101')).toEqual({ email: 'ann@example.com', source: 'shopper', consent_text: CONSENT })
    // Its own id works as `me` does; another customer's is refused.
    const own = await proxyCall(t, 'PUT', '/v1/wishlists/8101/contact', me, {
      body: { email: 'ann.b@example.com', consent: true, consent_text: CONSENT },
    })
    expect(own.status).toBe(200)
    const other = await proxyCall(t, 'PUT', '/v1/wishlists/8102/contact', me, {
      body: { email: 'eve@example.com', consent: true, consent_text: CONSENT },
    })
    expect(other.status).toBe(403)
    expect(await stored(shop.id, 'customer', '8102')).toBeUndefined()

    const deleted = await proxyCall(t, 'DELETE', '/v1/wishlists/me/contact', me)
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200)
    expect(deleted.body.data).toEqual({ deleted: true })
    expect(await stored(shop.id, 'customer', '8101')).toBeUndefined()
    expect((await proxyCall(t, 'DELETE', '/v1/wishlists/me/contact', me)).status).toBe(404)
  })

  it("store a guest's e-mail under its guest id (query or header); without one, 401 and nothing stored", async () => {
    const shop = await proxiedShop()
    const p = { shop: shop.domain }
    const put = await proxyCall(t, 'PUT', '/v1/wishlists/me/contact', p, {
      query: { guest_id: 'g_proxy_contact_1' },
      body: { email: 'guest@example.com', consent: true, consent_text: CONSENT },
    })
    expect(put.status, JSON.stringify(put.body)).toBe(200)
    expect(put.body.data).toMatchObject({ ownerType: 'guest', ownerId: 'g_proxy_contact_1', source: 'shopper' })
    expect(await stored(shop.id, 'guest', 'g_proxy_contact_1')).toEqual({
      email: 'guest@example.com',
      source: 'shopper',
      consent_text: CONSENT,
    })
    const nobody = await proxyCall(t, 'PUT', '/v1/wishlists/me/contact', p, {
      body: { email: 'nobody@example.com', consent: true, consent_text: CONSENT },
    })
    expect(nobody.status).toBe(401)
    const deleted = await proxyCall(t, 'DELETE', '/v1/wishlists/me/contact', p, { headers: { 'x-guest-id': 'g_proxy_contact_1' } })
    expect(deleted.status).toBe(200)
    expect(await stored(shop.id, 'guest', 'g_proxy_contact_1')).toBeUndefined()
  })

  it('refuse a body without consent or with an invalid e-mail (400), and an unsigned request (401): nothing stored', async () => {
    const shop = await proxiedShop()
    const me = { shop: shop.domain, customerId: '8201' }
    for (const body of [
      { email: 'ann@example.com', consent: false, consent_text: CONSENT },
      { email: 'ann@example.com', consent_text: CONSENT },
      { email: 'ann@example.com', consent: true, consent_text: ' ' },
      { email: 'not-an-email', consent: true, consent_text: CONSENT },
    ]) {
      const res = await proxyCall(t, 'PUT', '/v1/wishlists/me/contact', me, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    const unsigned = await t.call('PUT', '/proxy/v1/wishlists/me/contact', {
      body: { email: 'ann@example.com', consent: true, consent_text: CONSENT },
    })
    expect(unsigned.status).toBe(401)
    expect(await stored(shop.id, 'customer', '8201')).toBeUndefined()
  })

  it("do not serve the merchant's contact route through the proxy", async () => {
    const shop = await proxiedShop()
    const res = await proxyCall(
      t,
      'PUT',
      '/v1/admin/customers/8301/contact',
      { shop: shop.domain, customerId: '8301' },
      {
        body: { email: 'ann@example.com' },
      },
    )
    expect(res.status).toBe(404)
    expect(await stored(shop.id, 'customer', '8301')).toBeUndefined()
  })
})
