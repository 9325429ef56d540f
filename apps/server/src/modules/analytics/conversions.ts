/**
 * From wish to purchase (docs/api.md, "Conversions"): the events intake calls
 * `recordOrderAttribution` in its transaction for each customer order, after the customer's
 * items were marked bought. An order line is wishlist-influenced when the customer held the
 * product at the order's time, or had held it within the shop's attribution window before
 * it; signal-influenced when a back-in-stock, price-drop or low-stock signal of the product
 * came, within the window, while the customer held it. The answer goes into rollups keyed by
 * day (and currency, product), so the conversions read costs what the overview's does: one
 * row per day of the period, never one per order. The days-to-purchase histogram is part of
 * the daily row (`purchase_lags`, packed: `packLags`), merged into it by the same upsert that
 * adds the day's counters. Amounts are exact minor units, stored in two parts
 * (lib/money.ts, `splitAmount`) that the upserts add with a carry.
 */
import { sql, type Transaction } from 'kysely'
import { backendOf } from '../../db/dialect.js'
import { rowsStatement } from '../../db/precompiled.js'
import type { Database, SignalName } from '../../db/schema.js'
import type { Backend } from '../../db/types.js'
import { DAY_MS } from '../../lib/time.js'
import { AMOUNT_HIGH_MAX, AMOUNT_LOW_BASE, lineMinorUnits, splitAmount } from '../../lib/money.js'
import { amountPart } from './analytics.repo.js'
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
 * `purchase_lags` of the existing row plus the proposed row's, lag by lag (purchase-lags.ts),
 * inside the upsert: the row lock the upsert takes (PostgreSQL) or the single writer (SQLite)
 * makes the merge as safe against concurrent orders as the `+` of the counters beside it.
 * SQLite reads the pairs as a JSON object (`35:2,150:1` → `{"35":2,"150":1}`).
 */
const asJson = (column: string) => sql`'{"' || replace(replace(${sql.raw(column)}, ':', '":'), ',', ',"') || '}'`
const mergeLags = {
  sqlite: sql<string | null>`case when excluded.purchase_lags is null then analytics_daily.purchase_lags
      when analytics_daily.purchase_lags is null then excluded.purchase_lags
      else (select group_concat(key || ':' || n, ',') from (select key, sum(value) as n
        from (select key, value from json_each(${asJson('analytics_daily.purchase_lags')}) union all select key, value from json_each(${asJson('excluded.purchase_lags')}))
        group by key order by cast(key as integer))) end`,
  postgres: sql<string | null>`case when excluded.purchase_lags is null then analytics_daily.purchase_lags
      when analytics_daily.purchase_lags is null then excluded.purchase_lags
      else (select string_agg(lag || ':' || n, ',' order by lag) from (select split_part(e, ':', 1)::integer as lag, sum(split_part(e, ':', 2)::integer) as n
        from (select unnest(string_to_array(analytics_daily.purchase_lags, ',')) as e union all select unnest(string_to_array(excluded.purchase_lags, ','))) l
        group by 1) m) end`,
}
const dailyOrdersStatement = (merge: (typeof mergeLags)['sqlite']) =>
  rowsStatement(
    'analytics_daily',
    ['shop_id', 'day', 'adds', 'removes', 'shoppers', 'last_seen', 'converted', 'orders_influenced', 'lines_influenced', 'purchased', 'signal_back_in_stock', 'signal_price_dropped', 'signal_low_stock', 'purchase_lags'],
    (q) =>
      q.onConflict((oc) =>
        oc.columns(['shop_id', 'day']).doUpdateSet((eb) => ({
          orders_influenced: eb('analytics_daily.orders_influenced', '+', eb.ref('excluded.orders_influenced')),
          lines_influenced: eb('analytics_daily.lines_influenced', '+', eb.ref('excluded.lines_influenced')),
          purchased: eb('analytics_daily.purchased', '+', eb.ref('excluded.purchased')),
          signal_back_in_stock: eb('analytics_daily.signal_back_in_stock', '+', eb.ref('excluded.signal_back_in_stock')),
          signal_price_dropped: eb('analytics_daily.signal_price_dropped', '+', eb.ref('excluded.signal_price_dropped')),
          signal_low_stock: eb('analytics_daily.signal_low_stock', '+', eb.ref('excluded.signal_low_stock')),
          purchase_lags: merge,
        })),
      ),
  )
