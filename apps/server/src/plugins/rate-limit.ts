/**
 * DECISIONS §12. Two buckets: bearer-token requests count per API key (`kid`), everything
 * else (storefront key, shared reads, the token exchange, reviews without a token) per
 * client IP. In-process by default; shared by every node through Redis when configured.
 */
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { AppError } from '../lib/errors.js'

export interface RateLimitOptions {
  storefrontPerMin: number
  adminPerMin: number
  redis?: Redis | undefined
  /** Redis key prefix; separate deployments (or test runs) sharing one Redis use their own. */
  namespace?: string
}

const keyOf = (request: FastifyRequest): string =>
  request.auth?.keyId !== undefined ? `kid:${request.auth.keyId}` : `ip:${request.ip}`

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: RateLimitOptions) => {
    await app.register(rateLimit, {
      global: true,
      hook: 'onRequest',
      timeWindow: 60_000,
      keyGenerator: keyOf,
      max: (_request, key) => (key.startsWith('kid:') ? opts.adminPerMin : opts.storefrontPerMin),
      ...(opts.redis ? { redis: opts.redis, nameSpace: opts.namespace ?? 'wishlist:rl:' } : {}),
      // A Redis outage must not take the API down with it: requests pass unlimited until it is back.
      skipOnError: true,
      errorResponseBuilder: (_request, context) =>
        new AppError('RATE_LIMITED', `Rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`),
    })
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
