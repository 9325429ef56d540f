/**
 * Shopify app mode, the app proxy (docs/api.md, "The app proxy"): Shopify's signature, the
 * shopper identity it proves, the routes served through it, plan gates, the shopper-address
 * rate limit, and every refusal with nothing read or written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { proxySignature, verifyProxyQuery } from '../../src/platforms/shopify/signatures.js'
import { redactUrl } from '../../src/plugins/access-log.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { newShopDomain, proxyCall, proxyUrl, SHOPIFY_ENV, SHOPIFY_SECRET, signedQuery } from '../helpers/shopify.js'
import { pageScope, shopifyLiquid, stubProduct } from '../helpers/shopify-liquid.js'

let t: TestApp

beforeAll(async () => {
  t = await createTestApp({ env: SHOPIFY_ENV })
})
afterAll(() => t.close())

/** A shop the proxy has created (first signed request), on `plan`. */
async function proxiedShop(plan: 'free' | 'starter' | 'growth' | 'scale' = 'scale', settings: { multi_wishlist_enabled?: boolean } = {}) {
  const domain = newShopDomain()
  const first = await proxyCall(t, 'GET', '/api/v1/products/1/reviews', { shop: domain })
  expect(first.status, JSON.stringify(first.body)).toBe(200)
  const shop = await t.app.services.shops.byDomain(domain)
  if (!shop) throw new Error('the proxy did not create the shop')
  if (plan !== shop.plan) await t.app.services.shops.setPlan(shop.id, plan)
  if (Object.keys(settings).length > 0) await t.app.services.shops.updateSettings(shop.id, settings)
  return { domain, id: shop.id }
}