const upsertDailyOrders = { sqlite: dailyOrdersStatement(mergeLags.sqlite), postgres: dailyOrdersStatement(mergeLags.postgres) }
/** `amount` and `amount_high` of the existing row plus the proposed row's: exact, with the carry, `amount_high` at most AMOUNT_HIGH_MAX. */
function addAmounts(backend: Backend, table: string) {
  const base = sql.raw(String(AMOUNT_LOW_BASE))
  const low = sql`(${amountPart(backend, `${table}.amount`, 'low')} + excluded.amount)`
  const high = sql`${amountPart(backend, `${table}.amount_high`, 'high')} + excluded.amount_high + ${low} / ${base}`
  const max = sql.raw(String(AMOUNT_HIGH_MAX))
  return { amount: sql<number>`${low} % ${base}`, amount_high: backend === 'postgres' ? sql<number>`least(${high}, ${max})` : sql<number>`min(${high}, ${max})` }
}

const revenueStatement = (backend: Backend) =>
  rowsStatement('analytics_revenue_daily', ['shop_id', 'day', 'currency', 'amount', 'amount_high'], (q) =>
    q.onConflict((oc) => oc.columns(['shop_id', 'day', 'currency']).doUpdateSet(addAmounts(backend, 'analytics_revenue_daily'))),
  )
const upsertRevenue = { sqlite: revenueStatement('sqlite'), postgres: revenueStatement('postgres') }
const productRevenueStatement = (backend: Backend) =>
  rowsStatement('analytics_product_revenue', ['shop_id', 'product_id', 'currency', 'purchases', 'amount', 'amount_high'], (q) =>
    q.onConflict((oc) =>
      oc.columns(['shop_id', 'product_id', 'currency']).doUpdateSet((eb) => ({
        purchases: eb('analytics_product_revenue.purchases', '+', eb.ref('excluded.purchases')),
        ...addAmounts(backend, 'analytics_product_revenue'),
      })),
    ),
  )
const upsertProductRevenue = { sqlite: productRevenueStatement('sqlite'), postgres: productRevenueStatement('postgres') }
const upsertCurrencies = rowsStatement('analytics_currencies', ['shop_id', 'currency', 'lines'], (q) =>
  q.onConflict((oc) => oc.columns(['shop_id', 'currency']).doUpdateSet((eb) => ({ lines: eb('analytics_currencies.lines', '+', eb.ref('excluded.lines')) }))),
)

/**
 * Records the product signals of an events request (whether or not a webhook took them), for
 * products some list holds; attribution looks them up by product and time.
 */
