/**
 * The storefront-impact pages: a home, a product and a collection page of a Dawn-like theme
 * (e2e/fixtures/dawn: Dawn's sections, classes and conventions, compacted, with sample
 * products), each rendered twice: without the app, and with the app embed and the app blocks
 * rendered from the theme app extension's own Liquid (extensions/wishlist/blocks), so the
 * pages follow the blocks as they change. The hearts go on the product cards too, as the
 * heart block renders in a card section that accepts app blocks.
 *
 * A small storefront of its own serves them as Shopify would: the pages, the theme's and the
 * extension's assets under /cdn/ on the shop's origin (gzipped, as Shopify's CDN sends them),
 * product photos (JPEGs painted once by Chromium, with their width and height in the markup),
 * Shopify's /cart/add.js, and the app proxy (/apps/wishlist signed and forwarded to the
 * service). No request leaves the machine.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import type { Browser } from 'playwright-core'
import {
  blockSchema,
  EXTENSION_DIR,
  pageScope,
  renderBlock,
  shopifyLiquid,
  stubProduct,
  type StubProduct,
} from '../../apps/server/test/helpers/shopify-liquid.js'
import { APP_PROXY_PREFIX, forwardToAppProxy } from './app-proxy.js'

const DAWN_DIR = fileURLToPath(new URL('../fixtures/dawn/', import.meta.url))
const THEME_ASSETS = '/cdn/shop/t/1/assets/'
const APP_ASSETS = '/cdn/shop/extensions/wishlist/assets/'
const FILES = '/cdn/shop/files/'

/** The three pages Shopify measures, with its weights (the share of a store's traffic each stands for). */
export const PAGES = {
  home: { path: '/', weight: 0.17 },
  product: { path: '/products/linen-shirt', weight: 0.4 },
  collection: { path: '/collections/all', weight: 0.43 },
} as const
export type PageName = keyof typeof PAGES

interface SampleData {
  shop: string
  collection: { title: string; description: string }
  menu: { title: string; url: string }[]
  products: { handle: string; title: string; price: number; sizes?: string[]; images?: number; available?: boolean }[]
  description: string
}
type Product = StubProduct & { vendor: string; description: string; images: string[] }

const data = JSON.parse(readFileSync(join(DAWN_DIR, 'products.json'), 'utf8')) as SampleData
const products: Product[] = data.products.map((p, i) => {
  const id = 8001 + i
  const sizes = p.sizes ?? ['One size']
  const stub = stubProduct(id, p.handle, p.title, p.price, {
    variants: sizes.map((_, j) => id * 10 + j + 1),
    available: p.available ?? true,
    imageBase: FILES,
  })
  const variants = stub.variants.map((v, j) => ({ ...v, title: sizes[j] ?? v.title, price: p.price }))
  const images = Array.from({ length: p.images ?? 1 }, (_, k) => `${FILES}${p.handle}${k === 0 ? '' : `-${k + 1}`}.jpg`)
  return {
    ...stub,
    variants,
    selected_or_first_available_variant: variants.find((v) => v.available) ?? variants[0]!,
    vendor: data.shop,
    description: data.description,
    images,
  }
})
const [featuredProduct] = products
if (featuredProduct === undefined) throw new Error('products.json has no product')
export const PRODUCT = featuredProduct

/** The product page's blocks in Dawn's order; '@app' ones only with the app. */
const PRODUCT_BLOCKS = [
  'text',
  'title',
  '@app:heart',
  'price',
  'variant_picker',
  'quantity_selector',
  'buy_buttons',
  '@app:review-form',
  'description',
  'collapsible_tab',
  '@app:reviews',
]

const theme = shopifyLiquid({ root: DAWN_DIR, assetUrl: (name) => `${THEME_ASSETS}${name}` })
const extension = shopifyLiquid({ root: EXTENSION_DIR, assetUrl: (name) => `${APP_ASSETS}${name}` })
const template = (name: string) => readFileSync(join(DAWN_DIR, 'templates', `${name}.liquid`), 'utf8')
const layout = readFileSync(join(DAWN_DIR, 'layout', 'theme.liquid'), 'utf8')

/** What the page's Liquid sees, for a guest or a logged-in customer. */
function scopeOf(customerId: string, extra: Record<string, unknown> = {}) {
  return pageScope({
    shop: { name: data.shop, permanent_domain: 'dawn-fixture.myshopify.com' },
    customer: customerId ? { id: Number(customerId), email: `c${customerId}@example.com` } : null,
    ...extra,
  })
}

