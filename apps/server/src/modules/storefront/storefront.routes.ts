/**
 * Storefront assets: GET /widget.js (the built packages/widget script) always, and, only
 * under `wishlist serve --demo`, the demo storefront at /demo (the widget on a product grid
 * plus a small React app built from apps/demo with wishlist-service-sdk) with its login.
 */
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { ASSETS } from '../../lib/assets.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import type { AuthService } from '../auth/auth.service.js'
import type { ShopsService } from '../shops/shops.service.js'
import { faviconIco } from './favicon.js'
import { escapeHtml } from '../../lib/html-text.js'

/** The shop `wishlist serve --demo` creates and the demo storefront shows. */
export const DEMO_DOMAIN = 'demo.myshopify.com'

export const WIDGET_FILE = ASSETS.widgetFile
/**
 * The widget's chunks, loaded on use from next to the first script (`widget-<name>.js`): the
 * review form, the guest's wishlist page, the notification form, and one per language beyond English.
 */
export const WIDGET_CHUNKS = [
  'review-form',
  'wishlist-page',
  'notify-form',
  ...['fr', 'de', 'es', 'it', 'nl', 'pt-BR', 'ja'].map((tag) => `locale-${tag}`),
].map((name) => `widget-${name}.js`)
const DEMO_HTML = ASSETS.demoHtml
const DEMO_APP = ASSETS.demoApp

/** A content hash of the widget, read again only when the file changes; undefined when it is not built. */
function widgetVersion() {
  let cached: { mtimeMs: number; hash: string } | undefined
  return async (): Promise<string | undefined> => {
    const mtimeMs = (await stat(WIDGET_FILE).catch(() => undefined))?.mtimeMs
    if (mtimeMs === undefined) return undefined
    if (cached?.mtimeMs !== mtimeMs)
      cached = {
        mtimeMs,
        hash: createHash('sha256')
          .update(await readFile(WIDGET_FILE))
          .digest('base64url')
          .slice(0, 16),
      }
    return cached.hash
  }
}

const DEMO_LOGIN_KEY_NAME = 'Demo storefront login'

export const storefrontRoutes: FastifyPluginAsyncTypebox<{ shops: ShopsService; auth: AuthService; demo: boolean }> = async (app, opts) => {
  // Files with their validators (ETag, Last-Modified, 304) and the build's widget.js.gz.
  await app.register(fastifyStatic, { root: dirname(WIDGET_FILE), serve: false, preCompressed: true, cacheControl: false })
  const version = widgetVersion()

  /**
   * A file of the widget's build. A URL carrying the current content hash (`?v=<hash>`) never
   * changes: cached for a year. The bare URL is cached for a day and revalidated with the ETag.
   * The first script also names its build (`x-widget-version`).
   */
  async function sendWidgetFile(reply: FastifyReply, file: string, v: string | undefined, named: boolean) {
    const hash = await version()
    if (hash === undefined) throw new AppError('NOT_FOUND', 'The widget is not built: run `npm run build`')
    reply
      .header('vary', 'accept-encoding')
      .header('cache-control', v === hash ? 'public, max-age=31536000, immutable' : 'public, max-age=86400, stale-while-revalidate=604800')
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'cross-origin')
    if (named) reply.header('x-widget-version', hash)
    return reply.sendFile(file)
  }

  app.get(
    '/widget.js',
    {
      config: { access: ['public'], rateLimit: false },
      schema: {
        tags: ['storefront'],
        querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }),
      },
    },
    async (request, reply) => sendWidgetFile(reply, basename(WIDGET_FILE), request.query.v, true),
  )

  // The chunks carry the first script's query (`?v=<hash>`): immutable when it names the current build.
  for (const file of WIDGET_CHUNKS) {
    app.get(
      `/${file}`,
      {
        config: { access: ['public'], rateLimit: false },
        schema: { hide: true, querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }) },
      },
      async (request, reply) => sendWidgetFile(reply, file, request.query.v, false),
    )
  }

  // Browsers ask every origin for /favicon.ico; answer with a small icon rather than a 404.
  const favicon = faviconIco()
  const faviconEtag = `"${createHash('sha256').update(favicon).digest('base64url').slice(0, 16)}"`
  app.get('/favicon.ico', { config: { access: ['public'], rateLimit: false }, schema: { hide: true } }, async (request, reply) => {
    reply.header('content-type', 'image/x-icon').header('cache-control', 'public, max-age=604800').header('etag', faviconEtag)
    if (request.headers['if-none-match'] === faviconEtag) return reply.code(304).send()
    return reply.send(favicon)
  })

  if (!opts.demo) return

  const demoConfig = { access: ['public' as const] }
  const hide = true
  // A customer-scope key of the demo shop, made on the first demo login of this process;
  // the one an earlier process made is revoked, so restarts do not pile up keys (a shop
  // has at most 50 active ones).
  let demoKey: Promise<{ keyId: string; secret: string }> | undefined

  app.get('/demo', { config: demoConfig, schema: { hide } }, async (_request, reply) => {
    const html = await readFile(DEMO_HTML, 'utf8').catch(() => undefined)
    if (html === undefined) throw new AppError('NOT_FOUND', 'The demo page is missing (apps/demo/index.html is not built)')
    const shop = await opts.shops.byDomain(DEMO_DOMAIN)
    const page = html
      .replaceAll('{{STOREFRONT_KEY}}', escapeHtml(shop?.storefrontKey ?? ''))
      .replaceAll('{{WIDGET_VERSION}}', escapeHtml((await version()) ?? ''))
      .replaceAll('{{DEMO_READY}}', shop ? 'true' : 'false')
    return reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(page)
  })

  app.get('/demo/app.js', { config: demoConfig, schema: { hide } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').sendFile(basename(DEMO_APP), dirname(DEMO_APP)),
  )

  app.post(
    '/demo/login',
    {
      // A customer token: `private, no-store` (plugins/caching.ts).
      config: { ...demoConfig, cache: 'private' as const },
      schema: {
        hide,
        body: Type.Object({ customerId: Type.String({ pattern: '^[0-9]{1,32}$' }) }),
        response: {
          200: Ok(Type.Object({ customerId: Type.String(), token: Type.String(), expires_in: Type.Integer() })),
          ...errors(400, 404),
        },
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
