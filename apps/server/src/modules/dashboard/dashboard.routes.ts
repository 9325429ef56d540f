/**
 * The merchant dashboard (apps/dashboard, built by Vite) at /dashboard and
 * /dashboard/index.html (its screens are hash routes); the page is public and signs in with
 * an admin API key. index.html is revalidated on every load; hashed files under
 * /dashboard/assets/ are cached for a year. Inside a platform, a request whose query proves
 * one of its shops (Shopify: its admin's `hmac` or session token for `?shop=`) may be framed
 * by that shop's admin only (as Shopify requires of embedded apps), and by nothing otherwise:
 * an unsigned `?shop=` frames nothing. Such a page also gets the admin's script first in its
 * `<head>` (Shopify: App Bridge, whose session tokens then authenticate every API call).
 */
import { readFile, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ASSETS } from '../../lib/assets.js'
import { AppError } from '../../lib/errors.js'
import { inert } from '../../lib/html-text.js'
import type { DashboardEmbedding, Platform } from '../../platforms/platform.js'

export const DASHBOARD_DIST = ASSETS.dashboardDir

/** What a Vite build puts under assets/; any other name is a 404. */
const ASSET = /\.(js|css|svg|png|woff2|map)$/

/**
 * Same-origin only: the app's scripts and styles, API calls to this server, no framing.
 * The chart is inline SVG markup (not a data: URL); the favicon is an empty data: URL.
 * Embedded in a platform's admin: framed by that admin only, and its one script allowed.
 */
const cspOf = (embedding: DashboardEmbedding | undefined) =>
  [
    "default-src 'none'",
    embedding?.script ? `script-src 'self' ${embedding.script.src}` : "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${embedding ? embedding.frameAncestors.join(' ') : "'none'"}`,
  ].join('; ')
export const DASHBOARD_CSP = cspOf(undefined)
/** The policy of the page a platform's admin embeds. */
export const embeddedDashboardCsp = (embedding: DashboardEmbedding) => cspOf(embedding)

/** The start of the page's `<head>` (and its charset declaration): the admin's script goes right after. */
const HEAD_START = /<head(?:\s[^>]*)?>(?:\s*<meta charset=[^>]*>)?/i

/**
 * index.html with the platform admin's script as the first script of `<head>`, after the meta
 * tags it reads (App Bridge refuses to run unless it is the page's first script).
 */
function withAdminScript(html: string, script: NonNullable<DashboardEmbedding['script']>): string {
  const head = HEAD_START.exec(html)
  if (head === null) throw new Error('The dashboard build has no <head>')
  const meta = Object.entries(script.meta).map(([name, content]) => `<meta name="${inert(name)}" content="${inert(content)}" />`)
  const at = head.index + head[0].length
  return `${html.slice(0, at)}${meta.join('')}<script src="${inert(script.src)}"></script>${html.slice(at)}`
}

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
  /** The configured platforms, whose admin may embed the page for a shop the request's query proves (`embedding`). */
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
  const embedders = opts.platforms.filter((p) => p.embedding !== undefined)

  /** How the page is embedded for this query: as the first platform that proves a shop of it says. */
  async function embeddingOf(rawQuery: string): Promise<DashboardEmbedding | undefined> {
    for (const platform of embedders) {
      const proven = await platform.embedding?.(rawQuery)
      if (proven !== undefined) return proven
    }
    return undefined
  }

  const servePage = async (request: FastifyRequest, reply: FastifyReply) => {
    const q = request.url.indexOf('?')
    const embedding = q !== -1 && embedders.length > 0 ? await embeddingOf(request.url.slice(q + 1)) : undefined
    securityHeaders(reply, embedding !== undefined)
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
    reply.header('content-security-policy', cspOf(embedding))
    if (embedding?.script === undefined) return reply.sendFile('index.html')
    // Made per request (a platform's admin opens the page once per visit): no validators, no precompressed copy.
    const html = await readFile(resolve(dist, 'index.html'), 'utf8')
    return reply.header('content-type', 'text/html; charset=utf-8').send(withAdminScript(html, embedding.script))
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