/** A page of the theme, with or without the app, for a guest (`customerId` empty) or a customer. */
async function renderPage(name: PageName, app: boolean, customerId: string): Promise<string> {
  const page = scopeOf(customerId, name === 'product' ? { product: PRODUCT } : {})
  const used = new Set<string>()
  const appBlock = (block: string, settings: Record<string, unknown> = {}) => {
    used.add(block)
    return renderBlock(extension, block, { settings, scope: page })
  }
  const hearts: Record<string, string> = {}
  if (app) for (const p of products) hearts[p.handle] = await appBlock('heart', { product: p })
  const blocks = []
  for (const type of name === 'product' ? PRODUCT_BLOCKS : []) {
    if (!type.startsWith('@app:')) blocks.push({ type })
    else if (app) blocks.push({ type: '@app', html: await appBlock(type.slice('@app:'.length)) })
  }
  const content = await theme.parseAndRender(template(name === 'home' ? 'index' : name), {
    ...page,
    hero: `${FILES}hero.jpg`,
    featured: products.slice(0, 8),
    collection: { ...data.collection, products },
    related: products.slice(1, 5),
    blocks,
    hearts,
  })
  const embed = app ? await appBlock('app-embed') : ''
  // Shopify's content_for_header: its storefront object, and the app blocks' stylesheets, once each.
  const stylesheets = [...new Set([...used].map((b) => blockSchema(b).stylesheet).filter((s): s is string => s !== undefined))]
  const header = [
    `<script>window.Shopify = window.Shopify || {}; Shopify.shop = "dawn-fixture.myshopify.com"; Shopify.locale = "en"; Shopify.currency = { active: "USD", rate: "1.0" }; Shopify.routes = { root: "/" };</script>`,
    ...stylesheets.map((s) => `<link href="${APP_ASSETS}${s}" rel="stylesheet" type="text/css" media="all">`),
  ].join('\n')
  const titles: Record<PageName, string> = { home: data.shop, product: PRODUCT.title, collection: data.collection.title }
  return theme.parseAndRender(layout, {
    ...page,
    page_title: titles[name],
    page_description: `${titles[name]}: ${data.collection.description}`,
    canonical_url: PAGES[name].path,
    menu: data.menu,
    content_for_header: header,
    content_for_layout: content,
    app_embed: embed,
  })
}

/** The photos the pages show (name → width → JPEG), painted once by Chromium: soft shapes on a gradient, seeded by name. */
async function paintPhotos(browser: Browser): Promise<Map<string, Map<number, Buffer>>> {
  const wanted = [
    { name: 'hero', widths: [750, 1500], ratio: 0.5 },
    ...products.flatMap((p) => p.images.map((src) => ({ name: src.slice(FILES.length, -'.jpg'.length), widths: [360, 720], ratio: 1 }))),
  ]
  const context = await browser.newContext()
  const page = await context.newPage()
  // No named functions inside: the page runs the source as the test runner compiled it.
  const painted = await page.evaluate((list) => {
    const out: { name: string; width: number; data: string }[] = []
    for (const { name, widths, ratio } of list) {
      // A small seeded generator (mulberry32), seeded by the name: the same photo every run.
      let seed = [...name].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619), 2166136261)
      const numbers = Array.from({ length: 161 * 5 }, () => {
        seed = (seed + 0x6d2b79f5) | 0
        let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296
      })
      const hue = numbers[0]! * 360
      for (const width of widths) {
        const height = Math.round(width * ratio)
        const canvas = document.createElement('canvas')
        canvas.width = width
        canvas.height = height
        const ctx = canvas.getContext('2d')!
        const sky = ctx.createLinearGradient(0, 0, width, height)
        sky.addColorStop(0, `hsl(${hue} 35% 80%)`)
        sky.addColorStop(1, `hsl(${(hue + 60) % 360} 30% 45%)`)
        ctx.fillStyle = sky
        ctx.fillRect(0, 0, width, height)
        for (let i = 5; i < numbers.length; i += 5) {
          const [x, y, r, h, a] = numbers.slice(i, i + 5) as [number, number, number, number, number]
          ctx.fillStyle = `hsla(${h * 360} 45% ${30 + a * 50}% / ${0.15 + a * 0.5})`
          ctx.beginPath()
          ctx.ellipse(x * width, y * height, (0.02 + r * 0.18) * width, (0.02 + r * 0.12) * width, h * 6, 0, Math.PI * 2)
          ctx.fill()
        }
        // Grain, as a photo has: what makes a JPEG weigh what a product photo weighs.
        const pixels = ctx.getImageData(0, 0, width, height)
        for (let p = 0; p < pixels.data.length; p += 4) {
          const grain = (Math.imul(p, 2654435761) >>> 24) / 16 - 8
          for (let c = p; c < p + 3; c++) pixels.data[c] = (pixels.data[c] ?? 0) + grain
        }
        ctx.putImageData(pixels, 0, 0)
        out.push({ name, width, data: canvas.toDataURL('image/jpeg', 0.82).slice('data:image/jpeg;base64,'.length) })
      }
    }
    return out
  }, wanted)
  await context.close()
  const photos = new Map<string, Map<number, Buffer>>()
  for (const { name, width, data: base64 } of painted) {
    if (!photos.has(name)) photos.set(name, new Map())
    photos.get(name)!.set(width, Buffer.from(base64, 'base64'))
  }
  return photos
}

