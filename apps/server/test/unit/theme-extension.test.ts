/**
 * The theme app extension (extensions/wishlist, docs/shopify.md): every block rendered as a
 * theme would render it (liquidjs, Shopify's objects stubbed), checked for the markup the
 * widget binds to, in every language the extension ships; and Shopify's Theme Check with its
 * theme-app-extension configuration, offline, with no offence of severity error.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { check, Severity } from '@shopify/theme-check-node'
import { beforeAll, describe, expect, it } from 'vitest'
import { blockSchema, EXTENSION_DIR, renderBlock, shopifyLiquid, stubProduct } from '../helpers/shopify-liquid.js'

const LOCALES = ['en.default', 'fr', 'de', 'es', 'it', 'nl', 'pt-BR', 'ja']
const ROOT = join(EXTENSION_DIR, '..', '..')
const engine = shopifyLiquid({ root: EXTENSION_DIR })
const TOTE = stubProduct(601, 'canvas-tote', 'Canvas "Tote" <Large>', 3900)

/** A block as the theme editor renders it: its settings' defaults, with `settings` over them. */
const render = (block: string, settings: Record<string, unknown> = {}, scope: Record<string, unknown> = {}) =>
  renderBlock(engine, block, { settings, scope, attributes: 'data-shopify-editor-block="b1"' })

