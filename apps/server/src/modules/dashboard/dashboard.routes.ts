/**
 * The merchant dashboard (apps/dashboard, built by Vite) at /dashboard and
 * /dashboard/index.html (its screens are hash routes); the page is public and signs in with
 * an admin API key. index.html is revalidated on every load; hashed files under
 * /dashboard/assets/ are cached for a year. Inside a platform, a request whose query proves
 * one of its shops (Shopify: its admin's `hmac` or session token for `?shop=`) may be framed
 * by that shop's admin only (as Shopify requires of embedded apps), and by nothing otherwise:
 * an unsigned `?shop=` frames nothing.
 */
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ASSETS } from '../../lib/assets.js'
import { AppError } from '../../lib/errors.js'
import type { Platform } from '../../platforms/platform.js'

export const DASHBOARD_DIST = ASSETS.dashboardDir

/** What a Vite build puts under assets/; any other name is a 404. */
const ASSET = /\.(js|css|svg|png|woff2|map)$/

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
/** The policy of the page a platform's admin embeds: framed by `origins` only. */
export const embeddedDashboardCsp = (origins: readonly string[]) => cspFramedBy(origins.join(' '))

const securityHeaders = (reply: FastifyReply, framable = false) => {
  reply
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
  // X-Frame-Options has no "only these origins": an embeddable page relies on frame-ancestors alone.
  return framable ? reply : reply.header('x-frame-options', 'DENY')
}

export interface DashboardRoutesOptions {
  distDir?: string
  /** The configured platforms, whose admin may frame the page for a shop the request's query proves (`embeddingOrigins`). */
  platforms: readonly Platform[]
}

export const dashboardRoutes: FastifyPluginAsyncTypebox<DashboardRoutesOptions> = async (app, opts) => {
  const dist = opts.distDir ?? DASHBOARD_DIST
  // Files with their validators (ETag, Last-Modified, 304) and the build's .gz beside them.
  await app.register(fastifyStatic, { root: dist, serve: false, preCompressed: true, cacheControl: false })
  const config = { access: ['public' as const], rateLimit: false as const }
  // Shopify admin opens the page with its `hmac` and session token (`id_token`) in the query: never logged.
  const pageConfig = { ...config, credentialQuery: ['hmac', 'id_token'] }
  const hide = true
  const embedders = opts.platforms.filter((p) => p.embeddingOrigins !== undefined)

  /** The origins that may frame the page for this query: those of the first platform that proves a shop of it. */
  async function embeddingOrigins(rawQuery: string): Promise<readonly string[] | undefined> {
    for (const platform of embedders) {
      const proven = await platform.embeddingOrigins?.(rawQuery)
      if (proven !== undefined) return proven
    }
    return undefined
  }

  const servePage = async (request: FastifyRequest, reply: FastifyReply) => {
    const q = request.url.indexOf('?')
    const embeddedIn = q !== -1 && embedders.length > 0 ? await embeddingOrigins(request.url.slice(q + 1)) : undefined
    securityHeaders(reply, embeddedIn !== undefined)
      .header('cache-control', 'no-cache')
      .header('vary', 'accept-encoding')
    if (!(await stat(resolve(dist, 'index.html')).catch(() => undefined))) {
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
    return reply.header('content-security-policy', embeddedIn ? embeddedDashboardCsp(embeddedIn) : DASHBOARD_CSP).sendFile('index.html')
  }
  app.get('/dashboard', { config: pageConfig, schema: { hide } }, servePage)
  app.get('/dashboard/index.html', { config: pageConfig, schema: { hide } }, servePage)

  app.get(
    '/dashboard/assets/:file',
    { config, schema: { hide, params: Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$' }) }) } },
    async (request, reply) => {
      const { file } = request.params
      if (!ASSET.test(file)) throw new AppError('NOT_FOUND', 'No such dashboard asset')
      // The file name carries a content hash: it never changes. A missing file is the
      // not-found envelope (the dashboard may have been rebuilt: reload the page).
      return securityHeaders(reply)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('vary', 'accept-encoding')
        .sendFile(`assets/${file}`)
    },
  )
}
