/**
 * The app proxy's path as the merchant configured it (docs/shopify.md, "Paths and
 * languages"), against the local Shopify emulator on both backends: the path a shop's signed
 * requests name is remembered and published to the theme extension as the app's own
 * metafield (`app.metafields.wishlist.proxy_path`, written with `metafieldsSet` on the app's
 * installation), with the shop's primary language read beside it (`shopLocales`); the app
 * embed, rendered with that metafield, loads the widget from the path; invitation links use
 * the path and the buyer's language subfolder.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { newShopDomain, proxyCall, sendShopifyWebhook, sessionToken } from '../helpers/shopify.js'
import { EmulatedGraphqlError, type ShopifyEmulator, startShopifyEmulator } from '../helpers/shopify-emulator.js'
import { renderBlock, shopifyLiquid, EXTENSION_DIR } from '../helpers/shopify-liquid.js'

let emulator: ShopifyEmulator
let t: TestApp
/** The app-data metafields Shopify holds, per shop: `namespace.key` → value. */
const metafields = new Map<string, Map<string, { ownerId: string; type: string; value: string }>>()
/** The shops' languages, as Shopify's `shopLocales` answers them. */
const languages = new Map<string, { locale: string; primary: boolean; published: boolean }[]>()

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  emulator.handle('metafieldsSet', ({ shop, args }) => {
    const own = metafields.get(shop.domain) ?? new Map()
    metafields.set(shop.domain, own)
    const set = (args.metafields as { ownerId: string; namespace: string; key: string; type: string; value: string }[]).map((m) => {
      if (m.ownerId !== `gid://shopify/AppInstallation/${shop.id}`) throw new EmulatedGraphqlError('Owner does not exist', 'INVALID')
      own.set(`${m.namespace}.${m.key}`, { ownerId: m.ownerId, type: m.type, value: m.value })
      return { namespace: m.namespace, key: m.key, value: m.value }
    })
    return { metafields: set, userErrors: [] }
  })
  emulator.handle('shopLocales', ({ shop }) => {
    if (!shop.scope.split(',').includes('read_locales'))
      throw new EmulatedGraphqlError('Access denied for shopLocales field. Required access: `read_locales` access scope.', 'ACCESS_DENIED')
    return languages.get(shop.domain) ?? [{ locale: 'en', primary: true, published: true }]
  })
  t = await createTestApp({ env: emulator.env })
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

const shopOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!
const pathsOf = async (domain: string) =>
  t.storage.db
    .selectFrom('storefront_paths')
    .selectAll()
    .where('shop_id', '=', (await shopOf(domain)).id)
    .executeTakeFirst()
const setCalls = (domain: string) => emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields.includes('metafieldsSet'))

async function session(domain: string) {
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
}

/** The app embed as the theme renders it on the shop, with the app's metafields as Shopify holds them. */
async function appEmbed(domain: string, root = '/') {
  const own = metafields.get(domain) ?? new Map()
  const app = {
    metafields: { wishlist: { proxy_path: own.has('wishlist.proxy_path') ? { value: own.get('wishlist.proxy_path')!.value } : null } },
  }
  const html = await renderBlock(shopifyLiquid({ root: EXTENSION_DIR }), 'app-embed', {
    settings: { show_launcher: true },
    scope: { app, routes: { root_url: root, cart_add_url: '/cart/add' } },
  })
  return {
    proxy: /data-app-proxy="([^"]*)"/.exec(html)?.[1],
    launcher: /<a class="wishlist-launcher" href="([^"]*)">/.exec(html)?.[1],
  }
}