async function counts() {
  const n = async (table: 'shops' | 'wishlist_items' | 'wishlist_owners' | 'reviews') =>
    Number(
      (
        await t.storage.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { shops: await n('shops'), items: await n('wishlist_items'), owners: await n('wishlist_owners'), reviews: await n('reviews') }
}

describe('Shopify\'s documented app proxy example (secret "hush")', () => {
  // https://shopify.dev/docs/apps/build/online-store/app-proxies/authenticate-app-proxies
  // The page writes the shop as "{shop}.myshopify.com"; its signature is that of
  // shop-name.myshopify.com, the name its earlier revision used.
  const loggedIn =
    'extra=1&extra=2&shop=shop-name.myshopify.com&logged_in_customer_id=1&path_prefix=%2Fapps%2Fawesome_reviews&timestamp=1317327555&signature=4c68c8624d737112c91818c11017d24d334b524cb5c2b8ba08daa056f7395ddb'
  // The earlier revision's example, without logged_in_customer_id.
  const anonymous =
    'extra=1&extra=2&shop=shop-name.myshopify.com&path_prefix=%2Fapps%2Fawesome_reviews&timestamp=1317327555&signature=a9718877bea71c2484f91608a7eaea1532bdf71f5c56825065fa4ccabe549ef3'

  it('signs the logged-in example with the documented signature and verifies it', () => {
    expect(proxySignature(new URLSearchParams(loggedIn), 'hush')).toBe('4c68c8624d737112c91818c11017d24d334b524cb5c2b8ba08daa056f7395ddb')
    expect(verifyProxyQuery(loggedIn, 'hush', 1317327555)).toEqual({
      shop: 'shop-name.myshopify.com',
      customerId: '1',
      pathPrefix: '/apps/awesome_reviews',
      signedAt: 1317327555,
    })
  })

  it('signs the anonymous example with the documented signature and verifies it', () => {
    expect(proxySignature(new URLSearchParams(anonymous), 'hush')).toBe('a9718877bea71c2484f91608a7eaea1532bdf71f5c56825065fa4ccabe549ef3')
    expect(verifyProxyQuery(anonymous, 'hush', 1317327555 + 90)).toEqual({
      shop: 'shop-name.myshopify.com',
      customerId: null,
      pathPrefix: '/apps/awesome_reviews',
      signedAt: 1317327555,
    })
  })

  it('refuses the example with another secret, a changed value, a reordered repeated key or a stale clock', () => {
    expect(verifyProxyQuery(loggedIn, 'hush2', 1317327555)).toBeNull()
    expect(verifyProxyQuery(loggedIn.replace('logged_in_customer_id=1', 'logged_in_customer_id=2'), 'hush', 1317327555)).toBeNull()
    expect(verifyProxyQuery(loggedIn.replace('extra=1&extra=2', 'extra=2&extra=1'), 'hush', 1317327555)).toBeNull()
    // The replay window is Shopify's own library's: 90 s either way.
    expect(verifyProxyQuery(loggedIn, 'hush', 1317327555 + 90)).not.toBeNull()
    expect(verifyProxyQuery(loggedIn, 'hush', 1317327555 - 90)).not.toBeNull()
    expect(verifyProxyQuery(loggedIn, 'hush', 1317327555 + 91)).toBeNull()
    expect(verifyProxyQuery(loggedIn, 'hush', 1317327555 - 91)).toBeNull()
  })
})

describe('a logged-in shopper through the proxy', () => {
  it('adds, lists, removes, merges a guest list, shares and reviews, as the customer Shopify names', async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '7001' }
    // Authorization and X-Storefront-Key are ignored behind the proxy.
    const ignored = { authorization: 'Bearer not-a-token', 'x-storefront-key': 'sfk_not_a_key' }

    const added = await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, {
      body: { product_id: '101', handle: 'blue-shirt' },
      headers: ignored,
    })
    expect(added.status, JSON.stringify(added.body)).toBe(201)
    expect(added.headers['cache-control']).toBe('private, no-store')
    expect(added.body).toMatchObject({ ok: true, data: { item: { productId: '101', handle: 'blue-shirt' }, count: 1 } })

    const again = await proxyCall(t, 'POST', '/v1/wishlists/7001/items', me, { body: { product_id: '101' } })
    expect(again.status).toBe(200)

    // A guest's items, saved before logging in, merged into the customer.
    const guest = { shop: shop.domain }
    expect(
      (await proxyCall(t, 'POST', '/v1/wishlists/me/items', guest, { query: { guest_id: 'g_proxy_guest_1' }, body: { product_id: '102' } }))
        .status,
    ).toBe(201)
    const merged = await proxyCall(t, 'POST', '/v1/wishlists/me/merge', me, { body: { guest_id: 'g_proxy_guest_1' } })
    expect(merged.status, JSON.stringify(merged.body)).toBe(200)
    expect(merged.body.data).toMatchObject({ merged_count: 1, count: 2 })

    const listed = await proxyCall(t, 'GET', '/v1/wishlists/me', me)
    expect(listed.status).toBe(200)
    expect(listed.headers['cache-control']).toBe('private, no-store')
    expect(listed.body.data.items.map((i: { productId: string }) => i.productId).sort()).toEqual(['101', '102'])
    // The same list as the direct API shows it (a customer token of that customer).
    const direct = await t.call('GET', '/v1/wishlists/7001', { token: await customerTokenOf(shop.id, '7001') })
    expect(direct.body.data.items).toEqual(listed.body.data.items)

    const removed = await proxyCall(t, 'DELETE', '/v1/wishlists/me/items/102', me)
    expect(removed.status).toBe(200)
    expect(removed.body.data).toMatchObject({ removed: true, count: 1 })

    const shared = await proxyCall(t, 'GET', '/v1/wishlists/me/share', me)
    expect(shared.status, JSON.stringify(shared.body)).toBe(200)
    expect(shared.body.data.share_url).toMatch(
      new RegExp(`^https://${shop.domain.replace(/\./g, '\\.')}/apps/wishlist/shared/[A-Za-z0-9_-]{32}$`),
    )
    expect(shared.body.data.share_url.endsWith(`/shared/${shared.body.data.token}`)).toBe(true)

    const review = await proxyCall(t, 'POST', '/api/v1/reviews', me, {
      body: { productId: '101', customerEmail: 'ann@example.com', customerName: 'Ann', rating: 5, body: 'Lovely' },
    })
    expect(review.status, JSON.stringify(review.body)).toBe(201)
    // Linked to the customer the signature names: the customer's export holds it.
    const exported = await t.app.services.privacy.exportCustomer(
      { shop: (await t.app.services.shops.get(shop.id))! },
      { customerId: '7001' },
    )
    expect(exported.reviews.map((r) => r.id)).toEqual([review.body.id])

    // Another customer's list is not this shopper's.
    const other = await proxyCall(t, 'GET', '/v1/wishlists/7002', me)
    expect(other.status).toBe(403)
    expect(other.body.error.code).toBe('FORBIDDEN')
    // Reviews errors keep their interface's shape through the proxy.
    const badReview = await proxyCall(t, 'POST', '/api/v1/reviews', me, { body: { productId: '101' } })
    expect(badReview.status).toBe(400)
    expect(badReview.body).toEqual({ error: expect.objectContaining({ code: 'VALIDATION_ERROR' }) })
  })

  it('uses the path prefix Shopify sends for share links', async () => {
    const shop = await proxiedShop('starter')
    const res = await proxyCall(t, 'GET', '/v1/wishlists/me/share', { shop: shop.domain, customerId: '8', pathPrefix: '/apps/saved' })
    expect(res.body.data.share_url).toMatch(new RegExp(`^https://${shop.domain.replace(/\./g, '\\.')}/apps/saved/shared/`))
  })
})

