/**
 * The shop's pages served through the app proxy as Liquid (docs/shopify.md): the wishlist
 * page (a logged-in shopper's items with add to cart, add all, remove, share; a guest's
 * container), the shared page's add to cart, and the review form a review invitation opens,
 * rendered as Shopify would (liquidjs with Shopify's objects stubbed), in the shop's language.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { newShopDomain, proxyCall, proxyUrl, sendShopifyWebhook, SHOPIFY_ENV, type ProxyParams } from '../helpers/shopify.js'
import { pageScope, shopifyLiquid, stubProduct } from '../helpers/shopify-liquid.js'

let t: TestApp
const engine = shopifyLiquid()

beforeAll(async () => {
  t = await createTestApp({ env: SHOPIFY_ENV })
})
afterAll(() => t.close())

const TOTE = stubProduct(601, 'canvas-tote', 'Canvas <Tote>', 3900, { variants: [6011, 6012] })
const SCARF = stubProduct(602, 'wool-scarf', 'Wool scarf', 2500)
const SOLD_OUT = stubProduct(603, 'sold-out', 'Sold out', 1000, { available: false })
const allProducts = { 'canvas-tote': TOTE, 'wool-scarf': SCARF, 'sold-out': SOLD_OUT }

async function proxiedShop(
  plan: 'free' | 'starter' | 'growth' | 'scale' = 'scale',
  settings: { reviews_auto_approve?: boolean; multi_wishlist_enabled?: boolean } = {},
) {
  const domain = newShopDomain()
  expect((await proxyCall(t, 'GET', '/api/v1/products/1/reviews', { shop: domain })).status).toBe(200)
  const shop = await t.app.services.shops.byDomain(domain)
  if (!shop) throw new Error('the proxy did not create the shop')
  if (plan !== shop.plan) await t.app.services.shops.setPlan(shop.id, plan)
  if (Object.keys(settings).length > 0) await t.app.services.shops.updateSettings(shop.id, settings)
  return { domain, id: shop.id }
}

/** A page as the shopper sees it: the proxy's Liquid rendered with the theme's objects. */
async function page(
  method: 'GET' | 'POST',
  rest: string,
  p: ProxyParams,
  opts: {
    query?: Record<string, string>
    form?: Record<string, string>
    locale?: string
    /** `routes.root_url`: the language's subfolder the page is shown under (`/fr`), `/` by default. */
    root?: string
    headers?: Record<string, string>
  } = {},
) {
  const res = await t.inject({
    method,
    url: proxyUrl(rest, p, opts.query),
    headers: {
      'x-forwarded-for': '203.0.113.7',
      ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(opts.headers ?? {}),
    },
    ...(opts.form ? { payload: new URLSearchParams(opts.form).toString() } : {}),
  })
  expect(res.statusCode, res.body).toBe(200)
  expect(res.headers['content-type']).toMatch(/^application\/liquid/)
  expect(res.headers['cache-control']).toBe('private, no-store')
  const html = await engine.parseAndRender(
    res.body,
    pageScope({
      all_products: allProducts,
      request: { locale: { iso_code: opts.locale ?? 'en' } },
      routes: { root_url: opts.root ?? '/', cart_add_url: `${opts.root ?? ''}/cart/add`, account_login_url: '/account/login' },
    }),
  )
  return { liquid: res.body, html }
}

/**
 * A form posted as the browser posts it, which the proxy answers `303 See Other` to the page
 * on the shop; that page, followed as the browser would (through the proxy, in `locale`).
 */
async function submit(
  rest: string,
  p: ProxyParams,
  form: Record<string, string>,
  opts: { locale?: string; headers?: Record<string, string> } = {},
) {
  const res = await t.inject({
    method: 'POST',
    url: proxyUrl(rest, p),
    headers: { 'x-forwarded-for': '203.0.113.7', 'content-type': 'application/x-www-form-urlencoded', ...(opts.headers ?? {}) },
    payload: new URLSearchParams(form).toString(),
  })
  expect(res.statusCode, res.body).toBe(303)
  expect(res.body).toBe('')
  const location = String(res.headers.location)
  return { location, ...(await follow(location, p, opts.locale)) }
}

/** The page a redirect names (`/fr/apps/wishlist?done=removed`), as the proxy answers it in `locale`. */
function follow(location: string, p: ProxyParams, locale?: string) {
  const url = new URL(location, `https://${p.shop}`)
  const prefix = p.pathPrefix ?? '/apps/wishlist'
  const at = url.pathname.indexOf(prefix)
  expect(at, location).toBeGreaterThanOrEqual(0)
  const rest = url.pathname.slice(at + prefix.length) || '/'
  const root = url.pathname.slice(0, at)
  return page('GET', rest, p, {
    query: Object.fromEntries(url.searchParams),
    ...(locale === undefined ? {} : { locale }),
    ...(root === '' ? {} : { root }),
  })
}

const save = (p: ProxyParams, body: Record<string, string>) => proxyCall(t, 'POST', '/v1/wishlists/me/items', p, { body })
const hiddenIds = (html: string) => [...html.matchAll(/name="items\[\]\[id\]" value="(\d+)"/g)].map((m) => m[1])

