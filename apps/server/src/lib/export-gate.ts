/**
 * What exports may take (docs/api.md, "Privacy and export"): at most `perShop` exports of
 * one shop at once on this instance (beyond, 429 RATE_LIMITED with Retry-After), and at most
 * `connections` of the instance's database connections at once for every export's
 * queries together (half the pool), so exports can never starve the API's own requests.
 */
import { AppError } from './errors.js'

/** Exports of one shop running at once. */
export const EXPORTS_PER_SHOP = 2
/** Seconds a refused export is asked to wait. */
export const EXPORT_RETRY_AFTER_S = 10

export interface ExportGate {
  /** Takes one of the shop's export places (or throws 429); the function returned gives it back, once. */
  enter(shopId: string): () => void
  /** Runs one query of an export within the instance's share of the connections (waits for a turn). */
  query<T>(run: () => Promise<T>): Promise<T>
  /** Exports running now, per shop (tests, metrics). */
  running(shopId: string): number
}

export function createExportGate(opts: { perShop?: number; connections: number }): ExportGate {
  const perShop = opts.perShop ?? EXPORTS_PER_SHOP
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
    enter(shopId) {
      const now = byShop.get(shopId) ?? 0
      if (now >= perShop) {
        throw new AppError('RATE_LIMITED', `At most ${perShop} exports of a shop run at once; retry when one has finished`, undefined, { 'retry-after': String(EXPORT_RETRY_AFTER_S) })
      }
      byShop.set(shopId, now + 1)
      let done = false
      return () => {
        if (done) return
        done = true
        const left = (byShop.get(shopId) ?? 1) - 1
        if (left === 0) byShop.delete(shopId)
        else byShop.set(shopId, left)
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
