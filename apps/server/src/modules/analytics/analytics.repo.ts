/**
 * Kysely queries of the analytics read models: the reads of analytics.service.ts, which touch
 * at most one rollup row per day of the period (or `limit` rows of the holder index), and the
 * attribution of orders (conversions.ts), inside the events intake's transaction. Every
 * query filters by shop. What the facts applier writes is in facts.repo.ts.
 */
import { type Insertable, type RawBuilder, sql } from 'kysely'
import { backendOf, greatest, integerPairs, joinedText, least } from '../../db/dialect.js'
import { precompiled, rowsStatement } from '../../db/precompiled.js'
import type { Database, SignalName } from '../../db/schema.js'
import type { Backend, Db } from '../../db/types.js'
import { AMOUNT_HIGH_MAX, AMOUNT_LOW_BASE, joinAmount } from '../../lib/money.js'
import { LagCounts, unpackLagsInto } from './purchase-lags.js'

/**
 * A stored part of a sum (`amount` below 10^12, `amount_high` up to AMOUNT_HIGH_MAX) as an
 * integer within its range: a row an older version stored out of range (a float on SQLite)
 * reads as the nearest bound instead of failing the read or overflowing the addition.
 */
function amountPart(backend: Backend, column: string, part: 'low' | 'high'): RawBuilder<number> {
  const max = sql.raw(String(part === 'low' ? AMOUNT_LOW_BASE - 1n : AMOUNT_HIGH_MAX))
  return sql<number>`cast(${least(backend, greatest(backend, sql.ref(column), sql.lit(0)), max)} as bigint)`
}

/** The named parameters of the period reads below: the shop and the period's first day. */
interface PeriodParams {
  shopId: string
  fromDay: number
}

/** The overview's one row: the period's counters summed by the database, compiled once. */
const overviewRow = precompiled((db, p: PeriodParams) =>
  db
    .selectFrom('analytics_daily')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('adds'), sql<number>`0`).as('adds'),
      eb.fn.coalesce(eb.fn.sum<number>('removes'), sql<number>`0`).as('removes'),
      eb.fn.coalesce(eb.fn.sum<number>('last_seen'), sql<number>`0`).as('last_seen'),
      eb.fn.coalesce(eb.fn.sum<number>('converted'), sql<number>`0`).as('converted'),
    ])
    .where('shop_id', '=', p.shopId)
    .where('day', '>=', p.fromDay),
)

/**
 * The conversions answer's one row: the period's daily counters summed, its days' histograms
 * concatenated (`;` between days, purchase-lags.ts) and its revenue per currency
 * (`EUR:12:34,USD:0:99`: the sums of the two stored parts, `amount_high` and `amount`, of
 * minor units, lib/money.ts; each part is below 10^14 per row, so SQLite's 64-bit sum of
 * them cannot overflow within 90,000 days, and PostgreSQL's sum of bigint is numeric;
 * joined exactly here as BigInt). The database does the adding and joining, as for the
 * overview's sums: the service receives one row, not one per day, and parses one string
 * (docs/performance.md, "Conversions at 1M events").
 */