describe('the wishlist page, GET /proxy/', () => {
  it("lists a logged-in shopper's items with image, title, price, add to cart, remove, add all and share", async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '71' }
    await save(me, { product_id: '601', handle: 'canvas-tote', variant_id: '6012' })
    await save(me, { product_id: '602', handle: 'wool-scarf' })
    await save(me, { product_id: '603', handle: 'sold-out' })
    await save(me, { product_id: '604' })
    const { html } = await page('GET', '/', me)

    expect(html).toContain('<h1 class="wishlist-page__title">My wishlist</h1>')
    expect(html).toContain('data-wishlist-page data-logged-in="true"')
    // The saved variant is what goes to the cart, at its own price; the title is escaped.
    expect(html).toContain(
      '<li class="wishlist-page__item" data-wishlist-item data-product-id="601" data-variant-id="6012" data-handle="canvas-tote">',
    )
    expect(html).toContain('<a class="wishlist-page__link" href="/products/canvas-tote?variant=6012">')
    expect(html).toContain('<span class="wishlist-page__name" id="wl-name-')
    expect(html).toContain('Canvas &lt;Tote&gt;</span>')
    expect(html).toContain('src="https://cdn.example/canvas-tote.jpg?width=300"')
    expect(html).toContain('<span class="wishlist-page__price">$40.00</span>')
    expect(html).toMatch(
      /<form class="wishlist-page__add" method="post" action="\/cart\/add">\s*<input type="hidden" name="id" value="6012"><input type="hidden" name="quantity" value="1">/,
    )
    // No variant saved: the product's first available one.
    expect(html).toContain('<input type="hidden" name="id" value="6021">')
    // Sold out, and unknown to the catalog: no add to cart, said plainly.
    expect(html.match(/No longer available/g)).toHaveLength(2)
    expect(html).toContain('<span class="wishlist-page__ids">604</span>')
    // Add all: every item that can be bought, one quantity each.
    expect(hiddenIds(html).sort()).toEqual(['6012', '6021'])
    expect(html.match(/name="items\[\]\[quantity\]" value="1"/g)).toHaveLength(2)
    expect(html).toContain('<form class="wishlist-page__add-all" method="post" action="/cart/add">')
    // Each item's buttons are named with its product.
    expect(html).toMatch(
      /<button type="submit" class="button wishlist-page__button" id="wl-add-(\d+)" aria-labelledby="wl-add-\1 wl-name-\1">Add to cart<\/button>/,
    )
    expect(html).toContain('<form class="wishlist-page__remove" method="post" action="/apps/wishlist/remove" data-wishlist-remove>')
    expect(html).toContain('<form class="wishlist-page__share" method="post" action="/apps/wishlist/share" data-wishlist-share>')
  })

  it("removes an item and shares the list through its forms, and speaks the shop's language", async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '72' }
    await save(me, { product_id: '601', handle: 'canvas-tote' })
    await save(me, { product_id: '602', handle: 'wool-scarf' })

    // The form tells where the shopper is (the French subfolder): the browser is sent back there.
    const removed = await submit('/remove', me, { product_id: '601', return_root: '/fr' }, { locale: 'fr' })
    expect(removed.location).toBe('/fr/apps/wishlist?done=removed')
    // The page it lands on keeps the shopper in French: its forms post from the French subfolder.
    expect(removed.html).toContain('action="/fr/apps/wishlist/share"')
    expect(removed.html).toContain('<h1 class="wishlist-page__title">Ma liste d’envies</h1>')
    expect(removed.html).toContain('<p class="wishlist-page__status" role="status">Retiré de votre liste d’envies.</p>')
    expect(removed.html).not.toContain('data-product-id="601"')
    expect(removed.html).toContain('Tout ajouter au panier')
    const list = await proxyCall(t, 'GET', '/v1/wishlists/me', me)
    expect(list.body.data.items.map((i: { productId: string }) => i.productId)).toEqual(['602'])

    const shared = await submit('/share', me, { return_root: '' }, { locale: 'ja' })
    expect(shared.location).toBe('/apps/wishlist?done=shared')
    const url = /id="wishlist-share-url" class="wishlist-page__share-url" type="text" readonly value="([^"]+)"/.exec(shared.html)?.[1]
    expect(url).toMatch(new RegExp(`^https://${shop.domain.replace(/\./g, '\\.')}/apps/wishlist/shared/[A-Za-z0-9_-]+$`))
    expect(shared.html).toContain('このリンクを知っている人はリストを見ることができます')

    // A form posted from another site changes nothing (and an odd return_root is not followed).
    const foreign = await submit(
      '/remove',
      me,
      { product_id: '602', return_root: '//evil.example' },
      { headers: { 'sec-fetch-site': 'cross-site' } },
    )
    expect(foreign.location).toBe('/apps/wishlist')
    expect((await proxyCall(t, 'GET', '/v1/wishlists/me', me)).body.data.items).toHaveLength(1)
  })

  it('says when the plan does not share, pages past 20 items, and shows an empty list plainly', async () => {
    const shop = await proxiedShop('free')
    const me = { shop: shop.domain, customerId: '73' }
    expect((await page('GET', '/', me)).html).toContain('<p class="wishlist-page__empty">Your wishlist is empty.</p>')
    for (let i = 1; i <= 21; i++) await save(me, { product_id: String(700 + i) })
    const first = await page('GET', '/', me)
    expect(first.html.match(/data-wishlist-item /g)).toHaveLength(20)
    expect(first.html).toContain('<a href="/apps/wishlist?page=2" rel="next">Next page</a>')
    const second = await page('GET', '/', me, { query: { page: '2' } })
    expect(second.html.match(/data-wishlist-item /g)).toHaveLength(1)
    expect(second.html).toContain('rel="prev"')
    // Refused: the page again, its error summary first, focused with no script, linking to the share button.
    const refused = await page('POST', '/share', me)
    expect(refused.html).toMatch(
      /<section class="wishlist-page"[^>]*>\s*<div class="wishlist-page__errors wl-errors" role="alert" tabindex="-1" autofocus id="wl-errors">\s*<h2>Please correct the following:<\/h2>\s*<ul>\s*<li><a href="#wishlist-share-button">This wishlist cannot be shared from this shop.<\/a><\/li>/,
    )
    expect(refused.html).toContain('id="wishlist-share-button"')
  })

  it("gives a guest the widget's container, its strings in the shop's language, and a way to log in", async () => {
    const shop = await proxiedShop()
    const { html } = await page('GET', '/', { shop: shop.domain }, { locale: 'de' })
    expect(html).toContain('<div id="wishlist-guest-list" class="wishlist-page__guest" data-wishlist-guest-list aria-busy="true">')
    expect(html).toContain('<a href="/account/login">Melden Sie sich an, um Ihre Wunschliste auf allen Geräten zu sehen</a>')
    const attr = /data-wishlist-page data-logged-in="false" data-strings="([^"]*)"/.exec(html)?.[1] ?? ''
    const strings = JSON.parse(
      attr
        .replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c)))
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&'),
    ) as Record<string, string>
    expect(strings).toMatchObject({
      'page.title': 'Meine Wunschliste',
      'page.addAllToCart': 'Alle in den Warenkorb',
      'page.empty': 'Ihre Wunschliste ist leer.',
    })
    // A guest's form post does nothing and is sent back to the same page.
    const back = await submit('/remove', { shop: shop.domain }, { product_id: '1' })
    expect(back.location).toBe('/apps/wishlist')
    expect(back.html).toContain('data-wishlist-guest-list')
  })

  it('falls back to English for an unknown language, and to the language of a regional locale', async () => {
    const shop = await proxiedShop()
    expect((await page('GET', '/', { shop: shop.domain }, { locale: 'sv' })).html).toContain('My wishlist')
    expect((await page('GET', '/', { shop: shop.domain }, { locale: 'fr-CA' })).html).toContain('Ma liste d’envies')
    expect((await page('GET', '/', { shop: shop.domain }, { locale: 'pt-BR' })).html).toContain('Minha lista de desejos')
    expect((await page('GET', '/', { shop: shop.domain }, { locale: 'es' })).html).toContain('Mi lista de deseos')
    expect((await page('GET', '/', { shop: shop.domain }, { locale: 'it' })).html).toContain('La mia lista dei desideri')
    expect((await page('GET', '/', { shop: shop.domain }, { locale: 'nl' })).html).toContain('Mijn verlanglijst')
  })

  it('refuses an unsigned request', async () => {
    expect((await t.inject({ method: 'GET', url: '/proxy/' })).statusCode).toBe(401)
  })
})

