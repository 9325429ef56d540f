import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Storefronts call the API from the merchant's own domain (the widget, headless
 * storefronts), so every origin may call it: the request's `Origin` is reflected.
 * Credentials travel in headers (bearer token, storefront key, guest id), never in cookies,
 * so no ambient credential is exposed to other origins and `Allow-Credentials` is never
 * sent. Preflights (OPTIONS with `Access-Control-Request-Method`) are answered 204 in the
 * onRequest hook, before the access guard runs; any other OPTIONS request is a 404.
 *
 * Hand-written instead of @fastify/cors: that plugin merges its options into a new object
 * and resolves the origin through a callback on every request, about 4% of the GET page's
 * CPU (bench profile); this fixed policy needs none of it. The plugin would also answer an
 * OPTIONS that is no preflight with its own 400 text (`strictPreflight`) or take it for one,
 * where the API answers the documented 404 envelope.
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
