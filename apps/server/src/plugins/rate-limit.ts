/**
 * The rate limits of docs/api.md ("Credentials, limits and operations endpoints"), on
 * @fastify/rate-limit: a fixed one-minute window per bucket key, `X-RateLimit-Limit`,
 * `-Remaining`, `-Reset` on every counted answer and `429 RATE_LIMITED` with `Retry-After`.
 * Bearer calls count per API key (`kid`; a platform's session token, its shop's session key:
 * the `keyId` its authenticator gives), customer tokens per (`kid`, customer); everything
 * else per client address (lib/client-address.ts; the shopper's own behind a verified
 * proxy: `clientAddress`). Routes with `config.rateLimit: false` and unknown URLs are not
 * counted.
 *
 * In process by default (the library's LRU store); shared by every node through the
 * library's Redis store when Redis is configured. A Redis outage must not take the API down
 * with it (`skipOnError`): requests pass with the full budget in the headers until it is back.
 *
 * A new bucket (say, a proxy's own key and budget) is a branch in `bucketKey` and, if its
 * budget differs, in `budgetOf`. The API reference (`/docs`, plugins/api-reference.ts) has one:
 * routes with `config.rateBucket: 'docs'` count per client address in a bucket of their own
 * (DOCS_PER_MIN), so browsing the reference spends none of the storefront's budget.
 *
 * Above the buckets, a ceiling per shop over all its bearer-token requests (every API key and
 * every customer together: `shopPerMin`), so one merchant cannot multiply its budget by
 * minting keys or customer ids. Counted in the same store (Redis when configured), in a
 * hook of its own before the library's; its 429 carries `Retry-After`.
 */
import { createRequire } from 'node:module'
import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { clientAddressKey } from '../lib/client-address.js'
import { AppError } from '../lib/errors.js'
import { clientAddress } from './auth.js'

export interface RateLimitOptions {
  storefrontPerMin: number
  adminPerMin: number
  /** The ceiling over all bearer-token requests of one shop. */
  shopPerMin: number
  redis?: Redis | undefined
  /** Redis key prefix; separate deployments (or test runs) sharing one Redis use their own. */
  namespace?: string | undefined
}

type RedisStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string) => FastifyRateLimitStore
type LocalStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, cache: number) => FastifyRateLimitStore
const requireCjs = createRequire(import.meta.url)
const RedisStore = requireCjs('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor
const LocalStore = requireCjs('@fastify/rate-limit/store/LocalStore.js') as LocalStoreCtor
const WINDOW_MS = 60_000
/**
 * The `docs` bucket: requests per minute per client address to the API reference. A page
 * view is three requests (the page, its script, the document: the script revalidated with
 * its ETag after the first view), so 20 views a minute.
 */
export const DOCS_PER_MIN = 60

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A bucket of its own, per client address, instead of the caller's (`docs`: the API reference). */
    rateBucket?: 'docs'
  }
}

/** The bucket a request counts in: its client address, its API key, or (customer tokens) its key and customer. */
function bucketKey(request: FastifyRequest): string {
  if (request.routeConfig.rateBucket !== undefined) return `${request.routeConfig.rateBucket}:${clientAddressKey(clientAddress(request))}`
  const keyId = request.auth?.keyId
  if (keyId === undefined) return `ip:${clientAddressKey(clientAddress(request))}`
  const actor = request.auth.ctx?.actor
  return actor?.kind === 'customer' ? `kid:${keyId}:customer:${actor.customerId}` : `kid:${keyId}`
}

/**
 * A bucket's budget per minute, from its key: address buckets the storefront's, API-key buckets the admin's, the reference's DOCS_PER_MIN.
 */
const budgetOf = (key: string, opts: RateLimitOptions): number =>
  key.startsWith('ip:') ? opts.storefrontPerMin : key.startsWith('docs:') ? DOCS_PER_MIN : opts.adminPerMin

/**
 * The library's Redis store, plus one repair: a window whose key lost its expiry (someone
 * ran PERSIST) gets a new one rather than counting forever.
 */
function redisStore(redis: Redis, namespace: string) {
  return class implements FastifyRateLimitStore {
    readonly inner = new RedisStore(false, false, redis, namespace)
    incr(key: string, cb: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      this.inner.incr(
        key,
        (err, res) => {
          if (err !== null || res === undefined || res.ttl >= 0) return cb(err, res)
          redis.pexpire(namespace + key, timeWindow).then(() => cb(null, { current: res.current, ttl: timeWindow }), cb)
        },
        timeWindow,
        max,
      )
    }
    child(): FastifyRateLimitStore {
      return this
    }
  }
}

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: RateLimitOptions) => {
    const namespace = opts.namespace ?? 'wishlist:rl:'
    const shopStore: FastifyRateLimitStore = opts.redis ? new (redisStore(opts.redis, namespace))() : new LocalStore(false, false, 5_000)
    const shopCeiling = opts.shopPerMin
    // The shop's ceiling: bearer-token requests of counted routes (known URL, not `rateLimit: false`).
    app.addHook('onRequest', (request, reply, done) => {
      const shopId = request.auth?.keyId === undefined ? undefined : request.auth.ctx?.shop.id
      const config = request.routeConfig
      if (shopId === undefined || config?.url === undefined || config.rateLimit === false) return done()
      shopStore.incr(
        `shop:${shopId}`,
        (err, res) => {
          // As the buckets: a store outage lets requests through.
          if (err !== null || res === undefined || res.current <= shopCeiling) return done()
          const seconds = Math.max(1, Math.ceil(res.ttl / 1000))
          done(
            new AppError(
              'RATE_LIMITED',
              `The shop's ceiling of ${shopCeiling} requests per minute (all its keys and customers) is exceeded; retry in ${seconds} s`,
              undefined,
              { 'retry-after': String(seconds) },
            ),
          )
        },
        WINDOW_MS,
        shopCeiling,
      )
    })
    // Registered after auth, whose onRequest hook (app-wide, so it runs before this
    // plugin's route hooks) sets the API key of a bearer call.
    await app.register(rateLimit, {
      global: true,
      timeWindow: WINDOW_MS,
      skipOnError: true,
      ...(opts.redis ? { store: redisStore(opts.redis, namespace) } : { cache: 5_000 }),
      keyGenerator: bucketKey,
      // The library hands over the key it generated: the bucket is worked out once per request.
      max: (_request, key) => budgetOf(key, opts),
      errorResponseBuilder: (_request, { max, ttl }) =>
        new AppError('RATE_LIMITED', `Rate limit of ${max} requests per minute exceeded; retry in ${Math.ceil(ttl / 1000)} s`),
    })
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