function conversionsQuery(db: Db, p: PeriodParams, lags: 'days' | 'totals') {
  const backend = backendOf(db)
  const revenue = db
    .selectFrom('analytics_revenue_daily')
    .select((eb) => [
      'currency',
      eb.fn.sum<string>(amountPart(backend, 'amount_high', 'high')).as('high'),
      eb.fn.sum<string>(amountPart(backend, 'amount', 'low')).as('low'),
    ])
    .where('shop_id', '=', p.shopId)
    .where('day', '>=', p.fromDay)
    .groupBy('currency')
    .as('r')
  const total = (
    column:
      | 'adds'
      | 'purchased'
      | 'orders_influenced'
      | 'lines_influenced'
      | 'signal_back_in_stock'
      | 'signal_price_dropped'
      | 'signal_low_stock'
      | 'channel_klaviyo'
      | 'channel_flow',
  ) => sql<string | number | null>`sum(${sql.ref(column)})`
  return db
    .selectFrom('analytics_daily')
    .select((eb) => [
      total('adds').as('adds'),
      total('purchased').as('purchased'),
      total('orders_influenced').as('orders'),
      total('lines_influenced').as('lines'),
      total('signal_back_in_stock').as('back_in_stock'),
      total('signal_price_dropped').as('price_dropped'),
      total('signal_low_stock').as('low_stock'),
      total('channel_klaviyo').as('channel_klaviyo'),
      total('channel_flow').as('channel_flow'),
      lags === 'days'
        ? joinedText(backend, sql.ref('purchase_lags'), ';').as('lags')
        : eb
            .selectFrom('analytics_purchase_lag_totals')
            .select(joinedText(backend, sql`cast(lag as text) || ':' || cast(count as text)`, ',').as('v'))
            .where('shop_id', '=', p.shopId)
            .as('lags'),
      eb
        .selectFrom(revenue)
        .select(joinedText(backend, sql`r.currency || ':' || cast(r.high as text) || ':' || cast(r.low as text)`, ',').as('v'))
        .as('revenue'),
    ])
    .where('shop_id', '=', p.shopId)
    .where('day', '>=', p.fromDay)
}
const conversionsRow = precompiled((db, p: PeriodParams) => conversionsQuery(db, p, 'days'))
/**
 * The whole history's row: the same sums (every day's row is from the shop's first day on),
 * and the histogram the shop keeps over all its days (`analytics_purchase_lag_totals`, one
 * row per distinct lag) instead of every day's pairs, whose number grows with the orders.
 */
const conversionsAllRow = precompiled((db, p: PeriodParams) => conversionsQuery(db, p, 'totals'))

/** A statement whose SQL differs by backend, made for each (a rowsStatement's tail is built without an executor). */
const perBackend = <T>(make: (backend: Backend) => T): Record<Backend, T> => ({ sqlite: make('sqlite'), postgres: make('postgres') })

/**
 * `purchase_lags` of the existing row plus the proposed row's, lag by lag (purchase-lags.ts),
 * inside the upsert: the row lock the upsert takes (PostgreSQL) or the single writer (SQLite)
 * makes the merge as safe against concurrent orders as the `+` of the counters beside it.
 */
function mergeLags(backend: Backend) {
  const pairs = (column: string) => integerPairs(backend, sql.ref(column))
  return sql<string | null>`case when excluded.purchase_lags is null then analytics_daily.purchase_lags
      when analytics_daily.purchase_lags is null then excluded.purchase_lags
      else (select ${joinedText(backend, sql`k || ':' || n`, ',', sql`k`)} from (select k, sum(n) as n
        from (${pairs('analytics_daily.purchase_lags')} union all ${pairs('excluded.purchase_lags')}) l group by k) m) end`
}

const upsertDailyOrders = perBackend((backend) =>
  rowsStatement(
    'analytics_daily',
    [
      'shop_id',
      'day',
      'adds',
      'removes',
      'shoppers',
      'last_seen',
      'converted',
      'orders_influenced',
      'lines_influenced',
      'purchased',
      'signal_back_in_stock',
      'signal_price_dropped',
      'signal_low_stock',
      'channel_klaviyo',
      'channel_flow',
      'purchase_lags',
    ],
    (q) =>
      q.onConflict((oc) =>
        oc.columns(['shop_id', 'day']).doUpdateSet((eb) => ({
          orders_influenced: eb('analytics_daily.orders_influenced', '+', eb.ref('excluded.orders_influenced')),
          lines_influenced: eb('analytics_daily.lines_influenced', '+', eb.ref('excluded.lines_influenced')),
          purchased: eb('analytics_daily.purchased', '+', eb.ref('excluded.purchased')),
          signal_back_in_stock: eb('analytics_daily.signal_back_in_stock', '+', eb.ref('excluded.signal_back_in_stock')),
          signal_price_dropped: eb('analytics_daily.signal_price_dropped', '+', eb.ref('excluded.signal_price_dropped')),
          signal_low_stock: eb('analytics_daily.signal_low_stock', '+', eb.ref('excluded.signal_low_stock')),
          channel_klaviyo: eb('analytics_daily.channel_klaviyo', '+', eb.ref('excluded.channel_klaviyo')),
          channel_flow: eb('analytics_daily.channel_flow', '+', eb.ref('excluded.channel_flow')),
          purchase_lags: mergeLags(backend),
        })),
      ),
  ),
)

