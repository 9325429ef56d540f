/**
 * The merchant dashboard (apps/dashboard, a React app built by Vite) at /dashboard, in
 * every environment. The page itself is public: it signs in with an admin API key and
 * calls the admin API like any other client. index.html is revalidated on every load
 * (it names the current hashed bundles); files under /dashboard/assets/ carry a content
 * hash in their name and are cached for a year. The app's screens are hash routes
 * (/dashboard#/settings), so the page is served at /dashboard and at /dashboard/index.html
 * only; any other path below /dashboard is a 404.
 *
 * In Shopify app mode the page is the embedded app Shopify admin opens in a frame
 * (`/dashboard?shop={shop}.myshopify.com&host=…&id_token=…`): for such a request the page may
 * be framed by that shop's admin only (`frame-ancestors https://{shop} https://admin.shopify.com`,
 * as Shopify requires of embedded apps), and by nothing else otherwise.
 */
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { dirname, extname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError } from '../../lib/errors.js'

// src/modules/dashboard and dist/modules/dashboard sit at the same depth below the
// repository root, so this resolves in development (tsx) and after `npm run build`.
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../..')
export const DASHBOARD_DIST = resolve(REPO_ROOT, 'apps/dashboard/dist')

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
}

/**
 * Same-origin only: the app's scripts and styles, API calls to this server, no framing.
 * The chart is inline SVG markup (not a data: URL); the favicon is an empty data: URL.
 */
const cspFramedBy = (ancestors: string) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${ancestors}`,
  ].join('; ')
export const DASHBOARD_CSP = cspFramedBy("'none'")
/** The policy of the page Shopify admin embeds for `shop` (a `*.myshopify.com` domain). */
export const embeddedDashboardCsp = (shop: string) => cspFramedBy(`https://${shop} https://admin.shopify.com`)
const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]{0,62}\.myshopify\.com$/

interface Cached {
  body: Buffer
  etag: string
  mtimeMs: number
}

/** Reads a file once and again only when it changes on disk; undefined when missing. */
function fileCache() {
  const cache = new Map<string, Cached>()
  return async (file: string): Promise<Cached | undefined> => {
    let mtimeMs: number
    try {
      const s = await stat(file)
      if (!s.isFile()) return undefined
      mtimeMs = s.mtimeMs
    } catch {
      cache.delete(file)
      return undefined
    }
    const hit = cache.get(file)
    if (hit?.mtimeMs === mtimeMs) return hit
    const body = await readFile(file)
    const entry = { body, mtimeMs, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }
    cache.set(file, entry)
    return entry
  }
}

const securityHeaders = (reply: FastifyReply, framable = false) => {
  reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer').header('cross-origin-opener-policy', 'same-origin')
  // X-Frame-Options has no "only these origins": an embeddable page relies on frame-ancestors alone.
  return framable ? reply : reply.header('x-frame-options', 'DENY')
}

export const dashboardRoutes: FastifyPluginAsyncTypebox<{ distDir?: string; shopifyEmbedded?: boolean }> = async (app, opts) => {
  const dist = opts.distDir ?? DASHBOARD_DIST
  const read = fileCache()
  const config = { access: ['public' as const], rateLimit: false as const }
  const hide = true

  const servePage = async (request: FastifyRequest, reply: FastifyReply) => {
    const page = await read(resolve(dist, 'index.html'))
    const shop = (request.query as { shop?: unknown } | undefined)?.shop
    const embeddedIn = opts.shopifyEmbedded && typeof shop === 'string' && SHOP_DOMAIN.test(shop) ? shop : undefined
    securityHeaders(reply, embeddedIn !== undefined).header('cache-control', 'no-cache')
    if (!page) {
      request.log.warn({ dist }, 'dashboard requested but not built')
      return reply
        .code(503)
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'")
        .send(
          '<!doctype html><html lang="en"><meta charset="utf-8"><title>Dashboard not built</title>' +
            '<h1>The dashboard is not built</h1><p>Run <code>npm run build</code> (or <code>npm install</code>) at the repository root, then reload.</p></html>',
        )
    }
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('etag', page.etag)
      .header('content-security-policy', embeddedIn ? embeddedDashboardCsp(embeddedIn) : DASHBOARD_CSP)
    if (request.headers['if-none-match'] === page.etag) return reply.code(304).send()
    return reply.send(page.body)
  }
  app.get('/dashboard', { config, schema: { hide } }, servePage)
  app.get('/dashboard/index.html', { config, schema: { hide } }, servePage)

  app.get(
    '/dashboard/assets/:file',
    { config, schema: { hide, params: Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$' }) }) } },
    async (request, reply) => {
      const { file } = request.params
      const type = CONTENT_TYPES[extname(file)]
      const asset = type ? await read(resolve(dist, 'assets', file)) : undefined
      if (!type || !asset) throw new AppError('NOT_FOUND', 'No such dashboard asset (the dashboard may have been rebuilt: reload the page)')
      securityHeaders(reply)
        .header('content-type', type)
        .header('etag', asset.etag)
        // The file name carries a content hash: it never changes.
        .header('cache-control', 'public, max-age=31536000, immutable')
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send()
      return reply.send(asset.body)
    },
  )
}
