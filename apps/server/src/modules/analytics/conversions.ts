/**
 * From wish to purchase (docs/api.md, "Conversions"): the events intake calls
 * `recordOrderAttribution` in its transaction for each customer order, after the customer's
 * items were marked bought. An order line is wishlist-influenced when the customer held the
 * product at the order's time, or had held it within the shop's attribution window before
 * it; signal-influenced when a back-in-stock, price-drop or low-stock signal of the product
 * came, within the window, while the customer held it; influenced through a notification
 * channel (Klaviyo, Flow) when a notification of the product to the customer was sent through
 * it within the window. The answer goes into rollups keyed by
 * day (and currency, product), so the conversions read costs what the overview's does: one
 * row per day of the period, never one per order. The days-to-purchase histogram is part of
 * the daily row (`purchase_lags`, packed: `packLags`), merged into it by the same upsert that
 * adds the day's counters (analytics.repo.ts), and added to the shop's whole-history
 * histogram (`analytics_purchase_lag_totals`), which `period=all` reads. Amounts are exact
 * minor units, stored in two parts (lib/money.ts, `splitAmount`) that the upserts add with a carry.
 */
import type { SignalName } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { DAY_MS } from '../../lib/time.js'
import { lineMinorUnits, splitAmount } from '../../lib/money.js'
import { analyticsRepo } from './analytics.repo.js'
import { dayOf } from './analytics.periods.js'
import { LagCounts, medianDaysOf, packLags } from './purchase-lags.js'
import { applyPendingFactsIn } from './facts.js'

/** Days from add to purchase are kept in tenths of a day (the median's precision). */
export const LAG_UNIT_MS = DAY_MS / 10

export const SIGNALS: readonly SignalName[] = ['back_in_stock', 'price_dropped', 'low_stock']

export interface OrderLine {
  productId: string
  quantity: number
  /** Unit price in millionths (lib/money.ts); null when the line has no price. */
  priceMicros: bigint | null
}

export interface AttributedOrder {
  customerId: string
  /** The order's time (epoch ms). */
  at: number
  currency: string | null
  windowDays: number
  lines: OrderLine[]
  /** The customer's items of the order's products as they were before the order (every list). */
  held: { productId: string; addedAt: number; purchasedAt: number | null }[]
}

/**
 * Records the product signals of an events request (whether or not a webhook took them), for
 * products some list holds; attribution looks them up by product and time.
 */
export async function recordSignals(
  trx: Db,
  shopId: string,
  signals: { productId: string; signal: SignalName }[],
  at: number,
): Promise<void> {
  const seen = new Set<string>()
  const rows = []
  for (const s of signals) {
    const key = `${s.productId}\u0000${s.signal}`
    if (seen.has(key)) continue
    seen.add(key)
    rows.push({ shop_id: shopId, product_id: s.productId, at, signal: s.signal })
  }
  await analyticsRepo.addSignals(trx, rows)
}

interface Span {
  /** When the hold began (the item's addedAt, or the analytics' first add of the hold). */
  since: number
  /** When it ended; null while held. */
  until: number | null
  /** Whether an earlier order already bought it (counted in `purchased` once). */
  bought: boolean
  /** A released pair: its row is marked bought. */
  released: boolean
}

