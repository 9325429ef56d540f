import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Storefronts call the API from the merchant's own domain (the widget, headless
 * storefronts), so every origin may call it. Credentials travel in headers (bearer token,
 * storefront key, guest id), never in cookies, so no ambient credential is exposed to
 * other origins and `credentials` stays off. Preflights are answered in the onRequest
 * hook, before the access guard runs.
 */
export const corsPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(cors, {
      origin: true,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'x-storefront-key', 'x-guest-id'],
      exposedHeaders: ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'x-request-id', 'location'],
      maxAge: 600,
    })
  },
  { name: 'cors' },
)