describe('the shared page gains add to cart', () => {
  it('has an add-to-cart form per item and one that adds them all', async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '74' }
    await save(me, { product_id: '601', handle: 'canvas-tote' })
    await save(me, { product_id: '602', handle: 'wool-scarf', variant_id: '6021' })
    const link = await proxyCall(t, 'GET', '/v1/wishlists/me/share', me)
    const token = (link.body.data.share_url as string).split('/').pop() as string
    const { html } = await page('GET', `/shared/${token}`, { shop: shop.domain }, { locale: 'es' })
    expect(html).toContain('data-wishlist-shared')
    expect(hiddenIds(html).sort()).toEqual(['6011', '6021'])
    expect(html).toContain('Añadir todo al carrito')
    expect(html.match(/<form class="wishlist-page__add" method="post" action="\/cart\/add">/g)).toHaveLength(2)
    // Nobody but the owner removes from a shared list.
    expect(html).not.toContain('data-wishlist-remove')
  })
})

describe('gift lists on the pages: quantity, note, bought', () => {
  let order = 0
  /** An order of the customer, through Shopify's orders/create: the items of these products are bought. */
  async function bought(domain: string, customerId: string, productIds: number[]) {
    const res = await sendShopifyWebhook(
      t,
      { id: 996000 + ++order, customer: { id: Number(customerId) }, line_items: productIds.map((id) => ({ product_id: id, quantity: 1 })) },
      { topic: 'orders/create', shop: domain },
    )
    expect(res.status).toBe(200)
  }
  const item = (p: ProxyParams, body: Record<string, unknown>) => proxyCall(t, 'POST', '/v1/wishlists/me/items', p, { body })
  const shareToken = async (p: ProxyParams) =>
    ((await proxyCall(t, 'GET', '/v1/wishlists/me/share', p)).body.data.share_url as string).split('/').pop() as string
  /** The add-all form's lines: [variant, quantity]. */
  const addAll = (html: string) =>
    [...html.matchAll(/name="items\[\]\[id\]" value="(\d+)"><input type="hidden" name="items\[\]\[quantity\]" value="(\d+)"/g)].map((m) => [
      m[1],
      m[2],
    ])
  /** The item element of a product, as rendered. */
  const itemOf = (html: string, productId: string) =>
    new RegExp(`<li class="wishlist-page__item[^"]*" data-wishlist-item data-product-id="${productId}"[\\s\\S]*?</li>`).exec(html)?.[0] ??
    ''

  it("shows each item's quantity and note, adds the saved quantity to the cart, and marks what was bought, in the page's language", async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '75' }
    await item(me, { product_id: '601', handle: 'canvas-tote', variant_id: '6012', quantity: 3, note: 'Blue, please' })
    await item(me, { product_id: '602', handle: 'wool-scarf', quantity: 2 })
    await item(me, { product_id: '604', quantity: 5, note: 'Any size' })
    await bought(shop.domain, '75', [602])

    const { html } = await page('GET', '/', me)
    const tote = itemOf(html, '601')
    expect(tote).toContain('<p class="wishlist-page__quantity">Quantity: 3</p>')
    expect(tote).toContain('<p class="wishlist-page__note">Note: Blue, please</p>')
    expect(tote).toContain('<input type="hidden" name="id" value="6012"><input type="hidden" name="quantity" value="3">')
    expect(tote).not.toContain('Purchased')
    // The owner's own page: a bought item says so, and can still be bought again.
    const scarf = itemOf(html, '602')
    expect(scarf).toContain('wishlist-page__item--purchased')
    expect(scarf).toContain('<p class="wishlist-page__purchased"><strong>Purchased</strong></p>')
    expect(scarf).toContain('<input type="hidden" name="quantity" value="2">')
    // An item the catalog does not know still shows what the shopper asked for.
    expect(itemOf(html, '604')).toContain('Quantity: 5')
    expect(itemOf(html, '604')).toContain('Note: Any size')
    expect(addAll(html).sort()).toEqual([
      ['6012', '3'],
      ['6021', '2'],
    ])

    const fr = await page('GET', '/', me, { locale: 'fr' })
    expect(itemOf(fr.html, '601')).toContain('Quantité : 3')
    expect(itemOf(fr.html, '602')).toContain('<strong>Acheté</strong>')
  })

  it('on the shared page a bought item says "Purchased" with no add to cart and stays out of add all, so a gift is not bought twice', async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '76' }
    await item(me, { product_id: '601', handle: 'canvas-tote', quantity: 2, note: 'For the beach' })
    await item(me, { product_id: '602', handle: 'wool-scarf', variant_id: '6021', quantity: 4 })
    await bought(shop.domain, '76', [601])
    const token = await shareToken(me)

    for (const [locale, word, quantity] of [
      ['en', 'Purchased', 'Quantity: 4'],
      ['fr', 'Acheté', 'Quantité : 4'],
    ] as const) {
      const { html } = await page('GET', `/shared/${token}`, { shop: shop.domain }, { locale })
      const tote = itemOf(html, '601')
      expect(tote, locale).toContain(`<p class="wishlist-page__purchased"><strong>${word}</strong></p>`)
      expect(tote).not.toContain('<form class="wishlist-page__add')
      expect(tote).not.toContain('name="quantity"')
      // What the tote is stays visible: its title and the owner's note.
      expect(tote).toContain('Canvas &lt;Tote&gt;')
      expect(tote).toContain(locale === 'en' ? 'Note: For the beach' : 'Note : For the beach')
      const scarf = itemOf(html, '602')
      expect(scarf).toContain(quantity)
      expect(scarf).toContain('<input type="hidden" name="id" value="6021"><input type="hidden" name="quantity" value="4">')
      expect(addAll(html)).toEqual([['6021', '4']])
    }

    // Everything bought: no add-all form at all.
    await bought(shop.domain, '76', [602])
    const done = await page('GET', `/shared/${token}`, { shop: shop.domain })
    expect(done.html).not.toContain('<form class="wishlist-page__add')
    expect(done.html.match(/<strong>Purchased<\/strong>/g)).toHaveLength(2)
  })

  it("never lets a shopper's note become Liquid code or markup", async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '77' }
    const note = "{{ shop.name }}{% raw %}' </p><script>alert(1)</script>"
    await item(me, { product_id: '601', handle: 'canvas-tote', note })
    const token = await shareToken(me)
    for (const { liquid, html } of [await page('GET', '/', me), await page('GET', `/shared/${token}`, { shop: shop.domain })]) {
      expect(liquid).not.toMatch(/\{\{ shop\.name|\{% raw|<script>/)
      expect(html).not.toContain('E2E store')
      expect(html).toContain(
        'Note: &#123;&#123; shop.name &#125;&#125;&#123;% raw %&#125;&#39; &#60;/p&#62;&#60;script&#62;alert(1)&#60;/script&#62;</p>',
      )
    }
  })

  it("names the default list in the page's language until it is renamed, on the wishlist page and the shared page", async () => {
    const shop = await proxiedShop('scale', { multi_wishlist_enabled: true })
    const me = { shop: shop.domain, customerId: '78' }
    await item(me, { product_id: '601', handle: 'canvas-tote' })
    const token = await shareToken(me)
    // The API keeps its documented name.
    expect((await proxyCall(t, 'GET', '/v1/wishlists/shared/' + token, { shop: shop.domain })).body.data.name).toBe('My Wishlist')

    expect((await page('GET', '/', me, { locale: 'fr' })).html).toContain('<h1 class="wishlist-page__title">Ma liste d’envies</h1>')
    const sharedFr = await page('GET', `/shared/${token}`, { shop: shop.domain }, { locale: 'fr' })
    expect(sharedFr.html).toContain('<h1 class="wishlist-page__title">Ma liste d’envies</h1>')
    expect(sharedFr.html).not.toContain('My Wishlist')
    expect((await page('GET', `/shared/${token}`, { shop: shop.domain }, { locale: 'de' })).html).toContain(
      '<h1 class="wishlist-page__title">Meine Wunschliste</h1>',
    )

    // Renamed by its owner: the owner's words, in every language.
    const renamed = await proxyCall(t, 'PUT', '/v1/wishlists/me/lists/default', me, { body: { name: 'Liste de Noël' } })
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
    expect((await page('GET', '/', me, { locale: 'en' })).html).toContain('<h1 class="wishlist-page__title">Liste de Noël</h1>')
    expect((await page('GET', `/shared/${token}`, { shop: shop.domain }, { locale: 'de' })).html).toContain(
      '<h1 class="wishlist-page__title">Liste de Noël</h1>',
    )
  })

  it('a remove form that names no item answers with the page and an error summary linking to the list', async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '79' }
    await item(me, { product_id: '601', handle: 'canvas-tote' })
    const { html } = await page('POST', '/remove', me, { form: { product_id: ' ', return_root: '/fr' }, locale: 'fr', root: '/fr' })
    expect(html).toMatch(
      /role="alert" tabindex="-1" autofocus id="wl-errors">\s*<h2>Veuillez corriger les points suivants :<\/h2>\s*<ul>\s*<li><a href="#wishlist-items">Choisissez un article de votre liste à retirer.<\/a><\/li>/,
    )
    expect(html).toContain('<ul class="wishlist-page__items" id="wishlist-items" tabindex="-1">')
    expect(html).toContain('data-product-id="601"')
    // The forms post from, and come back to, the page's language root.
    expect(html).toContain('action="/fr/apps/wishlist/remove"')
    expect(html).toContain('<input type="hidden" name="return_root" value="/fr">')
  })
})