describe("the proxy's path, published to the theme extension", () => {
  it('writes the path the signed requests name to the app metafield once, reads the primary language, and the app embed follows it', async () => {
    const domain = newShopDomain()
    emulator.addShop(domain, { scope: 'read_products,read_orders,read_locales', orders: [{ id: 'gid://shopify/Order/7700001' }] })
    languages.set(domain, [
      { locale: 'de', primary: true, published: true },
      { locale: 'fr', primary: false, published: true },
    ])
    await session(domain)
    // Before any proxied request: nothing to publish, the embed uses the default path.
    expect(setCalls(domain)).toHaveLength(0)
    expect(await appEmbed(domain)).toEqual({ proxy: '/apps/wishlist', launcher: '/apps/wishlist' })

    // The merchant changed the subpath: Shopify signs /a/wish.
    expect((await proxyCall(t, 'GET', '/v1/wishlists/me', { shop: domain, customerId: '51', pathPrefix: '/a/wish' })).status).toBe(200)
    await vi.waitFor(async () => expect(await pathsOf(domain)).toMatchObject({ proxy_path: '/a/wish', published_path: '/a/wish' }))
    expect(await pathsOf(domain)).toMatchObject({ primary_locale: 'de' })
    expect(setCalls(domain)).toHaveLength(1)
    expect(setCalls(domain)[0]?.variables).toEqual({
      metafields: [
        {
          ownerId: `gid://shopify/AppInstallation/${emulator.shop(domain).id}`,
          namespace: 'wishlist',
          key: 'proxy_path',
          type: 'single_line_text_field',
          value: '/a/wish',
        },
      ],
    })
    expect(await appEmbed(domain)).toEqual({ proxy: '/a/wish', launcher: '/a/wish' })
    expect(await appEmbed(domain, '/fr')).toEqual({ proxy: '/a/wish', launcher: '/fr/a/wish' })

    // More requests on the same path write nothing more.
    for (let i = 0; i < 3; i++) await proxyCall(t, 'GET', '/v1/wishlists/me', { shop: domain, customerId: '51', pathPrefix: '/a/wish' })
    expect(setCalls(domain)).toHaveLength(1)

    // A French buyer's invitation opens in the French subfolder, at the shop's path; the primary language's at the root.
    const order = await sendShopifyWebhook(
      t,
      { id: 7700001, customer: { id: 51 }, customer_locale: 'fr', line_items: [{ product_id: 4100 }] },
      { topic: 'orders/create', shop: domain },
    )
    expect(order.body).toEqual({ ok: true, data: { result: 'processed' } })
    const shop = await shopOf(domain)
    const listed = await t.app.services.invitations.list({ shop, actor: { kind: 'admin', keyId: 'k' }, requestId: 'r' }, { limit: 5 })
    expect(listed.invitations[0]?.reviewUrl).toMatch(
      new RegExp(`^https://${domain.replace(/\./g, '\\.')}/fr/a/wish/reviews/new\\?invitation=`),
    )

    // Moved back: published again.
    await proxyCall(t, 'GET', '/v1/wishlists/me', { shop: domain, customerId: '51', pathPrefix: '/apps/wishlist' })
    await vi.waitFor(async () => expect(await pathsOf(domain)).toMatchObject({ published_path: '/apps/wishlist' }))
    expect(await appEmbed(domain)).toEqual({ proxy: '/apps/wishlist', launcher: '/apps/wishlist' })
  })

  it('a path seen before the shop had a token is published when the token is granted; without read_locales the primary language stays unknown', async () => {
    const domain = newShopDomain()
    emulator.addShop(domain, { scope: 'read_products,read_orders' })
    expect((await proxyCall(t, 'GET', '/v1/wishlists/me', { shop: domain, customerId: '52', pathPrefix: '/tools/gifts' })).status).toBe(200)
    expect(await pathsOf(domain)).toMatchObject({ proxy_path: '/tools/gifts', published_path: null, primary_locale: null })
    expect(setCalls(domain)).toHaveLength(0)

    await session(domain)
    await vi.waitFor(async () => expect(await pathsOf(domain)).toMatchObject({ published_path: '/tools/gifts' }))
    expect(await pathsOf(domain)).toMatchObject({ primary_locale: null })
    expect(await appEmbed(domain, '/es')).toEqual({ proxy: '/tools/gifts', launcher: '/es/tools/gifts' })
  })
})
