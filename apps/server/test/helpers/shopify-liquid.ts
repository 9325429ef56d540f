/**
 * Shopify's Liquid, as far as the app's pages and theme blocks use it, on liquidjs: the
 * objects a theme page has (`product`, `customer`, `shop`, `request.locale`, `routes`,
 * `all_products`) are given by the test, and the few Shopify-only filters and tags are
 * implemented here: `t` (the extension's `locales/*.json`, by `request.locale`, with
 * `{{ name }}` interpolation and English fallback), `asset_url`, `image_url`, `money`,
 * `json`, and the `schema` / `stylesheet` / `javascript` tags, which render nothing.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Liquid, type TagToken, type TopLevelToken, type Context, type Emitter, Tag, type Liquid as LiquidEngine } from 'liquidjs'

export const EXTENSION_DIR = join(import.meta.dirname, '..', '..', '..', '..', 'extensions', 'wishlist')

export interface StubProduct {
  id: number
  title: string
  handle: string
  url: string
  price: number
  available: boolean
  featured_image: string | null
  variants: { id: number; title: string; price: number; available: boolean; url: string }[]
  selected_or_first_available_variant: { id: number; title: string; price: number; available: boolean; url: string }
}

/** A product as Liquid's `product` / `all_products[handle]` gives it (prices in cents). */
export function stubProduct(
  id: number,
  handle: string,
  title: string,
  cents: number,
  opts: { variants?: number[]; available?: boolean; image?: boolean; imageBase?: string } = {},
): StubProduct {
  const ids = opts.variants ?? [id * 10 + 1]
  const variants = ids.map((vid, i) => ({
    id: vid,
    title: `Variant ${i + 1}`,
    price: cents + i * 100,
    available: opts.available ?? true,
    url: `/products/${handle}?variant=${vid}`,
  }))
  const first = variants.find((v) => v.available) ?? variants[0]
  if (first === undefined) throw new Error('a product has at least one variant')
  return {
    id,
    title,
    handle,
    url: `/products/${handle}`,
    price: first.price,
    available: variants.some((v) => v.available),
    featured_image: opts.image === false ? null : `${opts.imageBase ?? 'https://cdn.example/'}${handle}.jpg`,
    variants,
    selected_or_first_available_variant: first,
  }
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

function lookup(tree: Json | undefined, key: string): Json | undefined {
  let node: Json | undefined = tree
  for (const part of key.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined
    node = node[part]
  }
  return node
}

/** A tag that renders nothing (Shopify reads `schema` itself; `stylesheet`/`javascript` go to the page's bundles). */
function silentBlock(name: string) {
  return class extends Tag {
    constructor(token: TagToken, remain: TopLevelToken[], liquid: LiquidEngine) {
      super(token, remain, liquid)
      while (remain.length > 0) {
        const t = remain.shift() as TopLevelToken & { name?: string }
        if (t.name === `end${name}`) return
      }
      throw new Error(`tag ${name} not closed`)
    }
    *render(_ctx: Context, _emitter: Emitter): Generator<unknown, void, unknown> {}
  }
}

/** A liquidjs engine with Shopify's filters and tags; `root` resolves `{% render %}` snippets. */
export function shopifyLiquid(opts: { root?: string; currency?: string; assetUrl?: (name: string) => string } = {}): Liquid {
  const engine = new Liquid({
    strictFilters: true,
    root: opts.root ? [join(opts.root, 'snippets')] : [],
    extname: '.liquid',
    jsTruthy: false,
  })
  const locales = new Map<string, Json>()
  const localeFile = (name: string): Json | undefined => {
    if (!opts.root) return undefined
    if (!locales.has(name)) {
      try {
        locales.set(name, JSON.parse(readFileSync(join(opts.root, 'locales', `${name}.json`), 'utf8')) as Json)
      } catch {
        locales.set(name, null)
      }
    }
    return locales.get(name) ?? undefined
  }
  engine.registerFilter('t', function (this: { context: Context }, key: string, ...args: unknown[]) {
    const iso = String((this.context.getSync(['request', 'locale', 'iso_code']) as string | undefined) ?? 'en')
    const found =
      lookup(localeFile(iso), key) ?? lookup(localeFile(iso.split('-')[0] ?? 'en'), key) ?? lookup(localeFile('en.default'), key)
    if (typeof found !== 'string') return `translation missing: ${iso}.${key}`
    const vars = Object.fromEntries(args.filter((a): a is [string, unknown] => Array.isArray(a)))
    return found.replace(/\{\{\s*(\w+)\s*\}\}/g, (_m, name: string) => String(vars[name] ?? ''))
  })
  const currency = opts.currency ?? '$'
  engine.registerFilter('money', (cents: unknown) => (typeof cents === 'number' ? `${currency}${(cents / 100).toFixed(2)}` : ''))
  engine.registerFilter('image_url', (image: unknown, ...args: unknown[]) => {
    const width = args.find((a): a is [string, unknown] => Array.isArray(a) && a[0] === 'width')?.[1]
    return typeof image === 'string' ? `${image}?width=${String(width ?? '')}` : ''
  })
  engine.registerFilter('asset_url', opts.assetUrl ?? ((name: string) => `https://cdn.shopify.example/extensions/test/assets/${name}`))
  engine.registerFilter('json', (value: unknown) => JSON.stringify(value ?? null))
  for (const name of ['schema', 'stylesheet', 'javascript']) engine.registerTag(name, silentBlock(name))
  return engine
}

/** An app block's `{% schema %}`: its name, target, settings (with their defaults) and stylesheet. */
export interface BlockSchema {
  name: string
  target: string
  settings: { type: string; id?: string; default?: unknown }[]
  stylesheet?: string
}

/** The Liquid source of the extension's block `name` (blocks/<name>.liquid). */
export const blockSource = (name: string): string => readFileSync(join(EXTENSION_DIR, 'blocks', `${name}.liquid`), 'utf8')

export function blockSchema(name: string): BlockSchema {
  const json = /\{% schema %\}([\s\S]*?)\{% endschema %\}/.exec(blockSource(name))?.[1]
  if (json === undefined) throw new Error(`blocks/${name}.liquid has no schema`)
  return JSON.parse(json) as BlockSchema
}

/**
 * The extension's block `name` as a theme renders it on a page: its settings' defaults with
 * `settings` over them, in the page's `scope`; `attributes` is `block.shopify_attributes`
 * (empty on the storefront, the editor's data attributes in the theme editor).
 */
export async function renderBlock(
  engine: Liquid,
  name: string,
  opts: { settings?: Record<string, unknown>; scope?: Record<string, unknown>; attributes?: string } = {},
): Promise<string> {
  const defaults = Object.fromEntries(
    blockSchema(name)
      .settings.filter((s) => s.id !== undefined)
      .map((s) => [s.id, s.default]),
  )
  return engine.parseAndRender(
    blockSource(name),
    pageScope({
      block: { id: name, settings: { ...defaults, ...opts.settings }, shopify_attributes: opts.attributes ?? '' },
      ...opts.scope,
    }),
  )
}

/** What a theme page gives Liquid, with defaults for what a test does not set. */
export function pageScope(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    request: { locale: { iso_code: 'en' }, design_mode: false },
    shop: { name: 'E2E store', permanent_domain: 'e2e-store.myshopify.com' },
    routes: { root_url: '/', cart_add_url: '/cart/add', account_login_url: '/account/login' },
    customer: null,
    all_products: {},
    ...over,
  }
}
