/**
 * What exports may take (docs/api.md, "Privacy and export"): at most `perShop` exports of
 * one shop at once (beyond, 429 RATE_LIMITED with Retry-After), and at most `connections` of
 * the instance's database connections at once for every export's queries together (half the
 * pool), so exports can never starve the API's own requests.
 *
 * With Redis the shop's places are shared by every instance: a sorted set per shop holds one
 * lease per running export (scored by its expiry, renewed while the export runs), so a
 * crashed instance's places come back after `LEASE_MS`. While Redis does not answer, each
 * instance counts its own exports alone (as the rate limiter lets requests through then).
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import { AppError } from './errors.js'

/** Exports of one shop running at once. */
export const EXPORTS_PER_SHOP = 2
/** Seconds a refused export is asked to wait. */
export const EXPORT_RETRY_AFTER_S = 10

/** How long a running export's place is held in Redis without renewal (renewed every third of it). */
export const LEASE_MS = 60_000

// Drops expired leases, then takes a place if one is free: 1 taken, 0 refused.
const TAKE = `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`

export interface ExportGate {
  /** Takes one of the shop's export places (or throws 429); the function returned gives it back, once. */
  enter(shopId: string): Promise<() => void>
  /** Runs one query of an export within the instance's share of the connections (waits for a turn). */
  query<T>(run: () => Promise<T>): Promise<T>
  /** Exports running now, per shop (tests, metrics). */
  running(shopId: string): number
}

/** Shop places shared through Redis: true when taken, false when the shop has none free, undefined when Redis did not answer. */
function redisPlaces(redis: Redis, namespace: string) {
  const key = (shopId: string) => `${namespace}export:${shopId}`
  return {
    async take(shopId: string, lease: string, perShop: number): Promise<boolean | undefined> {
      const now = Date.now()
      try {
        return (await redis.eval(TAKE, 1, key(shopId), now, perShop, now + LEASE_MS, lease, LEASE_MS)) === 1
      } catch {
        return undefined
      }
    },
    renew: (shopId: string, lease: string) =>
      redis
        .zadd(key(shopId), 'XX', Date.now() + LEASE_MS, lease)
        .then(() => redis.pexpire(key(shopId), LEASE_MS))
        .catch(() => {}),
    release: (shopId: string, lease: string) => redis.zrem(key(shopId), lease).catch(() => {}),
  }
}

export function createExportGate(opts: {
  perShop?: number
  connections: number
  redis?: Redis | undefined
  namespace?: string
}): ExportGate {
  const perShop = opts.perShop ?? EXPORTS_PER_SHOP
  const shared = opts.redis ? redisPlaces(opts.redis, opts.namespace ?? 'wishlist:rl:') : undefined
  const connections = Math.max(1, opts.connections)
  const byShop = new Map<string, number>()
  let active = 0
  const waiting: (() => void)[] = []

  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else active--
  }

  return {
    async enter(shopId) {
      const refuse = () =>
        new AppError('RATE_LIMITED', `At most ${perShop} exports of a shop run at once; retry when one has finished`, undefined, {
          'retry-after': String(EXPORT_RETRY_AFTER_S),
        })
      // This instance's own count first (it holds with or without Redis), taken before any await.
      const now = byShop.get(shopId) ?? 0
      if (now >= perShop) throw refuse()
      byShop.set(shopId, now + 1)
      let done = false
      const leaveLocal = () => {
        const left = (byShop.get(shopId) ?? 1) - 1
        if (left === 0) byShop.delete(shopId)
        else byShop.set(shopId, left)
      }
      const lease = randomUUID()
      const taken = shared ? await shared.take(shopId, lease, perShop) : undefined
      if (taken === false) {
        leaveLocal()
        throw refuse()
      }
      const renewal = taken ? setInterval(() => void shared?.renew(shopId, lease), LEASE_MS / 3).unref() : undefined
      return () => {
        if (done) return
        done = true
        leaveLocal()
        if (renewal) {
          clearInterval(renewal)
          void shared?.release(shopId, lease)
        }
      }
    },
    async query(run) {
      // A turn is handed over directly from a finishing query to the next waiting one.
      if (active < connections) active++
      else await new Promise<void>((resolve) => waiting.push(resolve))
      try {
        return await run()
      } finally {
        release()
      }
    },
    running: (shopId) => byShop.get(shopId) ?? 0,
  }
}