/** Attributes one customer order; returns whether it was influenced. Runs in the intake's transaction. */
export async function recordOrderAttribution(trx: Db, shopId: string, order: AttributedOrder): Promise<boolean> {
  const { customerId, at } = order
  const windowStart = at - order.windowDays * DAY_MS
  const spans = new Map<string, Span>()
  for (const h of order.held) {
    if (h.addedAt > at) continue
    const s = spans.get(h.productId)
    const bought = h.purchasedAt !== null
    if (!s) spans.set(h.productId, { since: h.addedAt, until: null, bought, released: false })
    else {
      s.since = Math.min(s.since, h.addedAt)
      s.bought ||= bought
    }
  }
  const others = [...new Set(order.lines.map((l) => l.productId))].filter((p) => !spans.has(p))
  if (others.length > 0) {
    // Releases are kept by the facts applier: bring it up to date (removals just committed).
    await applyPendingFactsIn(trx, shopId)
    for (const r of await analyticsRepo.releases(trx, shopId, customerId, others, windowStart)) {
      const since = r.held_since === null ? Number(r.released_at) : Number(r.held_since)
      if (since > at) continue
      spans.set(r.product_id, { since, until: Number(r.released_at), bought: r.purchased === 1, released: true })
    }
  }
  const influenced = order.lines.filter((l) => spans.has(l.productId))
  if (influenced.length === 0) return false

  // Signals of the influenced products within the window, while the customer held them.
  const products = [...new Set(influenced.map((l) => l.productId))]
  const signalled = new Map<string, Set<SignalName>>()
  for (const r of await analyticsRepo.signals(trx, shopId, products, windowStart, at)) {
    const span = spans.get(r.product_id) as Span
    const t = Number(r.at)
    if (t < span.since || (span.until !== null && t > span.until)) continue
    let set = signalled.get(r.product_id)
    if (!set) signalled.set(r.product_id, (set = new Set()))
    set.add(r.signal)
  }

  // Per channel: the influenced products a notification of which was sent to the customer
  // through it within the window (whether or not they still held it then).
  const sentThrough = new Map<string, Set<'klaviyo' | 'flow'>>()
  for (const r of await analyticsRepo.sentChannels(trx, shopId, customerId, products, windowStart, at)) {
    let set = sentThrough.get(r.product_id)
    if (!set) sentThrough.set(r.product_id, (set = new Set()))
    set.add(r.channel)
  }

  const orderDay = dayOf(at)
  const daily = new Map<
    number,
    {
      orders_influenced: number
      lines_influenced: number
      purchased: number
      signal_back_in_stock: number
      signal_price_dropped: number
      signal_low_stock: number
      channel_klaviyo: number
      channel_flow: number
    }
  >()
  const dayRow = (day: number) => {
    let d = daily.get(day)
    if (!d)
      daily.set(
        day,
        (d = {
          orders_influenced: 0,
          lines_influenced: 0,
          purchased: 0,
          signal_back_in_stock: 0,
          signal_price_dropped: 0,
          signal_low_stock: 0,
          channel_klaviyo: 0,
          channel_flow: 0,
        }),
      )
    return d
  }
  const today = dayRow(orderDay)
  today.orders_influenced = 1
  today.lines_influenced = influenced.length
  // Per add day: lag (tenths of a day) → items.
  const lags = new Map<number, Map<number, number>>()
  const byProduct = new Map<string, { purchases: number; amount: bigint }>()
  let revenue: bigint | null = null
  let pricedLines = 0
  const releasedBought: string[] = []
  for (const line of influenced) {
    const span = spans.get(line.productId) as Span
    for (const signal of signalled.get(line.productId) ?? []) today[`signal_${signal}`]++
    for (const channel of sentThrough.get(line.productId) ?? []) today[`channel_${channel}`]++
    if (!span.bought) {
      // The item's first purchase: the add's day gains it, and its days to purchase are kept.
      span.bought = true
      const day = dayOf(span.since)
      dayRow(day).purchased++
      const lag = Math.max(0, Math.round((at - span.since) / LAG_UNIT_MS))
      let histogram = lags.get(day)
      if (!histogram) lags.set(day, (histogram = new Map()))
      histogram.set(lag, (histogram.get(lag) ?? 0) + 1)
      if (span.released) releasedBought.push(line.productId)
    }
    const currency = line.priceMicros === null || order.currency === null ? '' : order.currency
    const amount = currency === '' ? 0n : lineMinorUnits(line.priceMicros as bigint, line.quantity, currency)
    if (currency !== '') {
      revenue = (revenue ?? 0n) + amount
      pricedLines++
    }
    const key = `${line.productId}\u0000${currency}`
    const p = byProduct.get(key)
    if (p) {
      p.purchases++
      p.amount += amount
    } else byProduct.set(key, { purchases: 1, amount })
  }

  // Rows in day order; each add day's histogram rides along.
  await analyticsRepo.addOrderDays(
    trx,
    [...daily.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([day, d]) => {
        const histogram = lags.get(day)
        return { shop_id: shopId, day, ...d, purchase_lags: histogram ? packLags(histogram) : null }
      }),
  )
  // The same first purchases in the shop's whole-history histogram (`conversions?period=all`).
  const totals = new Map<number, number>()
  for (const histogram of lags.values()) for (const [lag, n] of histogram) totals.set(lag, (totals.get(lag) ?? 0) + n)
  await analyticsRepo.addLagTotals(trx, shopId, totals)
  if (revenue !== null && order.currency !== null)
    await analyticsRepo.addRevenue(trx, shopId, orderDay, order.currency, splitAmount(revenue), pricedLines)
  await analyticsRepo.addProductRevenue(
    trx,
    [...byProduct.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([key, p]) => {
        const [productId = '', currency = ''] = key.split('\u0000')
        return { shop_id: shopId, product_id: productId, currency, purchases: p.purchases, ...splitAmount(p.amount) }
      }),
  )
  await analyticsRepo.markReleasesBought(trx, shopId, customerId, releasedBought)
  return true
}

/** The median of a histogram of lags (tenths of a day), in days rounded half up to 1 decimal (medianDaysOf); null when empty. */
export function medianDays(histogram: { lag: number; count: number }[]): number | null {
  const lags = new LagCounts()
  for (const h of histogram) if (h.count > 0) lags.add(h.lag, h.count)
  return medianDaysOf(lags)
}