describe("the proxy's path, as the merchant configured it", () => {
  it('is remembered per shop from the signed path_prefix, and the pages, share links and invitation links follow it', async () => {
    const shop = await proxiedShop('starter')
    const me = { shop: shop.domain, customerId: '91', pathPrefix: '/a/wish' }
    await save(me, { product_id: '601', handle: 'canvas-tote' })
    const row = await t.storage.db.selectFrom('storefront_paths').selectAll().where('shop_id', '=', shop.id).executeTakeFirstOrThrow()
    expect(row).toMatchObject({ proxy_path: '/a/wish', primary_locale: null, published_path: null })

    const { html } = await page('GET', '/', me)
    expect(html).toContain('action="/a/wish/remove"')
    const shared = await submit('/share', me, { return_root: '' })
    expect(shared.location).toBe('/a/wish?done=shared')
    expect(shared.html).toMatch(new RegExp(`value="https://${shop.domain.replace(/\./g, '\\.')}/a/wish/shared/[A-Za-z0-9_-]+"`))

    // An invitation made outside any proxied request (an order webhook) points at the remembered path.
    await sendShopifyWebhook(
      t,
      { id: 997001, email: 'buyer@example.com', customer: { id: 91 }, line_items: [{ product_id: 601 }] },
      { topic: 'orders/create', shop: shop.domain },
    )
    const listed = await t.app.services.invitations.list(
      { shop: (await t.app.services.shops.get(shop.id))!, actor: { kind: 'admin', keyId: 'k' }, requestId: 'r' },
      { limit: 10 },
    )
    expect(listed.invitations[0]?.reviewUrl).toMatch(
      new RegExp(`^https://${shop.domain.replace(/\./g, '\\.')}/a/wish/reviews/new\\?invitation=`),
    )

    // The merchant moves it back: the next signed request says so.
    await page('GET', '/', { ...me, pathPrefix: '/apps/wishlist' })
    expect(
      (await t.storage.db.selectFrom('storefront_paths').select('proxy_path').where('shop_id', '=', shop.id).executeTakeFirstOrThrow())
        .proxy_path,
    ).toBe('/apps/wishlist')
  })
})