export async function recordSignals(trx: Transaction<Database>, shopId: string, signals: { productId: string; signal: SignalName }[], at: number): Promise<void> {
  const seen = new Set<string>()
  const rows = []
  for (const s of signals) {
    const key = `${s.productId}\u0000${s.signal}`
    if (seen.has(key)) continue
    seen.add(key)
    rows.push({ shop_id: shopId, product_id: s.productId, at, signal: s.signal })
  }
  if (rows.length === 0) return
  await trx.insertInto('analytics_signals').values(rows).onConflict((oc) => oc.doNothing()).execute()
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
export async function recordOrderAttribution(trx: Transaction<Database>, shopId: string, order: AttributedOrder): Promise<boolean> {
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
    const released = await trx
      .selectFrom('analytics_releases')
      .select(['product_id', 'held_since', 'released_at', 'purchased'])
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', 'customer')
      .where('owner_id', '=', customerId)
      .where('product_id', 'in', others)
      .where('released_at', '>=', windowStart)
      .execute()
    for (const r of released) {
      const since = r.held_since === null ? Number(r.released_at) : Number(r.held_since)
      if (since > at) continue
      spans.set(r.product_id, { since, until: Number(r.released_at), bought: r.purchased === 1, released: true })
    }
  }
  const influenced = order.lines.filter((l) => spans.has(l.productId))
  if (influenced.length === 0) return false

  // Signals of the influenced products within the window, while the customer held them.
  const products = [...new Set(influenced.map((l) => l.productId))]
  const signalRows = await trx
    .selectFrom('analytics_signals')
    .select(['product_id', 'at', 'signal'])
    .where('shop_id', '=', shopId)
    .where('product_id', 'in', products)
    .where('at', '>=', windowStart)
    .where('at', '<=', at)
    .execute()
  const signalled = new Map<string, Set<SignalName>>()
  for (const r of signalRows) {
    const span = spans.get(r.product_id) as Span
    const t = Number(r.at)
    if (t < span.since || (span.until !== null && t > span.until)) continue
    let set = signalled.get(r.product_id)
    if (!set) signalled.set(r.product_id, (set = new Set()))
    set.add(r.signal)
  }

  const orderDay = dayOf(at)
  const daily = new Map<number, { orders_influenced: number; lines_influenced: number; purchased: number; signal_back_in_stock: number; signal_price_dropped: number; signal_low_stock: number }>()
  const dayRow = (day: number) => {
    let d = daily.get(day)
    if (!d) daily.set(day, (d = { orders_influenced: 0, lines_influenced: 0, purchased: 0, signal_back_in_stock: 0, signal_price_dropped: 0, signal_low_stock: 0 }))
    return d
  }
  const today = dayRow(orderDay)
  today.orders_influenced = 1
  today.lines_influenced = influenced.length
  /** Per add day: lag (tenths of a day) → items. */
  const lags = new Map<number, Map<number, number>>()
  const byProduct = new Map<string, { purchases: number; amount: bigint }>()
  let revenue: bigint | null = null
  let pricedLines = 0
  const releasedBought: string[] = []
  for (const line of influenced) {
    const span = spans.get(line.productId) as Span
    for (const signal of signalled.get(line.productId) ?? []) today[`signal_${signal}`]++
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

  // Rows in day order (PostgreSQL locks them in that order); each add day's histogram rides along.
  await upsertDailyOrders[backendOf(trx)](
    trx,
    [...daily.entries()].sort((a, b) => a[0] - b[0]).map(([day, d]) => {
      const histogram = lags.get(day)
      return { shop_id: shopId, day, adds: 0, removes: 0, shoppers: 0, last_seen: 0, converted: 0, ...d, purchase_lags: histogram ? packLags(histogram) : null }
    }),
  )
  if (revenue !== null && order.currency !== null) {
    await upsertRevenue[backendOf(trx)](trx, [{ shop_id: shopId, day: orderDay, currency: order.currency, ...splitAmount(revenue) }])
    await upsertCurrencies(trx, [{ shop_id: shopId, currency: order.currency, lines: pricedLines }])
  }
  await upsertProductRevenue[backendOf(trx)](
    trx,
    [...byProduct.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([key, p]) => {
        const [productId = '', currency = ''] = key.split('\u0000')
        return { shop_id: shopId, product_id: productId, currency, purchases: p.purchases, ...splitAmount(p.amount) }
      }),
  )
  if (releasedBought.length > 0) {
    await trx
      .updateTable('analytics_releases')
      .set({ purchased: 1 })
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', 'customer')
      .where('owner_id', '=', customerId)
      .where('product_id', 'in', releasedBought)
      .execute()
  }
  return true
}

/** The median of a histogram of lags (tenths of a day), in days rounded half up to 1 decimal (medianDaysOf); null when empty. */
export function medianDays(histogram: { lag: number; count: number }[]): number | null {
  const lags = new LagCounts()
  for (const h of histogram) if (h.count > 0) lags.add(h.lag, h.count)
  return medianDaysOf(lags)
}
