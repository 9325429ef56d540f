/**
 * Storefront assets: GET /widget.js (the built packages/widget script) always, and, only
 * under `wishlist serve --demo`, the demo storefront at /demo (the widget on a product grid
 * plus a small React app built from apps/demo with @wishlist/sdk) with its login.
 */
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { DEMO_DOMAIN } from '../../cli/demo.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import type { AuthService } from '../auth/auth.service.js'
import type { ShopsService } from '../shops/shops.service.js'
import { faviconIco } from './favicon.js'

// src/modules/storefront and dist/modules/storefront sit at the same depth below the
// repository root, so this resolves in development (tsx) and after `npm run build`.
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../..')
export const WIDGET_FILE = resolve(REPO_ROOT, 'packages/widget/dist/widget.js')
const DEMO_HTML = resolve(REPO_ROOT, 'apps/demo/index.html')
const DEMO_APP = resolve(REPO_ROOT, 'apps/demo/dist/app.js')

interface Asset {
  body: Buffer
  /** The body gzipped once, for clients that accept it (the widget is ~3 KB so, ~7 KB plain). */
  gzipped: Buffer
  etag: string
  hash: string
  mtimeMs: number
}

/** Whether `Accept-Encoding` takes gzip (named, or `*`, without `q=0`). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0)
  })
}

/** Reads a built file once and again only when it changes on disk; undefined when missing. */
function assetLoader(file: string) {
  let cached: Asset | undefined
  return async (): Promise<Asset | undefined> => {
    let mtimeMs: number
    try {
      mtimeMs = (await stat(file)).mtimeMs
    } catch {
      return undefined
    }
    if (cached?.mtimeMs !== mtimeMs) {
      const body = await readFile(file)
      const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16)
      cached = { body, gzipped: gzipSync(body, { level: 9 }), hash, etag: `"${hash}"`, mtimeMs }
    }
    return cached
  }
}

const DEMO_LOGIN_KEY_NAME = 'Demo storefront login'

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export const storefrontRoutes: FastifyPluginAsyncTypebox<{ shops: ShopsService; auth: AuthService; demo: boolean }> = async (app, opts) => {
  const assetConfig = { access: ['public' as const], rateLimit: false as const }
  const widget = assetLoader(WIDGET_FILE)

  app.get(
    '/widget.js',
    {
      config: assetConfig,
      schema: {
        tags: ['storefront'],
        summary: 'The embeddable storefront widget (see packages/widget/README.md)',
        querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }),
      },
    },
    async (request, reply) => {
      const asset = await widget()
      if (!asset) throw new AppError('NOT_FOUND', 'The widget is not built: run `npm run build`')
      // A URL carrying the current content hash (`/widget.js?v=<hash>`) never changes: cache
      // it for a year. The bare URL is cached for a day and revalidated with the ETag.
      const versioned = request.query.v === asset.hash
      // Each encoding is its own representation, with its own validator.
      const gzip = acceptsGzip(request.headers['accept-encoding'])
      const etag = gzip ? `"${asset.hash}.gz"` : asset.etag
      reply
        .header('content-type', 'application/javascript; charset=utf-8')
        .header('vary', 'accept-encoding')
        .header('etag', etag)
        .header('cache-control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=86400, stale-while-revalidate=604800')
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'cross-origin')
        .header('x-widget-version', asset.hash)
      if (request.headers['if-none-match'] === etag) return reply.code(304).send()
      if (gzip) reply.header('content-encoding', 'gzip')
      return reply.send(gzip ? asset.gzipped : asset.body)
    },
  )

  // Browsers ask every origin for /favicon.ico; answer with a small icon rather than a 404.
  const favicon = faviconIco()
  const faviconEtag = `"${createHash('sha256').update(favicon).digest('base64url').slice(0, 16)}"`
  app.get('/favicon.ico', { config: assetConfig, schema: { hide: true } }, async (request, reply) => {
    reply.header('content-type', 'image/x-icon').header('cache-control', 'public, max-age=604800').header('etag', faviconEtag)
    if (request.headers['if-none-match'] === faviconEtag) return reply.code(304).send()
    return reply.send(favicon)
  })

  if (!opts.demo) return

  const demoApp = assetLoader(DEMO_APP)
  const demoHtml = assetLoader(DEMO_HTML)
  const demoConfig = { access: ['public' as const] }
  const hide = true
  // A customer-scope key of the demo shop, made on the first demo login of this process;
  // the one an earlier process made is revoked, so restarts do not pile up keys (a shop
  // has at most 50 active ones).
  let demoKey: Promise<{ keyId: string; secret: string }> | undefined

  app.get('/demo', { config: demoConfig, schema: { hide } }, async (_request, reply) => {
    const html = await demoHtml()
    if (!html) throw new AppError('NOT_FOUND', 'The demo page is missing (apps/demo/index.html)')
    const shop = await opts.shops.byDomain(DEMO_DOMAIN)
    const page = html.body
      .toString('utf8')
      .replaceAll('{{STOREFRONT_KEY}}', escapeHtml(shop?.storefrontKey ?? ''))
      .replaceAll('{{WIDGET_VERSION}}', escapeHtml((await widget())?.hash ?? ''))
      .replaceAll('{{DEMO_READY}}', shop ? 'true' : 'false')
    return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(page)
  })

  app.get('/demo/app.js', { config: demoConfig, schema: { hide } }, async (_request, reply) => {
    const asset = await demoApp()
    if (!asset) throw new AppError('NOT_FOUND', 'The demo app is not built: run `npm run build`')
    return reply.header('content-type', 'application/javascript; charset=utf-8').header('etag', asset.etag).header('cache-control', 'no-cache').send(asset.body)
  })

  app.post(
    '/demo/login',
    {
      config: demoConfig,
      schema: {
        hide,
        body: Type.Object({ customerId: Type.String({ pattern: '^[0-9]{1,32}$' }) }),
        response: { 200: Ok(Type.Object({ customerId: Type.String(), token: Type.String(), expires_in: Type.Integer() })), ...errors(400, 404) },
      },
    },
    async (request) => {
      // Development only, and only for the demo shop: a stand-in for the merchant's own
      // login, which would mint the customer token on its backend.
      const shop = await opts.shops.byDomain(DEMO_DOMAIN)
      if (!shop) throw new AppError('NOT_FOUND', 'No demo shop: start with `npm run demo`')
      demoKey ??= (async () => {
        for (const k of await opts.shops.listApiKeys(shop.id)) if (k.name === DEMO_LOGIN_KEY_NAME) await opts.auth.revokeKey(shop.id, k.id)
        const k = await opts.shops.createApiKey(shop.id, { name: DEMO_LOGIN_KEY_NAME, scope: 'customer' })
        return { keyId: k.keyId, secret: k.secret }
      })()
      const key = await demoKey
      const issued = await opts.auth.exchange({ api_key: key.keyId, api_secret: key.secret, customer_id: request.body.customerId })
      return { ok: true as const, data: { customerId: request.body.customerId, token: issued.token, expires_in: issued.expires_in } }
    },
  )
}