/** `amount` and `amount_high` of the existing row plus the proposed row's: exact, with the carry, `amount_high` at most AMOUNT_HIGH_MAX. */
function addAmounts(backend: Backend, table: string) {
  const base = sql.raw(String(AMOUNT_LOW_BASE))
  const low = sql`(${amountPart(backend, `${table}.amount`, 'low')} + excluded.amount)`
  const high = sql`${amountPart(backend, `${table}.amount_high`, 'high')} + excluded.amount_high + ${low} / ${base}`
  return { amount: sql<number>`${low} % ${base}`, amount_high: least(backend, high, sql.raw(String(AMOUNT_HIGH_MAX))) }
}

const upsertRevenue = perBackend((backend) =>
  rowsStatement('analytics_revenue_daily', ['shop_id', 'day', 'currency', 'amount', 'amount_high'], (q) =>
    q.onConflict((oc) => oc.columns(['shop_id', 'day', 'currency']).doUpdateSet(addAmounts(backend, 'analytics_revenue_daily'))),
  ),
)
const upsertProductRevenue = perBackend((backend) =>
  rowsStatement('analytics_product_revenue', ['shop_id', 'product_id', 'currency', 'purchases', 'amount', 'amount_high'], (q) =>
    q.onConflict((oc) =>
      oc.columns(['shop_id', 'product_id', 'currency']).doUpdateSet((eb) => ({
        purchases: eb('analytics_product_revenue.purchases', '+', eb.ref('excluded.purchases')),
        ...addAmounts(backend, 'analytics_product_revenue'),
      })),
    ),
  ),
)
const upsertLagTotals = rowsStatement('analytics_purchase_lag_totals', ['shop_id', 'lag', 'count'], (q) =>
  q.onConflict((oc) =>
    oc
      .columns(['shop_id', 'lag'])
      .doUpdateSet((eb) => ({ count: eb('analytics_purchase_lag_totals.count', '+', eb.ref('excluded.count')) })),
  ),
)
const upsertCurrencies = rowsStatement('analytics_currencies', ['shop_id', 'currency', 'lines'], (q) =>
  q.onConflict((oc) =>
    oc.columns(['shop_id', 'currency']).doUpdateSet((eb) => ({ lines: eb('analytics_currencies.lines', '+', eb.ref('excluded.lines')) })),
  ),
)

/** What an order adds to one day's row: its counters, and the histogram of the day's adds it bought (`purchase_lags`, packed). */
export interface OrderDayRow {
  shop_id: string
  day: number
  orders_influenced: number
  lines_influenced: number
  purchased: number
  signal_back_in_stock: number
  signal_price_dropped: number
  signal_low_stock: number
  channel_klaviyo: number
  channel_flow: number
  purchase_lags: string | null
}