describe("invitation links carry the buyer's language", () => {
  it("open the review page under the language's subfolder when it is not the shop's primary one, and at the root otherwise", async () => {
    const shop = await proxiedShop('scale')
    let n = 0
    const invite = async (locale: string | undefined) => {
      const id = 998000 + ++n
      const res = await sendShopifyWebhook(
        t,
        { id, customer: { id: 8300 + n }, line_items: [{ product_id: 601 }], ...(locale === undefined ? {} : { customer_locale: locale }) },
        { topic: 'orders/create', shop: shop.domain },
      )
      expect(res.status).toBe(200)
      const row = await t.storage.db
        .selectFrom('review_invitations')
        .selectAll()
        .where('shop_id', '=', shop.id)
        .where('order_id', '=', String(id))
        .executeTakeFirstOrThrow()
      return { row, url: await urlOf(row.token) }
    }
    const urlOf = async (token: string) => {
      const listed = await t.app.services.invitations.list(
        { shop: (await t.app.services.shops.get(shop.id))!, actor: { kind: 'admin', keyId: 'k' }, requestId: 'r' },
        { limit: 50 },
      )
      return listed.invitations.find((i) => i.token === token)?.reviewUrl ?? ''
    }
    const base = `https://${shop.domain}`

    // The shop's primary language not known yet: no subfolder (the shop's own default language).
    const early = await invite('fr')
    expect(early.row.locale).toBe('fr')
    expect(early.url).toBe(`${base}/apps/wishlist/reviews/new?invitation=${early.row.token}`)

    // Shopify told the primary language (proxy-path.ts reads it with the path's publication).
    await t.storage.db.updateTable('storefront_paths').set({ primary_locale: 'en' }).where('shop_id', '=', shop.id).execute()
    const fr = await invite('fr')
    expect(fr.url).toBe(`${base}/fr/apps/wishlist/reviews/new?invitation=${fr.row.token}`)
    // The earlier invitation's link follows too (it is made from the invitation when read).
    expect(await urlOf(early.row.token)).toBe(`${base}/fr/apps/wishlist/reviews/new?invitation=${early.row.token}`)
    expect((await invite('pt-BR')).url).toMatch(new RegExp(`^${base.replace(/\./g, '\\.')}/pt-br/apps/wishlist/reviews/new\\?invitation=`))
    for (const primary of ['en', 'en-US', undefined, 'not a locale!']) {
      const plain = await invite(primary)
      expect(plain.url, String(primary)).toBe(`${base}/apps/wishlist/reviews/new?invitation=${plain.row.token}`)
    }

    // The French link opens the form in French (Shopify renders /fr/… with request.locale fr).
    const form = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: fr.row.token }, locale: 'fr' })
    expect(form.html).toContain('<h1>Écrire un avis</h1>')
  })
})