/** A customer token of a shop the proxy created (an API key is made for the test only). */
async function customerTokenOf(shopId: string, customerId: string): Promise<string> {
  const key = await t.app.services.shops.createApiKey(shopId, { name: 'test', scope: 'admin' })
  const res = await t.call('POST', '/v1/auth/token', { body: { api_key: key.keyId, api_secret: key.secret, customer_id: customerId } })
  return res.body.data.token as string
}

describe('guests and anonymous shoppers through the proxy', () => {
  it('is guest mode with guest_id (query) or X-Guest-Id when nobody is logged in', async () => {
    const shop = await proxiedShop('free')
    const p = { shop: shop.domain }
    const viaQuery = await proxyCall(t, 'POST', '/v1/wishlists/me/items', p, {
      query: { guest_id: 'g_proxy_guest_2' },
      body: { product_id: '5' },
    })
    expect(viaQuery.status, JSON.stringify(viaQuery.body)).toBe(201)
    const viaHeader = await proxyCall(t, 'GET', '/v1/wishlists/me', p, { headers: { 'x-guest-id': 'g_proxy_guest_2' } })
    expect(viaHeader.status).toBe(200)
    expect(viaHeader.body.data.items.map((i: { productId: string }) => i.productId)).toEqual(['5'])
    // A guest cannot merge (a customer's right), nor read another guest.
    expect((await proxyCall(t, 'POST', '/v1/wishlists/me/merge', p, { query: { guest_id: 'g_proxy_guest_2' }, body: {} })).status).toBe(403)
    expect((await proxyCall(t, 'GET', '/v1/wishlists/g_other_guest_9', p, { query: { guest_id: 'g_proxy_guest_2' } })).status).toBe(403)
  })

  it("gives the storefront key's public rights with neither: reviews yes, wishlists no", async () => {
    const shop = await proxiedShop('free')
    const p = { shop: shop.domain }
    const reviews = await proxyCall(t, 'GET', '/api/v1/products/5/reviews/summary', p)
    expect(reviews.status).toBe(200)
    expect(reviews.body).toMatchObject({ productId: '5', reviewCount: 0 })
    const list = await proxyCall(t, 'GET', '/v1/wishlists/me', p)
    expect(list.status).toBe(401)
    expect(list.headers['cache-control']).toBe('private, no-store')
    const bad = await proxyCall(t, 'GET', '/v1/wishlists/me', p, { query: { guest_id: 'bad id!' } })
    expect(bad.status).toBe(400)
  })
})