export const analyticsRepo = {
  // ---- reads (analytics.service.ts) ----

  /** Sums over the days from `fromDay` on (the overview). */
  async totalsSince(db: Db, shopId: string, fromDay: number) {
    const [row] = await overviewRow(db, { shopId, fromDay })
    return {
      adds: Number(row?.adds ?? 0),
      removes: Number(row?.removes ?? 0),
      lastSeen: Number(row?.last_seen ?? 0),
      converted: Number(row?.converted ?? 0),
    }
  },

  /** All-time adds − removes on the days before `day`. */
  async netBefore(db: Db, shopId: string, day: number): Promise<number> {
    const row = await db
      .selectFrom('analytics_daily')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>(eb('adds', '-', eb.ref('removes'))), sql<number>`0`).as('net'))
      .where('shop_id', '=', shopId)
      .where('day', '<', day)
      .executeTakeFirstOrThrow()
    return Number(row.net)
  },

  async firstDay(db: Db, shopId: string): Promise<number | null> {
    const row = await db
      .selectFrom('analytics_daily')
      .select((eb) => eb.fn.min<number>('day').as('first'))
      .where('shop_id', '=', shopId)
      .executeTakeFirst()
    return row?.first === null || row?.first === undefined ? null : Number(row.first)
  },

  async days(db: Db, shopId: string, fromDay: number, toDay: number) {
    return db
      .selectFrom('analytics_daily')
      .select(['day', 'adds', 'removes', 'shoppers', 'last_seen', 'converted', 'orders_influenced'])
      .where('shop_id', '=', shopId)
      .where('day', '>=', fromDay)
      .where('day', '<=', toDay)
      .orderBy('day')
      .execute()
  },

  async topProducts(db: Db, shopId: string, limit: number): Promise<{ productId: string; wishlistCount: number }[]> {
    const rows = await db
      .selectFrom('analytics_product_holders')
      .select(['product_id', 'holders'])
      .where('shop_id', '=', shopId)
      .where('holders', '>', 0)
      .orderBy('holders', 'desc')
      .orderBy('product_id', 'asc')
      .limit(limit)
      .execute()
    return rows.map((r) => ({ productId: r.product_id, wishlistCount: r.holders }))
  },

  /** The catalog's title and handle of the given products (those it knows). */
  async catalogNames(db: Db, shopId: string, productIds: string[]): Promise<Map<string, { title: string | null; handle: string | null }>> {
    if (productIds.length === 0) return new Map()
    const rows = await db
      .selectFrom('catalog_products')
      .select(['product_id', 'title', 'handle'])
      .where('shop_id', '=', shopId)
      .where('product_id', 'in', productIds)
      .execute()
    return new Map(rows.map((r) => [r.product_id, { title: r.title, handle: r.handle }]))
  },

  /**
   * The conversions figures summed over the days from `fromDay` on, the days-to-purchase
   * histogram of the items added on them, and the influenced revenue per currency: one
   * statement, one row (`conversionsRow`), the histograms merged lag by lag here. With
   * `wholeHistory` (`fromDay` is the shop's first day), the histogram is the shop's running
   * one (`conversionsAllRow`): as many pairs at a million events as at ten thousand.
   */
  async conversionTotals(db: Db, shopId: string, fromDay: number, today: number, wholeHistory = false) {
    const [r] = await (wholeHistory ? conversionsAllRow : conversionsRow)(db, { shopId, fromDay })
    // A lag is at most the days since its add day, in tenths: the period's span covers them all.
    const lags = new LagCounts((today - fromDay + 2) * 10)
    unpackLagsInto(lags, r?.lags ?? null)
    const revenue: { currency: string; amount: bigint }[] = []
    for (const pair of r?.revenue?.split(',') ?? []) {
      const [currency = '', high, low] = pair.split(':')
      revenue.push({ currency, amount: joinAmount(high, low) })
    }
    return {
      adds: Number(r?.adds ?? 0),
      purchased: Number(r?.purchased ?? 0),
      orders: Number(r?.orders ?? 0),
      lines: Number(r?.lines ?? 0),
      signals: {
        back_in_stock: Number(r?.back_in_stock ?? 0),
        price_dropped: Number(r?.price_dropped ?? 0),
        low_stock: Number(r?.low_stock ?? 0),
      },
      channels: { klaviyo: Number(r?.channel_klaviyo ?? 0), flow: Number(r?.channel_flow ?? 0) },
      lags,
      revenue: revenue.sort((x, y) => (x.currency < y.currency ? -1 : 1)),
    }
  },

  /** Influenced purchases (lines) and revenue per currency of these products. */
  async productRevenue(
    db: Db,
    shopId: string,
    productIds: string[],
  ): Promise<Map<string, { purchases: number; revenue: { currency: string; amount: bigint }[] }>> {
    const out = new Map<string, { purchases: number; revenue: { currency: string; amount: bigint }[] }>()
    if (productIds.length === 0) return out
    const backend = backendOf(db)
    const rows = await db
      .selectFrom('analytics_product_revenue')
      .select([
        'product_id',
        'currency',
        'purchases',
        amountPart(backend, 'amount_high', 'high').as('high'),
        amountPart(backend, 'amount', 'low').as('low'),
      ])
      .where('shop_id', '=', shopId)
      .where('product_id', 'in', productIds)
      .execute()
    for (const r of rows) {
      let p = out.get(r.product_id)
      if (!p) out.set(r.product_id, (p = { purchases: 0, revenue: [] }))
      p.purchases += Number(r.purchases)
      if (r.currency !== '') p.revenue.push({ currency: r.currency, amount: joinAmount(r.high, r.low) })
    }
    for (const p of out.values()) p.revenue.sort((a, b) => (a.currency < b.currency ? -1 : 1))
    return out
  },

  /** The currency of most influenced lines with a price (ties: alphabetical); null when none. */
  async mainCurrency(db: Db, shopId: string): Promise<string | null> {
    const row = await db
      .selectFrom('analytics_currencies')
      .select('currency')
      .where('shop_id', '=', shopId)
      .orderBy('lines', 'desc')
      .orderBy('currency', 'asc')
      .limit(1)
      .executeTakeFirst()
    return row?.currency ?? null
  },

  /** Products by influenced revenue in `currency`, highest first (ties by productId). */
  async topByRevenue(db: Db, shopId: string, currency: string, limit: number): Promise<string[]> {
    const rows = await db
      .selectFrom('analytics_product_revenue')
      .select('product_id')
      .where('shop_id', '=', shopId)
      .where('currency', '=', currency)
      .orderBy('amount_high', 'desc')
      .orderBy('amount', 'desc')
      .orderBy('product_id', 'asc')
      .limit(limit)
      .execute()
    return rows.map((r) => r.product_id)
  },

  async holdersOf(db: Db, shopId: string, productIds: string[]): Promise<Map<string, number>> {
    if (productIds.length === 0) return new Map()
    const rows = await db
      .selectFrom('analytics_product_holders')
      .select(['product_id', 'holders'])
      .where('shop_id', '=', shopId)
      .where('product_id', 'in', productIds)
      .execute()
    return new Map(rows.map((r) => [r.product_id, r.holders]))
  },

  async holders(db: Db, shopId: string, productId: string): Promise<number> {
    const row = await db
      .selectFrom('analytics_product_holders')
      .select('holders')
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
      .executeTakeFirst()
    return row?.holders ?? 0
  },

  // ---- the attribution of orders (conversions.ts) ----

  /** Records product signals (rows of their shop); a signal already recorded at that time is kept once. */
  async addSignals(db: Db, rows: Insertable<Database['analytics_signals']>[]): Promise<void> {
    if (rows.length === 0) return
    await db
      .insertInto('analytics_signals')
      .values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute()
  },

  /** The customer's releases of these products at or after `since` (attribution's look-back). */
  releases(db: Db, shopId: string, customerId: string, productIds: string[], since: number) {
    return db
      .selectFrom('analytics_releases')
      .select(['product_id', 'held_since', 'released_at', 'purchased'])
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', 'customer')
      .where('owner_id', '=', customerId)
      .where('product_id', 'in', productIds)
      .where('released_at', '>=', since)
      .execute()
  },

  /** The signals of these products from `from` to `to`. */
  signals(
    db: Db,
    shopId: string,
    productIds: string[],
    from: number,
    to: number,
  ): Promise<{ product_id: string; at: number; signal: SignalName }[]> {
    return db
      .selectFrom('analytics_signals')
      .select(['product_id', 'at', 'signal'])
      .where('shop_id', '=', shopId)
      .where('product_id', 'in', productIds)
      .where('at', '>=', from)
      .where('at', '<=', to)
      .execute()
  },

  /**
   * The channels through which a notification of these products was sent to the customer
   * from `from` to `to` (each product and channel once): the customer's notifications made
   * up to `to` through (shop_id, owner_type, owner_id, created_at), each joined to its sent
   * deliveries through (shop_id, notification_id).
   */
  sentChannels(
    db: Db,
    shopId: string,
    customerId: string,
    productIds: string[],
    from: number,
    to: number,
  ): Promise<{ product_id: string; channel: 'klaviyo' | 'flow' }[]> {
    return db
      .selectFrom('notifications as n')
      .innerJoin('notification_deliveries as d', (j) => j.onRef('d.shop_id', '=', 'n.shop_id').onRef('d.notification_id', '=', 'n.id'))
      .select(['n.product_id', 'd.channel'])
      .distinct()
      .where('n.shop_id', '=', shopId)
      .where('n.owner_type', '=', 'customer')
      .where('n.owner_id', '=', customerId)
      .where('n.created_at', '<=', to)
      .where('n.product_id', 'in', productIds)
      .where('d.state', '=', 'sent')
      .where('d.sent_at', '>=', from)
      .where('d.sent_at', '<=', to)
      .execute()
  },

  /**
   * Adds an order's counters to its days' rows, in day order (PostgreSQL locks them in that order); each day's histogram is merged lag by
   * lag.
   */
  async addOrderDays(db: Db, rows: OrderDayRow[]): Promise<void> {
    await upsertDailyOrders[backendOf(db)](
      db,
      rows.map((r) => ({ adds: 0, removes: 0, shoppers: 0, last_seen: 0, converted: 0, ...r })),
    )
  },

  /**
   * Adds an order's first purchases to the shop's whole-history histogram (lag in tenths of
   * a day → items), in lag order (PostgreSQL locks the rows in that order), after its days' rows.
   */
  async addLagTotals(db: Db, shopId: string, histogram: Map<number, number>): Promise<void> {
    const rows = [...histogram]
      .filter(([, count]) => count > 0)
      .sort((a, b) => a[0] - b[0])
      .map(([lag, count]) => ({ shop_id: shopId, lag, count }))
    await upsertLagTotals(db, rows)
  },

  /** Adds influenced revenue (minor units, split: lib/money.ts) and priced lines to the order day's currency rows. */
  async addRevenue(
    db: Db,
    shopId: string,
    day: number,
    currency: string,
    amount: { amount: number; amount_high: number },
    lines: number,
  ): Promise<void> {
    await upsertRevenue[backendOf(db)](db, [{ shop_id: shopId, day, currency, ...amount }])
    await upsertCurrencies(db, [{ shop_id: shopId, currency, lines }])
  },

  /** Adds influenced lines and revenue to the products' rows, in key order (product, currency). */
  async addProductRevenue(db: Db, rows: Insertable<Database['analytics_product_revenue']>[]): Promise<void> {
    await upsertProductRevenue[backendOf(db)](db, rows)
  },

  /** Marks the customer's releases of these products bought (a later order does not count them again). */
  async markReleasesBought(db: Db, shopId: string, customerId: string, productIds: string[]): Promise<void> {
    if (productIds.length === 0) return
    await db
      .updateTable('analytics_releases')
      .set({ purchased: 1 })
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', 'customer')
      .where('owner_id', '=', customerId)
      .where('product_id', 'in', productIds)
      .execute()
  },
}
