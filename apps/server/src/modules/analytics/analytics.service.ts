/**
 * Admin analytics (docs/api.md, "Analytics"), answered from the rollups (facts.ts): each read first
 * applies the shop's pending facts, so it includes every committed write, then touches at
 * most one rollup row per day of the history (or `limit` index entries), never the event log.
 */
import type { Static } from 'typebox'
import { primaryReads, type Reads } from '../../db/replica.js'
import type { Db } from '../../db/types.js'
import { normalizePlatformId } from '../../lib/platform-ids.js'
import { DAY_MS, now as systemNow } from '../../lib/time.js'
import type { RequestContext } from '../auth/auth.types.js'
import { conversionRate, dayOf, formatDay, type Period, periodDays, windowStart } from './analytics.periods.js'
import { analyticsRepo } from './analytics.repo.js'
import type { DailyEntry as DailyEntrySchema } from './analytics.schemas.js'
import { applyPendingFacts } from './facts.js'
import { medianDaysOf } from './purchase-lags.js'
import { formatMinorUnits } from '../../lib/money.js'

const money = (rows: { currency: string; amount: bigint }[]) =>
  rows.map((r) => ({ currency: r.currency, amount: formatMinorUnits(r.amount, r.currency) }))

type DailyEntry = Static<typeof DailyEntrySchema>

type Ctx = Pick<RequestContext, 'shop'>

export type { Period }

/**
 * The first instant (ms) of a fixed period ending today (UTC): today and the N − 1 days before
 * it; null for `all` (everything). Other modules' reports over the analytics' periods use it.
 */
export function periodStartMs(period: Period, nowMs: number): number | null {
  const n = periodDays(period)
  return n === null ? null : (dayOf(nowMs) - (n - 1)) * DAY_MS
}

export function createAnalyticsService(deps: { db: Db; reads?: Reads; now?: () => number }) {
  const clock = deps.now ?? systemNow
  const reads = deps.reads ?? primaryReads(deps.db)

  /**
   * Applies the shop's pending facts (on the primary), then gives the Db to read from: the read
   * replica once it has replayed all of that, so the answer is as exact as the primary's, else
   * the primary.
   */
  async function applied(shopId: string): Promise<Db> {
    await applyPendingFacts(deps.db, shopId)
    return (await reads.caughtUp()).db
  }

  /** The window's first day, and the Db to read from (`applied`): overview, daily and conversions call it. */
  async function start(shopId: string, period: Period, today: number): Promise<{ from: number | null; db: Db }> {
    const db = await applied(shopId)
    return { from: windowStart(period, today, period === 'all' ? await analyticsRepo.firstDay(db, shopId) : null), db }
  }

  return {
    async overview(ctx: Ctx, period: Period) {
      const today = dayOf(clock())
      const { from, db } = await start(ctx.shop.id, period, today)
      if (from === null) return { totalWishlistedItems: 0, activeShoppers: 0, wishlistToCartRate: 0 }
      // No rollup day lies after today (recordFacts clamps to the clock), so "from `from` on"
      // is the window, and Σ last_seen over it counts each owner active in it exactly once.
      const t = await analyticsRepo.totalsSince(db, ctx.shop.id, from)
      return {
        totalWishlistedItems: t.adds - t.removes,
        activeShoppers: t.lastSeen,
        wishlistToCartRate: conversionRate(t.converted, t.adds),
      }
    },

    async daily(ctx: Ctx, period: Period): Promise<DailyEntry[]> {
      const today = dayOf(clock())
      const { from, db } = await start(ctx.shop.id, period, today)
      if (from === null) return []
      const [base, rows] = await Promise.all([
        analyticsRepo.netBefore(db, ctx.shop.id, from),
        analyticsRepo.days(db, ctx.shop.id, from, today),
      ])
      const byDay = new Map(rows.map((r) => [Number(r.day), r]))
      const out: DailyEntry[] = []
      let cumulative = base
      for (let day = from; day <= today; day++) {
        const r = byDay.get(day)
        const added = r?.adds ?? 0
        const removed = r?.removes ?? 0
        cumulative += added - removed
        const date = formatDay(day)
        out.push({
          date,
          period: date,
          items_added: added,
          items_removed: removed,
          unique_shoppers: r?.shoppers ?? 0,
          cumulative_total: cumulative,
          orders_influenced: r?.orders_influenced ?? 0,
        })
      }
      return out
    },

    /** By holders (default), or by influenced revenue in the shop's most frequent currency. */
    async topProducts(ctx: Ctx, limit: number, sort: 'wishlists' | 'revenue' = 'wishlists') {
      const shopId = ctx.shop.id
      const db = await applied(shopId)
      let ranked: { productId: string; wishlistCount: number }[]
      if (sort === 'revenue') {
        const currency = await analyticsRepo.mainCurrency(db, shopId)
        const ids = currency === null ? [] : await analyticsRepo.topByRevenue(db, shopId, currency, limit)
        const holders = await analyticsRepo.holdersOf(db, shopId, ids)
        ranked = ids.map((productId) => ({ productId, wishlistCount: Math.max(0, holders.get(productId) ?? 0) }))
      } else {
        ranked = await analyticsRepo.topProducts(db, shopId, limit)
      }
      const ids = ranked.map((r) => r.productId)
      const [sales, names] = await Promise.all([analyticsRepo.productRevenue(db, shopId, ids), analyticsRepo.catalogNames(db, shopId, ids)])
      return ranked.map((r) => {
        const s = sales.get(r.productId)
        const name = names.get(r.productId)
        return {
          ...r,
          purchases: s?.purchases ?? 0,
          revenue: money(s?.revenue ?? []),
          title: name?.title ?? null,
          handle: name?.handle ?? null,
        }
      })
    },

    async productStats(ctx: Ctx, productId: string) {
      const id = normalizePlatformId(productId, 'Product')
      if (id === null) return { wishlistCount: 0, purchases: 0, revenue: [] }
      const db = await applied(ctx.shop.id)
      const s = (await analyticsRepo.productRevenue(db, ctx.shop.id, [id])).get(id)
      return {
        wishlistCount: await analyticsRepo.holders(db, ctx.shop.id, id),
        purchases: s?.purchases ?? 0,
        revenue: money(s?.revenue ?? []),
      }
    },

    /** Wish to purchase over the period (docs/api.md, "Conversions"): rollup rows only, one per day (`all`: its histogram is the shop's running one). */
    async conversions(ctx: Ctx, period: Period) {
      const today = dayOf(clock())
      const { from, db } = await start(ctx.shop.id, period, today)
      const empty = { back_in_stock: 0, price_dropped: 0, low_stock: 0 }
      if (from === null) {
        return {
          period,
          ordersInfluenced: 0,
          linesInfluenced: 0,
          revenueInfluenced: [],
          wishlistToPurchaseRate: 0,
          medianDaysToPurchase: null,
          signalsInfluenced: empty,
          channelsInfluenced: { klaviyo: 0, flow: 0 },
        }
      }
      const t = await analyticsRepo.conversionTotals(db, ctx.shop.id, from, today, period === 'all')
      return {
        period,
        ordersInfluenced: t.orders,
        linesInfluenced: t.lines,
        revenueInfluenced: money(t.revenue),
        wishlistToPurchaseRate: conversionRate(t.purchased, t.adds),
        medianDaysToPurchase: medianDaysOf(t.lags),
        signalsInfluenced: t.signals,
        channelsInfluenced: t.channels,
      }
    },
  }
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>