describe('plan gates through the proxy', () => {
  it("serves a free shop's logged-in customer (the widget, not the headless API) but gates share and multi-wishlist", async () => {
    const shop = await proxiedShop('free')
    const me = { shop: shop.domain, customerId: '31' }
    expect((await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '1' } })).status).toBe(201)
    expect((await proxyCall(t, 'GET', '/v1/wishlists/me', me)).status).toBe(200)
    const share = await proxyCall(t, 'GET', '/v1/wishlists/me/share', me)
    expect(share.status).toBe(403)
    expect(share.body.error).toMatchObject({ code: 'PLAN_UPGRADE_REQUIRED', details: { required_plan: 'starter', current_plan: 'free' } })
    const lists = await proxyCall(t, 'POST', '/v1/wishlists/me/lists', me, { body: { name: 'Gifts' } })
    expect(lists.status).toBe(403)
    expect(lists.body.error.code).toBe('PLAN_UPGRADE_REQUIRED')
    // The direct API's customer tokens stay gated on free.
    const direct = await t.call('GET', '/v1/wishlists/31', { token: await customerTokenOf(shop.id, '31') })
    expect(direct.status).toBe(403)
    expect(direct.body.error.code).toBe('PLAN_UPGRADE_REQUIRED')
  })

  it('applies multi-wishlist (growth and the setting) and import (admin only) as directly', async () => {
    const off = await proxiedShop('growth')
    const me = { shop: off.domain, customerId: '32' }
    const disabled = await proxyCall(t, 'POST', '/v1/wishlists/me/lists', me, { body: { name: 'Gifts' } })
    expect(disabled.status).toBe(403)
    expect(disabled.body.error.code).toBe('FEATURE_DISABLED')
    const on = await proxiedShop('growth', { multi_wishlist_enabled: true })
    const created = await proxyCall(t, 'POST', '/v1/wishlists/me/lists', { shop: on.domain, customerId: '32' }, { body: { name: 'Gifts' } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const imported = await proxyCall(
      t,
      'POST',
      '/v1/wishlists/import',
      { shop: on.domain, customerId: '32' },
      { body: { items: [{ customer_id: '32', product_id: '1' }] } },
    )
    expect(imported.status).toBe(403)
    expect(imported.body.error.code).toBe('FORBIDDEN')
  })
})

describe('refusals: 401 INVALID_SIGNATURE, nothing read or written', () => {
  const rest = '/v1/wishlists/me/items'
  const body = { product_id: '900' }

  async function refused(url: string, headers: Record<string, string> = {}) {
    const before = await counts()
    const res = await t.inject({ method: 'POST', url, headers: { 'x-forwarded-for': '198.51.100.1', ...headers }, payload: body })
    expect(res.statusCode, res.body).toBe(401)
    expect(res.json()).toEqual({ ok: false, error: { code: 'INVALID_SIGNATURE', message: expect.any(String) } })
    expect(res.headers['cache-control']).toBe('private, no-store')
    expect(await counts()).toEqual(before)
  }

  it('refuses a tampered parameter, an added parameter, a stale or future timestamp, a missing or malformed signature', async () => {
    const shop = await proxiedShop()
    const p = { shop: shop.domain, customerId: '41' }
    await refused(proxyUrl(rest, p).replace('logged_in_customer_id=41', 'logged_in_customer_id=42'))
    await refused(`${proxyUrl(rest, p)}&guest_id=g_added_after_signing`)
    await refused(proxyUrl(rest, { ...p, timestamp: Math.floor(Date.now() / 1000) - 95 }))
    await refused(proxyUrl(rest, { ...p, timestamp: Math.floor(Date.now() / 1000) + 95 }))
    await refused(proxyUrl(rest, p).replace(/&signature=[0-9a-f]+/, ''))
    await refused(proxyUrl(rest, p).replace(/signature=[0-9a-f]+/, 'signature=xyz'))
    await refused(`/proxy${rest}`)
    // The reviews interface answers the same refusal in its own shape.
    const reviews = await t.inject({ method: 'GET', url: proxyUrl('/api/v1/products/1/reviews', p).replace('timestamp=', 'timestamp=1') })
    expect(reviews.statusCode).toBe(401)
    expect(reviews.json()).toEqual({ error: { code: 'INVALID_SIGNATURE', message: expect.any(String) } })
  })

  it("refuses another shop's signature and another app's secret, and creates no shop from them", async () => {
    const shop = await proxiedShop()
    const stranger = newShopDomain()
    // Signed for one shop, replayed for another.
    await refused(proxyUrl(rest, { shop: shop.domain, customerId: '41' }).replace(`shop=${shop.domain}`, `shop=${stranger}`))
    await refused(proxyUrl(rest, { shop: stranger, customerId: '41', secret: 'another-apps-secret' }))
    expect(await t.app.services.shops.byDomain(stranger)).toBeUndefined()
  })

  it('refuses a signed request for a domain that is not *.myshopify.com', async () => {
    await refused(proxyUrl(rest, { shop: 'evil.example.com', customerId: '41' }))
  })

  it('creates an unknown shop from its first signed request, on the default plan with a storefront key and no API key', async () => {
    const domain = newShopDomain()
    const res = await proxyCall(t, 'GET', '/api/v1/products/1/reviews', { shop: domain })
    expect(res.status).toBe(200)
    const shop = await t.app.services.shops.byDomain(domain)
    expect(shop).toMatchObject({
      domain,
      plan: 'free',
      uninstalledAt: null,
      settings: { multi_wishlist_enabled: false, share_link_ttl_days: 30 },
    })
    expect(shop!.storefrontKey).toMatch(/^sfk_/)
    expect(await t.app.services.shops.listApiKeys(shop!.id)).toEqual([])
  })
})

