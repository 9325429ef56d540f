import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Every origin may call the API (storefronts on the merchant's domain): `Origin` is
 * reflected. Credentials travel in headers, never cookies, so `Allow-Credentials` is never
 * sent. Preflights are answered 204 before the access guard; any other OPTIONS is a 404.
 * Hand-written instead of @fastify/cors, whose per-request option merging cost about 4% of
 * the GET page's CPU, and which answers a non-preflight OPTIONS with its own 400 text.
 */
const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE'
const ALLOW_HEADERS = 'authorization, content-type, x-storefront-key, x-guest-id'
const EXPOSE_HEADERS = 'x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, retry-after, x-request-id, location'
const MAX_AGE_SEC = '600'

export const corsPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request, reply, done) => {
      // The answer depends on Origin, so caches must key on it.
      reply.header('vary', 'Origin')
      const origin = request.headers.origin
      if (origin === undefined) return done()
      reply.header('access-control-allow-origin', origin)
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
        reply
          .header('access-control-allow-methods', ALLOW_METHODS)
          .header('access-control-allow-headers', ALLOW_HEADERS)
          .header('access-control-max-age', MAX_AGE_SEC)
          .header('content-length', '0')
          .code(204)
          .send()
        return
      }
      reply.header('access-control-expose-headers', EXPOSE_HEADERS)
      done()
    })
    // Routes every OPTIONS request here, so a preflight to any path reaches the hook above.
    app.options('/*', { config: { access: ['public'] }, schema: { hide: true } }, (_request, reply) => {
      reply.callNotFound()
    })
  },
  { name: 'cors' },
)