export interface DawnStore {
  url: string
  /** A page's address on the store; without the app it carries `?app=off`. */
  pageUrl(name: PageName, app: boolean): string
  /** Every request that reached the app proxy (so the service), in order: `METHOD /apps/wishlist/…`. */
  proxied: string[]
  close(): Promise<void>
}

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.jpg': 'image/jpeg',
}

/**
 * Starts the store. `service`: the wishlist service in Shopify app mode, with the app's
 * secret and the shop's domain the proxy signs for; `browser` paints the photos.
 */
export async function startDawnStore(service: { url: string; secret: string; shop: string }, browser: Browser): Promise<DawnStore> {
  const photos = await paintPhotos(browser)
  const pages = new Map<string, Promise<string>>()
  const pageOf = (name: PageName, app: boolean, customerId: string) => {
    const key = `${name}:${app}:${customerId}`
    if (!pages.has(key)) pages.set(key, renderPage(name, app, customerId))
    return pages.get(key)!
  }
  // Rendered before the first visit, so that no page's first answer waits on Liquid.
  await Promise.all((Object.keys(PAGES) as PageName[]).flatMap((name) => [pageOf(name, true, ''), pageOf(name, false, '')]))
  const proxied: string[] = []
  const gzipped = new Map<string, Buffer>()

  const send = (req: IncomingMessage, res: ServerResponse, type: string, body: Buffer | string, cache: string) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body
    const headers: Record<string, string> = { 'content-type': type, 'cache-control': cache, vary: 'Accept-Encoding' }
    if (!type.startsWith('image/') && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      const key = `${req.url}:${bytes.length}`
      if (!gzipped.has(key)) gzipped.set(key, gzipSync(bytes))
      headers['content-encoding'] = 'gzip'
      res.writeHead(200, headers).end(gzipped.get(key))
    } else res.writeHead(200, headers).end(bytes)
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://store')
    const customerId = /(?:^|;\s*)customer_id=(\d+)/.exec(req.headers.cookie ?? '')?.[1] ?? ''
    const name = (Object.keys(PAGES) as PageName[]).find((n) => PAGES[n].path === url.pathname)
    if (name !== undefined && req.method === 'GET') {
      const app = url.searchParams.get('app') !== 'off'
      return send(req, res, 'text/html; charset=utf-8', await pageOf(name, app, customerId), 'no-cache')
    }
    if (url.pathname.startsWith(THEME_ASSETS) || url.pathname.startsWith(APP_ASSETS)) {
      const dir = url.pathname.startsWith(THEME_ASSETS) ? join(DAWN_DIR, 'assets') : join(EXTENSION_DIR, 'assets')
      const file = join(dir, url.pathname.slice(url.pathname.indexOf('/assets/') + '/assets/'.length))
      if (!file.startsWith(dir) || !existsSync(file)) return void res.writeHead(404).end()
      return send(req, res, TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(file), 'public, max-age=31536000')
    }
    if (url.pathname.startsWith(FILES)) {
      const sizes = photos.get(url.pathname.slice(FILES.length, -'.jpg'.length))
      if (sizes === undefined) return void res.writeHead(404).end()
      // Shopify's image CDN answers `?width=` with the nearest size it has at least that wide.
      const asked = Number(url.searchParams.get('width') ?? Infinity)
      const widths = [...sizes.keys()].sort((a, b) => a - b)
      const width = widths.find((w) => w >= asked) ?? widths[widths.length - 1]!
      return send(req, res, 'image/jpeg', sizes.get(width)!, 'public, max-age=31536000')
    }
    if (url.pathname === '/cart/add.js' && req.method === 'POST') return send(req, res, 'application/json', '{}', 'no-store')
    if (url.pathname.startsWith(`${APP_PROXY_PREFIX}/`)) {
      proxied.push(`${req.method} ${url.pathname}${url.search}`)
      const answer = await forwardToAppProxy(
        service.url,
        { shop: service.shop, secret: service.secret, customerId },
        {
          method: req.method ?? 'GET',
          url,
          headers: req.headers,
          body,
        },
      )
      return void res.writeHead(answer.status, answer.headers).end(answer.body)
    }
    res.writeHead(404).end()
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => void handle(req, res, Buffer.concat(chunks)).catch((err: unknown) => res.writeHead(500).end(String(err))))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    pageUrl: (name, app) => `${url}${PAGES[name].path}${app ? '' : '?app=off'}`,
    proxied,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