describe('the shopper-address rate limit', () => {
  it('counts the storefront bucket per first X-Forwarded-For entry of a verified request', async () => {
    const limited = await createTestApp({ env: { ...SHOPIFY_ENV, RATE_LIMIT_STOREFRONT_PER_MIN: '3' } })
    try {
      const p = { shop: newShopDomain(), customerId: '5' }
      const statuses: number[] = []
      for (let i = 0; i < 4; i++)
        statuses.push((await proxyCall(limited, 'GET', '/api/v1/products/1/reviews', p, { ip: '192.0.2.10' })).status)
      expect(statuses).toEqual([200, 200, 200, 429])
      // Another shopper behind the same Shopify proxy has a budget of its own.
      const other = await proxyCall(limited, 'GET', '/api/v1/products/1/reviews', p, { ip: '192.0.2.11' })
      expect(other.status).toBe(200)
      expect(other.headers['x-ratelimit-limit']).toBe('3')
      expect(other.headers['x-ratelimit-remaining']).toBe('2')
    } finally {
      await limited.close()
    }
  })
})

describe('GET /proxy/shared/{token}: the Liquid page', () => {
  const engine = shopifyLiquid()
  const allProducts = { 'blue-shirt': stubProduct(601, 'blue-shirt', 'Blue <Shirt>', 2500) }
  const render = (liquid: string) => engine.parseAndRender(liquid, pageScope({ all_products: allProducts }))

  async function sharedLink(domain: string, customerId: string) {
    const res = await proxyCall(t, 'GET', '/v1/wishlists/me/share', { shop: domain, customerId })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return (res.body.data.share_url as string).split('/').pop() as string
  }

  it('lists the items with title, image, price and link from all_products, and ids for items without a handle', async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '51' }
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '601', handle: 'blue-shirt' } })
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '602', variant_id: '6021' } })
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '603', handle: 'gone-from-catalog' } })
    const token = await sharedLink(shop.domain, '51')

    const res = await t.inject({ method: 'GET', url: proxyUrl(`/shared/${token}`, { shop: shop.domain }) })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/liquid/)
    expect(res.headers['cache-control']).toBe('private, no-store')
    const html = await render(res.body)
    expect(html).toContain('<a class="wishlist-page__link" href="/products/blue-shirt?variant=6011">')
    expect(html).toContain('Blue &lt;Shirt&gt;</span>')
    expect(html).toContain('<span class="wishlist-page__price">$25.00</span>')
    expect(html).toContain('src="https://cdn.example/blue-shirt.jpg?')
    expect(html).toContain('<span class="wishlist-page__ids">602 / 6021</span>')
    // A handle the catalog no longer knows shows the ids too.
    expect(html).toContain('<span class="wishlist-page__ids">603</span>')
  })

  it("renders a friendly page for an expired link, an unknown one and another shop's", async () => {
    const shop = await proxiedShop('starter')
    const token = await sharedLink(shop.domain, '52')
    await t.storage.db
      .updateTable('share_links')
      .set({ expires_at: Date.now() - 1000 })
      .where('token', '=', token)
      .execute()
    const expired = await t.inject({ method: 'GET', url: proxyUrl(`/shared/${token}`, { shop: shop.domain }) })
    expect(expired.statusCode).toBe(200)
    expect(await render(expired.body)).toContain('This wishlist link has expired')

    const unknown = await t.inject({ method: 'GET', url: proxyUrl('/shared/no-such-token-000000000000000000', { shop: shop.domain }) })
    expect(await render(unknown.body)).toContain('This wishlist could not be found')

    const live = await sharedLink(shop.domain, '53')
    const foreign = await t.inject({ method: 'GET', url: proxyUrl(`/shared/${live}`, { shop: (await proxiedShop('starter')).domain }) })
    expect(await render(foreign.body)).toContain('This wishlist could not be found')

    const unsigned = await t.inject({ method: 'GET', url: `/proxy/shared/${live}` })
    expect(unsigned.statusCode).toBe(401)
  })

  it('never lets a list name or a handle become Liquid code', async () => {
    const shop = await proxiedShop('growth', { multi_wishlist_enabled: true })
    const me = { shop: shop.domain, customerId: '54' }
    await proxyCall(t, 'PUT', '/v1/wishlists/me/lists/default', me, { body: { name: "{{ shop.secret }}{% raw %}<b>'" } })
    await proxyCall(t, 'POST', '/v1/wishlists/me/items', me, { body: { product_id: '700', handle: "x'] }}{{ 7 | plus: 1 }}" } })
    const token = await sharedLink(shop.domain, '54')
    const res = await t.inject({ method: 'GET', url: proxyUrl(`/shared/${token}`, { shop: shop.domain }) })
    // The typed text is there only as entities: no `{{`/`{%` can form from it.
    expect(res.body).not.toMatch(/\{\{ shop|\{% raw|\{\{ 7/)
    const html = await render(res.body)
    expect(html).toContain('&#123;&#123; shop.secret &#125;&#125;')
    expect(html).toContain('<span class="wishlist-page__ids">700</span>')
  })
})

describe('logged proxy URLs', () => {
  it('carry no signature, shared-page token or guest id', () => {
    expect(redactUrl('/proxy/shared/tok123?shop=a.myshopify.com&signature=abc123&timestamp=1')).toBe(
      '/proxy/shared/[redacted]?shop=a.myshopify.com&signature=[redacted]&timestamp=1',
    )
    expect(redactUrl('/proxy/v1/wishlists/g_guest_123/items?guest_id=g_guest_123&signature=ff', 'g_guest_123')).toBe(
      '/proxy/v1/wishlists/[redacted]/items?guest_id=[redacted]&signature=[redacted]',
    )
  })
})

describe('Shopify app mode off', () => {
  it('answers 404 on every Shopify route when SHOPIFY_API_SECRET is unset', async () => {
    const off = await createTestApp()
    try {
      const q = signedQuery({ shop: newShopDomain(), customerId: '1', secret: SHOPIFY_SECRET })
      for (const [method, url] of [
        ['GET', `/proxy/v1/wishlists/me?${q}`],
        ['GET', `/proxy/shared/abc?${q}`],
        ['POST', '/v1/platforms/shopify/webhooks'],
        ['POST', '/v1/auth/shopify-session'],
        ['GET', '/v1/admin/privacy-requests'],
      ] as const) {
        const res = await off.inject({ method, url, payload: method === 'POST' ? {} : undefined })
        expect(res.statusCode, url).toBe(404)
      }
    } finally {
      await off.close()
    }
  })
})
