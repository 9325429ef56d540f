/**
 * The browsable API reference at /docs: Scalar, chosen by measurement (axe-core in Chromium:
 * the bundled Swagger UI had 4 critical and 3 serious violations, Scalar only low-contrast
 * greys, which REFERENCE_CSS darkens). Light mode only, no web fonts from a CDN.
 *
 * Loaded on the first request for it: Scalar's plugin holds its 4.9 MB browser bundle as a
 * string (and V8 keeps its module source), about 20 MB of heap that a service nobody reads
 * the reference of never pays (idle RSS 196 → 172–179 MB). Its routes answer from a small Fastify instance of their own,
 * built once; each of its answers (the page, the 4.9 MB script, the document as JSON and
 * YAML, the redirect of `/docs`) is taken from it once, on its first request, and kept with
 * its gzip and brotli forms and ETags (lib/prepared-answer.ts): every later request is
 * written from those Buffers, streamed with backpressure, and a reader that takes nothing
 * for REQUEST_TIMEOUT_MS is disconnected.
 *
 * Registered after the rate limiter: every /docs request counts in the `docs` bucket of its
 * client address (plugins/rate-limit.ts), apart from the storefront budget.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { type PreparedAnswer, prepareAnswer, sendPrepared } from '../lib/prepared-answer.js'

/**
 * Colours of the reference that reach 4.5:1 on its white and grey backgrounds (WCAG AA text):
 * Scalar's default greys (#707070, #8e8e8e) and method colours fall short.
 */
const REFERENCE_CSS = `.light-mode {
  --scalar-color-2: #555555; --scalar-color-3: #555555; --scalar-color-accent: #005ea8;
  --scalar-color-green: #05704b; --scalar-color-red: #b80005; --scalar-color-yellow: #7a5c00;
  --scalar-color-blue: #005a96; --scalar-color-orange: #a33a00; --scalar-color-purple: #5203d1;
  --scalar-color-query: #006266; --scalar-sidebar-search-color: #555555;
}`

/** The headers of the reference's answers that are passed on. */
const PASSED_HEADERS = ['content-type', 'content-disposition', 'location', 'access-control-allow-origin']

interface Reference {
  app: FastifyInstance
  /** The paths it answers (GET): nothing else is prepared, so what is kept stays bounded. */
  paths: ReadonlySet<string>
}

export const apiReferenceRoutes: FastifyPluginAsync<{ sendTimeoutMs: number }> = async (app, opts) => {
  const loadReference = async (): Promise<Reference> => {
    const [{ default: Fastify }, { default: scalarReference }] = await Promise.all([
      import('fastify'),
      import('@scalar/fastify-api-reference'),
    ])
    const ref = Fastify({ logger: false })
    const paths = new Set<string>()
    ref.addHook('onRoute', (route) => {
      if ([route.method].flat().includes('GET')) paths.add(route.url)
    })
    await ref.register(scalarReference, {
      routePrefix: '/docs',
      configuration: {
        content: () => app.swagger(),
        pageTitle: 'Wishlist service API reference',
        forceDarkModeState: 'light',
        hideDarkModeToggle: true,
        withDefaultFonts: false,
        // The reference only: no developer toolbar, no AI chat or MCP links to Scalar's services.
        showDeveloperTools: 'never',
        agent: { disabled: true },
        mcp: { disabled: true },
        customCss: REFERENCE_CSS,
      },
    })
    await ref.ready()
    return { app: ref, paths }
  }
  /** Forgotten when it fails, so that the next request tries again. */
  const once = <T>(make: () => Promise<T>, forget: () => void): Promise<T> => {
    const promise = make()
    promise.catch(forget)
    return promise
  }
  let reference: Promise<Reference> | undefined
  const prepared = new Map<string, Promise<PreparedAnswer>>()
  const prepare = async (ref: Reference, path: string): Promise<PreparedAnswer> => {
    const res = await ref.app.inject({ method: 'GET', url: path, headers: { host: 'localhost' } })
    const headers: Record<string, string> = {}
    for (const name of PASSED_HEADERS) {
      const value = res.headers[name]
      if (value !== undefined) headers[name] = String(value)
    }
    let body = res.rawPayload
    // Its page's <html> carries no language; screen readers need one (axe: html-has-lang).
    if (String(res.headers['content-type'] ?? '').startsWith('text/html'))
      body = Buffer.from(res.body.replace(/^<!doctype html>\s*<html>/i, '<!doctype html>\n<html lang="en">'))
    return prepareAnswer(res.statusCode, headers, body)
  }

  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    reference ??= once(loadReference, () => (reference = undefined))
    const ref = await reference
    const query = request.url.indexOf('?')
    const path = query === -1 ? request.url : request.url.slice(0, query)
    if (!ref.paths.has(path)) return reply.callNotFound()
    let ready = prepared.get(path)
    if (ready === undefined) {
      ready = once(
        () => prepare(ref, path),
        () => prepared.delete(path),
      )
      prepared.set(path, ready)
    }
    return sendPrepared(request, reply, await ready, opts.sendTimeoutMs)
  }
  const route = {
    config: { access: ['public' as const], rateBucket: 'docs' as const },
    schema: { hide: true },
    logLevel: 'silent' as const,
  }
  app.get('/docs', route, answer)
  app.get('/docs/*', route, answer)
}