/** The element carrying `attr`, as a DOM would read its attributes (entities decoded). */
function attributes(html: string, attr: string): Record<string, string> {
  const tag = new RegExp(`<[a-z]+\\s[^>]*${attr}[^>]*>`).exec(html)?.[0]
  if (tag === undefined) throw new Error(`no element with ${attr} in:\n${html}`)
  const out: Record<string, string> = {}
  for (const m of tag.matchAll(/([a-z-]+)(?:="([^"]*)")?/g)) {
    if (m[1] === undefined) continue
    out[m[1]] = (m[2] ?? '')
      .replace(/&#(\d+);/g, (_e, code: string) => String.fromCharCode(Number(code)))
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  }
  return out
}

beforeAll(() => {
  // The embed loads the widget from the extension's assets: copied from the widget's build.
  if (existsSync(join(ROOT, 'packages', 'widget', 'dist', 'widget.js')))
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-extension.mjs')])
})

describe('the extension, as Shopify CLI lays it out', () => {
  it('has its toml, one app embed on body and app blocks on sections, translated names, and its assets', () => {
    expect(readFileSync(join(EXTENSION_DIR, 'shopify.extension.toml'), 'utf8')).toMatch(/^type = "theme"$/m)
    expect(readdirSync(join(EXTENSION_DIR, 'blocks')).sort()).toEqual([
      'app-embed.liquid',
      'heart.liquid',
      'notify-form.liquid',
      'review-form.liquid',
      'reviews.liquid',
    ])
    expect(blockSchema('app-embed').target).toBe('body')
    for (const b of ['heart', 'reviews', 'review-form', 'notify-form']) expect(blockSchema(b).target).toBe('section')
    for (const locale of LOCALES) {
      expect(existsSync(join(EXTENSION_DIR, 'locales', `${locale}.json`)), locale).toBe(true)
      expect(existsSync(join(EXTENSION_DIR, 'locales', `${locale}.schema.json`)), locale).toBe(true)
    }
    expect(existsSync(join(EXTENSION_DIR, 'assets', 'widget.js'))).toBe(true)
    expect(existsSync(join(EXTENSION_DIR, 'assets', 'wishlist-blocks.css'))).toBe(true)
  })

  it("passes Shopify's Theme Check (theme-app-extension configuration) with no error", async () => {
    const config = createRequire(import.meta.url).resolve('@shopify/theme-check-node/configs/theme-app-extension.yml')
    const offences = await check(EXTENSION_DIR, config)
    const errors = offences
      .filter((o) => o.severity === Severity.ERROR)
      .map((o) => `${o.check} ${o.uri.split('/extensions/')[1]}:${o.start.line} ${o.message}`)
    expect(errors).toEqual([])
  }, 120_000)
})

describe('the app embed', () => {
  it('loads the widget once, from the extension assets, in proxy mode, in the page language, with no override by default', async () => {
    const html = await render('app-embed', {}, { request: { locale: { iso_code: 'pt-BR' } } })
    expect(html.match(/<script/g)).toHaveLength(1)
    const script = attributes(html, 'data-app-proxy')
    expect(script.src).toBe('https://cdn.shopify.example/extensions/test/assets/widget.js')
    expect(script).toHaveProperty('defer')
    expect(script['data-app-proxy']).toBe('/apps/wishlist')
    expect(script['data-logged-in']).toBe('false')
    expect(script['data-locale']).toBe('pt-BR')
    const strings = JSON.parse(script['data-strings'] ?? '') as Record<string, string | null>
    expect(Object.values(strings).every((v) => v === null)).toBe(true)
    expect(html).toContain('--wishlist-heart-color: #c8102e;')
    expect(html).toContain('--wishlist-star-color: #8a5a00;')
    expect(html).not.toContain('wishlist-launcher')
    // A logged-in shopper's page says so: the widget reads their list without asking who they are.
    const customer = await render('app-embed', {}, { customer: { id: 5001, email: 'ann@example.com' } })
    expect(attributes(customer, 'data-app-proxy')['data-logged-in']).toBe('true')
  })

  it("passes the merchant's texts (quotes and all) as JSON and shows the launcher when asked", async () => {
    const html = await render(
      'app-embed',
      { heart_add: 'Save "{title}" <now>', reviews_none: 'Be the first', show_launcher: true, heart_color: '#005500' },
      { request: { locale: { iso_code: 'ja' } } },
    )
    const strings = JSON.parse(attributes(html, 'data-app-proxy')['data-strings'] ?? '') as Record<string, string | null>
    expect(strings).toMatchObject({ 'heart.add': 'Save "{title}" <now>', 'reviews.none': 'Be the first', 'heart.remove': null })
    expect(html).toContain('--wishlist-heart-color: #005500;')
    expect(html).toMatch(
      /<a class="wishlist-launcher" href="\/apps\/wishlist">[\s\S]*ほしい物リスト[\s\S]*<span data-wishlist-count>0<\/span>/,
    )
  })
  it("follows the app proxy's path the service published in the app's metafield, and links the launcher in the page's language", async () => {
    // The merchant moved the proxy to /a/wish; the service wrote it to app.metafields.wishlist.proxy_path.
    const app = { metafields: { wishlist: { proxy_path: { value: '/a/wish', type: 'single_line_text_field' } } } }
    const french = await render(
      'app-embed',
      { show_launcher: true },
      { app, request: { locale: { iso_code: 'fr' } }, routes: { root_url: '/fr', cart_add_url: '/fr/cart/add' } },
    )
    expect(attributes(french, 'data-app-proxy')['data-app-proxy']).toBe('/a/wish')
    expect(french).toContain('<a class="wishlist-launcher" href="/fr/a/wish">')
    // The primary language's root is '/': the path as it is.
    const primary = await render('app-embed', { show_launcher: true }, { app })
    expect(primary).toContain('<a class="wishlist-launcher" href="/a/wish">')
    // Before the service has written it (a new install): the default path.
    const fresh = await render('app-embed', { show_launcher: true }, { routes: { root_url: '/de' } })
    expect(attributes(fresh, 'data-app-proxy')['data-app-proxy']).toBe('/apps/wishlist')
    expect(fresh).toContain('<a class="wishlist-launcher" href="/de/apps/wishlist">')
  })
})

describe('the heart block', () => {
  it("binds the product's id, title (escaped), handle and variant for the widget", async () => {
    const html = await render('heart', { product: TOTE })
    const heart = attributes(html, 'data-wishlist-product-id')
    expect(heart).toMatchObject({
      'data-wishlist-product-id': '601',
      'data-wishlist-product-title': 'Canvas "Tote" <Large>',
      'data-wishlist-handle': 'canvas-tote',
      'data-wishlist-variant-id': '6011',
    })
    expect(JSON.parse(heart['data-strings'] ?? '')).toEqual({ 'heart.add': null, 'heart.remove': null })
    expect(html).toContain('data-shopify-editor-block="b1"')
  })

  it("takes the page's product when the block has none, its own labels, and renders nothing without a product outside the editor", async () => {
    const html = await render('heart', { add_label: 'Keep {title}' }, { product: TOTE })
    expect(attributes(html, 'data-wishlist-product-id')['data-wishlist-product-id']).toBe('601')
    expect(JSON.parse(attributes(html, 'data-wishlist-product-id')['data-strings'] ?? '')).toMatchObject({ 'heart.add': 'Keep {title}' })
    expect((await render('heart')).trim()).toBe('')
    const editor = await render('heart', {}, { request: { locale: { iso_code: 'de' }, design_mode: true } })
    expect(editor).toContain('Wähle in den Einstellungen dieses Blocks ein Produkt aus')
  })
})

describe('the reviews block', () => {
  it('asks the widget for the parts the merchant chose, with the page size', async () => {
    const all = attributes(await render('reviews', { product: TOTE }), 'data-reviews-product-id')
    expect(all).toMatchObject({
      'data-reviews-product-id': '601',
      'data-reviews-product-name': 'Canvas "Tote" <Large>',
      'data-reviews-per-page': '5',
      'data-reviews-show': 'summary list helpful',
    })
    const some = await render('reviews', {
      product: TOTE,
      show_helpful: false,
      show_list: false,
      per_page: 12,
      heading: 'What <buyers> say',
      none_label: 'Be first',
    })
    expect(attributes(some, 'data-reviews-product-id')).toMatchObject({ 'data-reviews-per-page': '12', 'data-reviews-show': 'summary' })
    expect(JSON.parse(attributes(some, 'data-reviews-product-id')['data-strings'] ?? '')).toMatchObject({ 'reviews.none': 'Be first' })
    expect(some).toContain('<h2 class="wishlist-block__heading">What &lt;buyers&gt; say</h2>')
  })
})

describe('the review form block', () => {
  it('renders the opener in the page language, and tells the widget whether the shopper is logged in', async () => {
    const guest = await render('review-form', { product: TOTE }, { request: { locale: { iso_code: 'fr' } } })
    expect(attributes(guest, 'data-wishlist-review-form')).toMatchObject({
      'data-product-id': '601',
      'data-product-title': 'Canvas "Tote" <Large>',
      'data-logged-in': 'false',
    })
    expect(guest).not.toContain('data-customer-email')
    expect(guest).toContain('<button type="button" class="button wishlist-block__open" data-wishlist-review-open>Écrire un avis</button>')

    const customer = await render(
      'review-form',
      { product: TOTE, open_label: 'Review <it>' },
      { customer: { id: 5001, email: 'ann@example.com' } },
    )
    expect(attributes(customer, 'data-wishlist-review-form')).toMatchObject({
      'data-logged-in': 'true',
      'data-customer-email': 'ann@example.com',
    })
    expect(customer).toContain('data-wishlist-review-open>Review &lt;it&gt;</button>')
  })

  it('has the opener translated in every language the extension ships', async () => {
    const seen = new Set<string>()
    for (const iso of ['en', 'fr', 'de', 'es', 'it', 'nl', 'pt-BR', 'ja']) {
      const html = await render('review-form', { product: TOTE }, { request: { locale: { iso_code: iso } } })
      const label = /data-wishlist-review-open>([^<]+)</.exec(html)?.[1] ?? ''
      expect(label, iso).not.toMatch(/translation missing/)
      seen.add(label)
    }
    expect(seen.size).toBe(8)
  })
})

describe('the e-mail alerts block', () => {
  it("renders the widget's notification form, with the merchant's texts as JSON and a logged-in shopper's e-mail", async () => {
    const guest = await render('notify-form', {}, { request: { locale: { iso_code: 'fr' } } })
    const host = attributes(guest, 'data-wishlist-notify-form')
    expect(host['data-logged-in']).toBe('false')
    expect(host).not.toHaveProperty('data-customer-email')
    // Blank settings: the widget's translation of each text.
    expect(JSON.parse(host['data-strings'] ?? '')).toEqual({ 'notify.heading': null, 'notify.consent': null, 'notify.submit': null })

    const consent = 'Write to me about "my" wishlist <only>.'
    const customer = await render(
      'notify-form',
      { consent_label: consent, submit_label: 'Keep me posted' },
      { customer: { id: 5001, email: 'ann@example.com' } },
    )
    const mine = attributes(customer, 'data-wishlist-notify-form')
    expect(mine).toMatchObject({ 'data-logged-in': 'true', 'data-customer-email': 'ann@example.com' })
    expect(JSON.parse(mine['data-strings'] ?? '')).toMatchObject({ 'notify.consent': consent, 'notify.submit': 'Keep me posted' })
  })

  it('has its name and settings translated in every language the extension ships', () => {
    const names = new Set<string>()
    for (const locale of LOCALES) {
      const schema = JSON.parse(readFileSync(join(EXTENSION_DIR, 'locales', `${locale}.schema.json`), 'utf8')) as {
        blocks: { notify_form?: Record<string, string> }
      }
      const own = schema.blocks.notify_form ?? {}
      expect(Object.keys(own).sort(), locale).toEqual(['consent_info', 'consent_label', 'heading', 'name', 'submit_label'])
      names.add(own.name ?? '')
    }
    expect(names.size).toBe(8)
  })
})