describe('review invitations open a form in the shop, GET /proxy/reviews/new', () => {
  let seq = 0
  /** An order of the shop with `product`, through Shopify's orders/create; the invitation's token. */
  async function invited(
    domain: string,
    product: number,
    handle: string | null,
    customer: number | null = 8001,
  ): Promise<{ token: string; reviewUrl: string }> {
    if (handle !== null) {
      const res = await sendShopifyWebhook(
        t,
        { id: product, handle, variants: [{ id: product * 10 + 1, price: '39.00', inventory_quantity: 3 }] },
        { topic: 'products/update', shop: domain },
      )
      expect(res.status).toBe(200)
    }
    const order = await sendShopifyWebhook(
      t,
      {
        id: 990000 + ++seq,
        email: `buyer${seq}@example.com`,
        ...(customer === null ? {} : { customer: { id: customer } }),
        line_items: [{ product_id: product, variant_id: product * 10 + 1 }],
      },
      { topic: 'orders/create', shop: domain },
    )
    expect(order.status).toBe(200)
    const shop = await t.app.services.shops.byDomain(domain)
    const row = await t.storage.db
      .selectFrom('review_invitations')
      .selectAll()
      .where('shop_id', '=', shop?.id ?? '')
      .where('product_id', '=', String(product))
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow()
    const listed = await t.app.services.invitations.list(
      { shop: shop!, actor: { kind: 'admin', keyId: 'k' }, requestId: 'r' },
      { limit: 10 },
    )
    const view = listed.invitations.find((i) => i.token === row.token)
    return { token: row.token, reviewUrl: view?.reviewUrl ?? '' }
  }

  it("points reviewUrl at the shop's own domain, shows the product from all_products, and takes the review", async () => {
    const shop = await proxiedShop('scale', { reviews_auto_approve: false })
    const { token, reviewUrl } = await invited(shop.domain, 601, 'canvas-tote')
    expect(reviewUrl).toBe(`https://${shop.domain}/apps/wishlist/reviews/new?invitation=${token}`)

    const form = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: token } })
    expect(form.html).toContain('<h1>Review Canvas &lt;Tote&gt;</h1>')
    expect(form.html).toContain('<form class="wl-review__form" method="post" action="/apps/wishlist/reviews/new" novalidate>')
    // Shown under a language's subfolder, the form posts from it and says so for the redirect.
    const italian = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: token }, locale: 'it', root: '/it' })
    expect(italian.html).toContain('<form class="wl-review__form" method="post" action="/it/apps/wishlist/reviews/new" novalidate>')
    expect(italian.html).toContain(
      `<input type="hidden" name="invitation" value="${token}"><input type="hidden" name="return_root" value="/it">`,
    )
    expect(form.html).toContain(`<input type="hidden" name="invitation" value="${token}">`)
    expect(form.html.match(/<input type="radio" name="rating" value="[1-5]"/g)).toHaveLength(5)
    expect(form.html).toContain('<legend>Rating <span class="wl-review__required">(required)</span></legend>')
    // The order gave the e-mail: the form does not ask for it.
    expect(form.html).not.toContain('name="email"')

    // Field errors, each next to its field and in a summary; what was typed is kept.
    const wrong = await page(
      'POST',
      '/reviews/new',
      { shop: shop.domain },
      { form: { invitation: token, name: 'Ann', body: ' ', title: 'x'.repeat(151) } },
    )
    expect(wrong.html).toContain('role="alert"')
    expect(wrong.html).toContain('<p class="wl-review__error" id="wl-review-rating-error">Choose a rating from 1 to 5 stars.</p>')
    expect(wrong.html).toContain('<p class="wl-review__error" id="wl-review-body-error">Write your review (up to 5,000 characters).</p>')
    expect(wrong.html).toContain('<p class="wl-review__error" id="wl-review-title-error">The title can be up to 150 characters.</p>')
    expect(wrong.html).toContain('value="Ann"')
    expect(await t.storage.db.selectFrom('reviews').selectAll().where('shop_id', '=', shop.id).execute()).toHaveLength(0)

    // Taken: 303 to the thank-you page (a reload posts nothing again), in the language it was posted from.
    const done = await submit(
      '/reviews/new',
      { shop: shop.domain },
      { invitation: token, rating: '4', name: 'Ann', title: 'Sturdy', body: 'Carries everything.', return_root: '/it' },
      { locale: 'it' },
    )
    expect(done.location).toBe(`/it/apps/wishlist/reviews/new?invitation=${token}&done=1`)
    expect(done.html).toContain('<h1>Grazie per la tua recensione!</h1>')
    expect(done.html).toContain('Comparirà nel negozio dopo l’approvazione.')
    const [review] = await t.storage.db.selectFrom('reviews').selectAll().where('shop_id', '=', shop.id).execute()
    expect(review).toMatchObject({
      product_id: '601',
      rating: 4,
      customer_name: 'Ann',
      customer_id: '8001',
      verified: 1,
      status: 'pending',
    })

    // The link again: used.
    const again = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: token } })
    expect(again.html).toContain('This review link has already been used')
  })

  it("renders a helpful page for unknown, expired, other shops' invitations and products the shop no longer has; asks a guest order for an e-mail", async () => {
    const shop = await proxiedShop()
    const other = await proxiedShop()
    const unknown = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: 'x'.repeat(32) } })
    expect(unknown.html).toContain('This review link is not valid')
    expect(unknown.html).toContain('<a href="/">Continue shopping</a>')
    expect((await page('GET', '/reviews/new', { shop: shop.domain })).html).toContain('This review link is not valid')

    const foreign = await invited(other.domain, 602, 'wool-scarf')
    expect((await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: foreign.token } })).html).toContain(
      'This review link is not valid',
    )

    const stale = await invited(shop.domain, 602, 'wool-scarf')
    await t.storage.db
      .updateTable('review_invitations')
      .set({ expires_at: Date.now() - 1000 })
      .where('token', '=', stale.token)
      .execute()
    expect((await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: stale.token } })).html).toContain(
      'This review link has expired',
    )

    const gone = await invited(shop.domain, 609, 'deleted-product')
    expect((await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: gone.token }, locale: 'nl' })).html).toContain(
      'Dit product is niet meer beschikbaar',
    )

    // No handle known (no product webhook): a generic heading, the form still works; a guest order without e-mail asks for one.
    const bare = await invited(shop.domain, 610, null, null)
    await t.storage.db.updateTable('review_invitations').set({ email: null }).where('token', '=', bare.token).execute()
    const form = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: bare.token }, locale: 'pt-BR' })
    expect(form.html).toContain('<h1>Escrever uma avaliação</h1>')
    expect(form.html).toContain('name="email" type="email"')
    const bad = await page(
      'POST',
      '/reviews/new',
      { shop: shop.domain },
      { form: { invitation: bare.token, rating: '5', name: 'Bo', body: 'Nice', email: 'not-an-address' } },
    )
    expect(bad.html).toContain('Enter a valid e-mail address.')
    const ok = await submit(
      '/reviews/new',
      { shop: shop.domain },
      { invitation: bare.token, rating: '5', name: 'Bo', body: 'Nice', email: 'bo@example.com' },
    )
    expect(ok.html).toContain('Thank you for your review!')
  })

  it('never lets typed text become Liquid code', async () => {
    const shop = await proxiedShop()
    const { token } = await invited(shop.domain, 611, 'canvas-tote')
    const { liquid, html } = await page(
      'POST',
      '/reviews/new',
      { shop: shop.domain },
      { form: { invitation: token, name: "{{ shop.name }}{% raw %}'", body: ' ' } },
    )
    expect(liquid).not.toMatch(/\{\{ shop\.name|\{% raw/)
    expect(html).toContain('value="&#123;&#123; shop.name &#125;&#125;&#123;% raw %&#125;&#39;"')
  })
})

describe("the merchant's texts of the pages (the storefront_strings setting)", () => {
  async function adminToken(shopId: string): Promise<string> {
    const key = await t.app.services.shops.createApiKey(shopId, {})
    return (await t.call('POST', '/v1/auth/token', { body: { api_key: key.keyId, api_secret: key.secret } })).body.data.token as string
  }
  const setTexts = (token: string, value: unknown) => t.call('PATCH', '/v1/admin/settings', { token, body: { storefront_strings: value } })

  it('shows an override in its language on the next page, keeps the others, and the shipped texts once cleared', async () => {
    const shop = await proxiedShop('starter')
    const token = await adminToken(shop.id)
    const me = { shop: shop.domain, customerId: '81' }
    await save(me, { product_id: '601', handle: 'canvas-tote' })
    expect((await page('GET', '/', me, { locale: 'fr' })).html).toContain('<h1 class="wishlist-page__title">Ma liste d’envies</h1>')

    const texts = {
      fr: {
        wishlistTitle: '  Mes coups de cœur  ',
        addToCart: 'Je le veux',
        reviewHeading: 'Votre avis sur « {title} »',
        sharedUnknownTitle: 'Liste introuvable',
      },
    }
    const saved = await setTexts(token, texts)
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const stored = {
      fr: {
        wishlistTitle: 'Mes coups de cœur',
        addToCart: 'Je le veux',
        reviewHeading: 'Votre avis sur « {title} »',
        sharedUnknownTitle: 'Liste introuvable',
      },
    }
    expect(saved.body.data.storefront_strings).toEqual(stored)
    expect((await t.call('GET', '/v1/admin/shop', { token })).body.data.settings.storefront_strings).toEqual(stored)

    // At once, on the next page: French has the merchant's words, English its own.
    const fr = await page('GET', '/', me, { locale: 'fr' })
    expect(fr.html).toContain('<h1 class="wishlist-page__title">Mes coups de cœur</h1>')
    expect(fr.html).toMatch(/aria-labelledby="wl-add-\d+ wl-name-\d+">Je le veux<\/button>/)
    expect(fr.html).toContain('Tout ajouter au panier')
    const en = await page('GET', '/', me, { locale: 'en' })
    expect(en.html).toContain('<h1 class="wishlist-page__title">My wishlist</h1>')
    expect(en.html).not.toContain('Je le veux')
    // The guest page's widget strings, the shared page and the review form take them too.
    const guest = await page('GET', '/', { shop: shop.domain }, { locale: 'fr-CA' })
    expect(guest.html).toContain('Mes coups de c')
    expect((await page('GET', '/shared/unknown-token-0000000000', { shop: shop.domain }, { locale: 'fr' })).html).toContain(
      '<h1>Liste introuvable</h1>',
    )
    await sendShopifyWebhook(
      t,
      { id: 601, handle: 'canvas-tote', variants: [{ id: 6011, price: '39.00', inventory_quantity: 3 }] },
      { topic: 'products/update', shop: shop.domain },
    )
    await sendShopifyWebhook(
      t,
      { id: 995001, email: 'buyer@example.com', customer: { id: 8101 }, line_items: [{ product_id: 601, variant_id: 6011 }] },
      { topic: 'orders/create', shop: shop.domain },
    )
    const invitation = await t.storage.db
      .selectFrom('review_invitations')
      .select('token')
      .where('shop_id', '=', shop.id)
      .executeTakeFirstOrThrow()
    const review = await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: invitation.token }, locale: 'fr' })
    expect(review.html).toContain('<h1>Votre avis sur « Canvas &lt;Tote&gt; »</h1>')
    expect((await page('GET', '/reviews/new', { shop: shop.domain }, { query: { invitation: invitation.token } })).html).toContain(
      '<h1>Review Canvas &lt;Tote&gt;</h1>',
    )

    const cleared = await setTexts(token, null)
    expect(cleared.body.data.storefront_strings).toBeNull()
    expect((await t.call('GET', '/v1/admin/shop', { token })).body.data.settings.storefront_strings).toBeNull()
    expect((await page('GET', '/', me, { locale: 'fr' })).html).toContain('<h1 class="wishlist-page__title">Ma liste d’envies</h1>')
  })

  it('refuses unknown languages and keys, empty and overlong texts, each at its path, and changes nothing', async () => {
    const shop = await proxiedShop()
    const token = await adminToken(shop.id)
    expect((await setTexts(token, { de: { wishlistTitle: 'Merkliste' } })).status).toBe(200)
    const refused = async (value: unknown, path: string) => {
      const res = await setTexts(token, value)
      expect(res.status, JSON.stringify(value)).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path)
    }
    await refused({ fr: { wishlistTitel: 'Ma liste' } }, 'body.storefront_strings.fr.wishlistTitel')
    await refused({ sv: { wishlistTitle: 'Min önskelista' } }, 'body.storefront_strings.sv')
    await refused({ 'pt-PT': { wishlistTitle: 'A minha lista' } }, 'body.storefront_strings.pt-PT')
    await refused({ fr: { wishlistTitle: '   ' } }, 'body.storefront_strings.fr.wishlistTitle')
    await refused({ fr: { wishlistTitle: 'é'.repeat(501) } }, 'body.storefront_strings.fr.wishlistTitle')
    await refused({ fr: { wishlistTitle: 42 } }, 'body.storefront_strings.fr.wishlistTitle')
    await refused({ fr: 'Ma liste' }, 'body.storefront_strings.fr')
    await refused(['fr'], 'body.storefront_strings')
    await refused({ fr: { wishlistTitle: 'a\u0000b' } }, 'body.storefront_strings.fr.wishlistTitle')
    expect((await t.call('GET', '/v1/admin/shop', { token })).body.data.settings.storefront_strings).toEqual({
      de: { wishlistTitle: 'Merkliste' },
    })
    // 500 characters (an emoji is one) are taken.
    expect((await setTexts(token, { ja: { wishlistTitle: '🎁'.repeat(500) } })).status).toBe(200)
  })

  it("never lets the merchant's text become Liquid code or markup", async () => {
    const shop = await proxiedShop()
    const token = await adminToken(shop.id)
    const hostile = "{{ shop.name }}{% raw %}'\n  echo shop.name\n</h1><script>alert(1)</script>"
    expect((await setTexts(token, { fr: { wishlistTitle: hostile, loading: "'{%- endliquid -%}{{ shop.name }}" } })).status).toBe(200)
    const me = { shop: shop.domain, customerId: '82' }
    const { liquid, html } = await page('GET', '/', me, { locale: 'fr' })
    expect(liquid).not.toMatch(/\{\{ shop\.name|\{% raw|\{%- endliquid|<script>/)
    expect(html).not.toContain('E2E store')
    expect(html).toContain(
      '<h1 class="wishlist-page__title">&#123;&#123; shop.name &#125;&#125;&#123;% raw %&#125;&#39;&#10;  echo shop.name&#10;&#60;/h1&#62;&#60;script&#62;alert(1)&#60;/script&#62;</h1>',
    )
    const guest = await page('GET', '/', { shop: shop.domain }, { locale: 'fr' })
    expect(guest.html).not.toContain('E2E store')
    expect(guest.html).not.toContain('<script>alert(1)')
  })
})
