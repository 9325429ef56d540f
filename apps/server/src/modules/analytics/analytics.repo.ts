/**
 * Kysely queries of the analytics read models. Every query filters by shop. The write side
 * (`rollupWriter`) runs inside the caller's transaction; the read side touches at most one
 * rollup row per day of the period (or `limit` rows of the holder index).
 */
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely'
import { backendOf, lockedForUpdate } from '../../db/dialect.js'
import { jsonRows, rowsJson } from '../../db/dialect.js'
import { precompiled, rowsStatement } from '../../db/precompiled.js'
import type { AnalyticsDailyTable, Database, OwnerType } from '../../db/schema.js'
import type { Backend } from '../../db/types.js'
import { AMOUNT_HIGH_MAX, AMOUNT_LOW_BASE, joinAmount } from '../../lib/money.js'
import { ownedBy } from '../../db/owner-scope.js'
import type { Owner } from '../auth/auth.types.js'
import { LagCounts, unpackLagsInto } from './purchase-lags.js'

export interface OwnerProduct {
  owner: Owner
  productId: string
}

/** The key of an (owner, product) pair in the sets below. */
export const pairKey = (ownerType: OwnerType, ownerId: string, productId: string): string => `${ownerType}:${ownerId}\u0000${productId}`

/** What a batch adds to one day's rollup row. */
export type DailyDelta = Pick<AnalyticsDailyTable, 'adds' | 'removes' | 'shoppers' | 'last_seen' | 'converted'>
export type DailyRow = Omit<AnalyticsDailyTable, 'shop_id'>

type Db = Kysely<Database>

// Multi-row statements of the rollups, each two templates compiled once (db/precompiled.ts):
// one VALUES row, and any number of rows as one JSON parameter.
const upsertDaily = rowsStatement('analytics_daily', ['shop_id', 'day', 'adds', 'removes', 'shoppers', 'last_seen', 'converted'], (q) =>
  q.onConflict((oc) =>
    oc.columns(['shop_id', 'day']).doUpdateSet((eb) => ({
      adds: eb('analytics_daily.adds', '+', eb.ref('excluded.adds')),
      removes: eb('analytics_daily.removes', '+', eb.ref('excluded.removes')),
      shoppers: eb('analytics_daily.shoppers', '+', eb.ref('excluded.shoppers')),
      last_seen: eb('analytics_daily.last_seen', '+', eb.ref('excluded.last_seen')),
      converted: eb('analytics_daily.converted', '+', eb.ref('excluded.converted')),
    })),
  ),
)
const upsertHolders = rowsStatement('analytics_product_holders', ['shop_id', 'product_id', 'holders'], (q) =>
  q.onConflict((oc) =>
    oc.columns(['shop_id', 'product_id']).doUpdateSet((eb) => ({
      holders: eb('analytics_product_holders.holders', '+', eb.ref('excluded.holders')),
    })),
  ),
)
const upsertPending = rowsStatement('analytics_pending_adds', ['shop_id', 'owner_type', 'owner_id', 'product_id', 'added_at', 'day', 'count'], (q) =>
  q.onConflict((oc) =>
    oc
      .columns(['shop_id', 'owner_type', 'owner_id', 'product_id', 'added_at'])
      .doUpdateSet((eb) => ({ count: eb('analytics_pending_adds.count', '+', eb.ref('excluded.count')) })),
  ),
)
// Insert-if-absent: the rows returned are the ones that were not there.
const insertHoldings = rowsStatement('analytics_holdings', ['shop_id', 'owner_type', 'owner_id', 'product_id', 'held_since'], (q) => q.onConflict((oc) => oc.doNothing()).returning('product_id'))
// The last release of each pair (migration 0016): a later release replaces an earlier one.
const upsertReleases = rowsStatement('analytics_releases', ['shop_id', 'owner_type', 'owner_id', 'product_id', 'held_since', 'released_at', 'purchased'], (q) =>
  q.onConflict((oc) =>
    oc.columns(['shop_id', 'owner_type', 'owner_id', 'product_id']).doUpdateSet((eb) => ({
      held_since: eb.ref('excluded.held_since'),
      released_at: eb.ref('excluded.released_at'),
      purchased: eb.ref('excluded.purchased'),
    })),
  ),
)
const insertSeenDays = rowsStatement('analytics_shopper_days', ['shop_id', 'day', 'owner_type', 'owner_id'], (q) =>
  q.onConflict((oc) => oc.doNothing()).returning(['day', 'owner_type', 'owner_id']),
)

const shopperRow = (db: Db, shopId: string, ownerType: OwnerType, ownerId: string) =>
  db.selectFrom('analytics_shoppers').where(ownedBy(shopId, { type: ownerType, id: ownerId }))
const ownerItems = (db: Db, shopId: string, ownerType: OwnerType, ownerId: string) =>
  db.selectFrom('wishlist_items').where(ownedBy(shopId, { type: ownerType, id: ownerId }))

/**
 * The statements of a single wishlist change, compiled once (db/precompiled.ts): every add
 * and remove runs most of them, and building Kysely's query tree each time cost more CPU
 * than SQLite's work (bench profile of add+remove). Multi-row variants stay dynamic.
 */
const statements = {
  insertShopper: precompiled(4, (db, shop_id: string, owner_type: OwnerType, owner_id: string, last_day: number) =>
    db.insertInto('analytics_shoppers').values({ shop_id, owner_type, owner_id, last_day }).onConflict((oc) => oc.doNothing()).returning('last_day'),
  ),
  lastDay: precompiled(3, (db, shopId: string, ownerType: OwnerType, ownerId: string) => {
    const q = shopperRow(db, shopId, ownerType, ownerId).select('last_day')
    return lockedForUpdate(q, backendOf(db))
  }),
  setLastDay: precompiled(4, (db, shopId: string, ownerType: OwnerType, ownerId: string, day: number) =>
    db.updateTable('analytics_shoppers').set({ last_day: day }).where(ownedBy(shopId, { type: ownerType, id: ownerId })),
  ),
  convertPending: precompiled(5, (db, shopId: string, ownerType: OwnerType, ownerId: string, productId: string, at: number) =>
    db
      .deleteFrom('analytics_pending_adds')
      .where(ownedBy(shopId, { type: ownerType, id: ownerId }))
      .where('product_id', '=', productId)
      .where('added_at', '<=', at)
      .returning(['day', 'count']),
  ),
}

/** An add waiting for a cart add of the same product by the same owner. */
export interface PendingAdd {
  owner: Owner
  productId: string
  addedAt: number
  day: number
}

const byKey = <T>(items: T[], key: (t: T) => string): Map<string, T[]> => {
  const out = new Map<string, T[]>()
  for (const t of items) {
    const k = key(t)
    const list = out.get(k)
    if (list) list.push(t)
    else out.set(k, [t])
  }
  return new Map([...out.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
}

/** (owner, product) pairs as the JSON rows of `jsonRows` (typed as `analytics_holdings` rows). */
const PAIR_COLUMNS = ['owner_type', 'owner_id', 'product_id'] as const
const pairsJson = (db: Db, pairs: OwnerProduct[]): string =>
  rowsJson(db, pairs.map((p) => ({ owner_type: p.owner.type, owner_id: p.owner.id, product_id: p.productId })), PAIR_COLUMNS)
const pairRows = (db: Db, json: string) => jsonRows(db, 'analytics_holdings', PAIR_COLUMNS, json)

/** Which of the pairs have a row in `table`: one statement, an index lookup each. */
const existingPairsIn = (table: 'wishlist_items' | 'analytics_holdings') =>
  precompiled(2, (db, shopId: string, json: string) =>
    db
      .selectFrom(pairRows(db, json))
      .select(['rows.owner_type', 'rows.owner_id', 'rows.product_id'])
      .where(
        sql<boolean>`exists (select 1 from ${sql.table(table)} t
          where t.shop_id = ${shopId} and t.owner_type = rows.owner_type and t.owner_id = rows.owner_id and t.product_id = rows.product_id)`,
      ),
  )
const listedPairs = existingPairsIn('wishlist_items')
const heldPairs = existingPairsIn('analytics_holdings')

/** Deletes the pairs' holdings; returns the product of each holding it deleted. */
const releasePairs = precompiled(2, (db, shopId: string, json: string) =>
  db
    .deleteFrom('analytics_holdings')
    .where('shop_id', '=', shopId)
    .where((eb) =>
      eb(eb.refTuple('owner_type', 'owner_id', 'product_id'), 'in', eb.selectFrom(pairRows(db, json)).select(['rows.owner_type', 'rows.owner_id', 'rows.product_id']).$asTuple('owner_type', 'owner_id', 'product_id')),
    )
    .returning(['owner_type', 'owner_id', 'product_id', 'held_since']),
)

async function pairKeys(rows: Promise<{ owner_type: OwnerType; owner_id: string; product_id: string }[]>): Promise<Set<string>> {
  return new Set((await rows).map((r) => pairKey(r.owner_type, r.owner_id, r.product_id)))
}

export function rollupWriter(trx: Transaction<Database>, shopId: string) {
  return {
    /** Adds each delta to its day's rollup row (creating it). Rows are locked in day order. */
    async addDaily(deltas: Map<number, DailyDelta>): Promise<void> {
      await upsertDaily(
        trx,
        [...deltas.entries()].sort((a, b) => a[0] - b[0]).map(([day, d]) => ({ shop_id: shopId, day, ...d })),
      )
    },

    /** Adds each delta to its product's holder count. Rows are locked in product order. */
    async addHolders(deltas: Map<string, number>): Promise<void> {
      await upsertHolders(
        trx,
        [...deltas.entries()]
          .filter(([, n]) => n !== 0)
          .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
          .map(([product_id, holders]) => ({ shop_id: shopId, product_id, holders })),
      )
    },

    /**
     * Moves the owner's last active day forward to `day`. Returns what moved:
     * `{from: null}` for a new owner, `{from: d}` when it moved from day d, or null.
     */
    async advanceLastDay(owner: Owner, day: number): Promise<{ from: number | null } | null> {
      if ((await statements.insertShopper(trx, shopId, owner.type, owner.id, day)).length > 0) return { from: null }
      const [current] = await statements.lastDay(trx, shopId, owner.type, owner.id)
      if (!current) throw new Error('analytics_shoppers row vanished inside its transaction')
      if (current.last_day >= day) return null
      await statements.setLastDay(trx, shopId, owner.type, owner.id, day)
      return { from: current.last_day }
    },

    /**
     * Records that the owners no longer hold their products, and when (`releasedAt` of each
     * pair's key, else `at`: attribution looks back to it); returns one product id per pair held before.
     */
    async releaseAll(pairs: OwnerProduct[], at: number, releasedAt?: Map<string, number>): Promise<string[]> {
      if (pairs.length === 0) return []
      const released = await releasePairs(trx, shopId, pairsJson(trx, pairs))
      const rows = released
        .map((r) => ({
          shop_id: shopId,
          owner_type: r.owner_type,
          owner_id: r.owner_id,
          product_id: r.product_id,
          held_since: r.held_since === null ? null : Number(r.held_since),
          released_at: releasedAt?.get(pairKey(r.owner_type, r.owner_id, r.product_id)) ?? at,
          purchased: 0,
        }))
        .sort((a, b) => (pairKey(a.owner_type, a.owner_id, a.product_id) < pairKey(b.owner_type, b.owner_id, b.product_id) ? -1 : 1))
      await upsertReleases(trx, rows)
      return released.map((r) => r.product_id)
    },

    /** Pairs held and released within one batch (never in the holdings set): their release, as `releaseAll` records it. */
    async recordReleases(spans: { owner: Owner; productId: string; since: number; until: number }[]): Promise<void> {
      if (spans.length === 0) return
      const rows = spans
        .map((p) => ({ shop_id: shopId, owner_type: p.owner.type, owner_id: p.owner.id, product_id: p.productId, held_since: p.since, released_at: p.until, purchased: 0 }))
        .sort((a, b) => (pairKey(a.owner_type, a.owner_id, a.product_id) < pairKey(b.owner_type, b.owner_id, b.product_id) ? -1 : 1))
      await upsertReleases(trx, rows)
    },

    /** The products the analytics holdings set has for this owner. */
    async heldProducts(owner: Owner): Promise<string[]> {
      const rows = await trx
        .selectFrom('analytics_holdings')
        .select('product_id')
        .where(ownedBy(shopId, owner))
        .execute()
      return rows.map((r) => r.product_id)
    },

    /** The distinct products the owner's lists hold now. */
    async listedProducts(owner: Owner): Promise<string[]> {
      const rows = await ownerItems(trx, shopId, owner.type, owner.id).select('product_id').distinct().execute()
      return rows.map((r) => r.product_id)
    },

    /** The pairs whose owner holds the product in some list now, as `pairKey`s. */
    listedPairs: (pairs: OwnerProduct[]) => pairKeys(listedPairs(trx, shopId, pairsJson(trx, pairs))),

    /** The pairs in the analytics holdings set, as `pairKey`s. */
    heldPairs: (pairs: OwnerProduct[]) => pairKeys(heldPairs(trx, shopId, pairsJson(trx, pairs))),

    /** Adds to the pending set, in key order; equal keys (same owner, product and time) add up. */
    async addPending(adds: PendingAdd[]): Promise<void> {
      const rows = [...byKey(adds, (a) => `${a.owner.type}\u0000${a.owner.id}\u0000${a.productId}\u0000${a.addedAt}`).values()].map((same) => {
        const a = same[0] as PendingAdd
        return { shop_id: shopId, owner_type: a.owner.type, owner_id: a.owner.id, product_id: a.productId, added_at: a.addedAt, day: a.day, count: same.length }
      })
      await upsertPending(trx, rows)
    },

    /** Records that each owner holds its product since `since` (else `at`); returns one product id per pair not held before. */
    async holdAll(pairs: { owner: Owner; productId: string }[], at: number, since?: Map<string, number>): Promise<string[]> {
      const rows = [...byKey(pairs, (p) => `${p.owner.type}\u0000${p.owner.id}\u0000${p.productId}`).values()].map((same) => {
        const p = same[0] as { owner: Owner; productId: string }
        const held_since = since?.get(pairKey(p.owner.type, p.owner.id, p.productId)) ?? at
        return { shop_id: shopId, owner_type: p.owner.type, owner_id: p.owner.id, product_id: p.productId, held_since }
      })
      return (await insertHoldings(trx, rows)).map((r) => r.product_id)
    },

    /** Adds each (owner, day) to the seen set, in key order; returns the keys (`keyOf`) that were not there yet. */
    async markAllSeen(seen: { owner: Owner; day: number }[], keyOf: (owner: Owner, day: number) => string): Promise<Set<string>> {
      const rows = seen
        .map((x) => ({ shop_id: shopId, day: x.day, owner_type: x.owner.type, owner_id: x.owner.id }))
        .sort((a, b) => a.day - b.day || (a.owner_type < b.owner_type ? -1 : a.owner_type > b.owner_type ? 1 : a.owner_id < b.owner_id ? -1 : a.owner_id > b.owner_id ? 1 : 0))
      const inserted = await insertSeenDays(trx, rows)
      return new Set(inserted.map((r) => keyOf({ type: r.owner_type, id: r.owner_id }, r.day)))
    },

    /** Takes the owner's adds of the product made at or before `at` off the pending set. */
    async convertPending(owner: Owner, productId: string, at: number): Promise<{ day: number; count: number }[]> {
      return statements.convertPending(trx, shopId, owner.type, owner.id, productId, at)
    },
  }
}

export type RollupWriter = ReturnType<typeof rollupWriter>

/**
 * A stored part of a sum (`amount` below 10^12, `amount_high` up to AMOUNT_HIGH_MAX) as an
 * integer within its range: a row an older version stored out of range (a float on SQLite)
 * reads as the nearest bound instead of failing the read or overflowing the addition.
 */
export function amountPart(backend: Backend, column: string, part: 'low' | 'high'): RawBuilder<number> {
  const max = sql.raw(String(part === 'low' ? AMOUNT_LOW_BASE - 1n : AMOUNT_HIGH_MAX))
  return backend === 'postgres' ? sql<number>`least(greatest(${sql.ref(column)}, 0), ${max})` : sql<number>`cast(min(max(${sql.ref(column)}, 0), ${max}) as integer)`
}

/** The overview's one row: the period's counters summed by the database, compiled once. */
const overviewRow = precompiled(2, (db: Db, shopId: string, fromDay: number) =>
  db
    .selectFrom('analytics_daily')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('adds'), sql<number>`0`).as('adds'),
      eb.fn.coalesce(eb.fn.sum<number>('removes'), sql<number>`0`).as('removes'),
      eb.fn.coalesce(eb.fn.sum<number>('last_seen'), sql<number>`0`).as('last_seen'),
      eb.fn.coalesce(eb.fn.sum<number>('converted'), sql<number>`0`).as('converted'),
    ])
    .where('shop_id', '=', shopId)
    .where('day', '>=', fromDay),
)

/**
 * The conversions answer's one row: the period's daily counters summed, its days' histograms
 * concatenated (`;` between days, purchase-lags.ts) and its revenue per currency
 * (`EUR:12:34,USD:0:99`: the sums of the two stored parts, `amount_high` and `amount`, of
 * minor units, lib/money.ts; each part is below 10^14 per row, so SQLite's 64-bit sum of
 * them cannot overflow within 90,000 days, and PostgreSQL's sum of bigint is numeric;
 * joined exactly here as BigInt). The database does the
 * adding and joining, as for the overview's sums: the service receives one row, not one per
 * day, and parses one string (docs/performance.md, "Conversions at 1M events").
 */
const conversionsRow = precompiled(2, (db: Db, shopId: string, fromDay: number) => {
  const pg = backendOf(db) === 'postgres'
  const revenue = db
    .selectFrom('analytics_revenue_daily')
    .select((eb) => ['currency', eb.fn.sum<string>(amountPart(backendOf(db), 'amount_high', 'high')).as('high'), eb.fn.sum<string>(amountPart(backendOf(db), 'amount', 'low')).as('low')])
    .where('shop_id', '=', shopId)
    .where('day', '>=', fromDay)
    .groupBy('currency')
    .as('r')
  const total = (column: 'adds' | 'purchased' | 'orders_influenced' | 'lines_influenced' | 'signal_back_in_stock' | 'signal_price_dropped' | 'signal_low_stock') => sql<string | number | null>`sum(${sql.ref(column)})`
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
      (pg ? sql<string | null>`string_agg(purchase_lags, ';')` : sql<string | null>`group_concat(purchase_lags, ';')`).as('lags'),
      eb
        .selectFrom(revenue)
        .select((pg ? sql<string | null>`string_agg(r.currency || ':' || r.high::text || ':' || r.low::text, ',')` : sql<string | null>`group_concat(r.currency || ':' || r.high || ':' || r.low, ',')`).as('v'))
        .as('revenue'),
    ])
    .where('shop_id', '=', shopId)
    .where('day', '>=', fromDay)
})

export function createAnalyticsRepo(db: Kysely<Database>) {
  return {
    /** Sums over the days from `fromDay` on (the overview). */
    async totalsSince(shopId: string, fromDay: number) {
      const [row] = await overviewRow(db, shopId, fromDay)
      return { adds: Number(row?.adds ?? 0), removes: Number(row?.removes ?? 0), lastSeen: Number(row?.last_seen ?? 0), converted: Number(row?.converted ?? 0) }
    },

    /** All-time adds − removes on the days before `day`. */
    async netBefore(shopId: string, day: number): Promise<number> {
      const row = await db
        .selectFrom('analytics_daily')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>(eb('adds', '-', eb.ref('removes'))), sql<number>`0`).as('net'))
        .where('shop_id', '=', shopId)
        .where('day', '<', day)
        .executeTakeFirstOrThrow()
      return Number(row.net)
    },

    async firstDay(shopId: string): Promise<number | null> {
      const row = await db
        .selectFrom('analytics_daily')
        .select((eb) => eb.fn.min<number>('day').as('first'))
        .where('shop_id', '=', shopId)
        .executeTakeFirst()
      return row?.first === null || row?.first === undefined ? null : Number(row.first)
    },

    async days(shopId: string, fromDay: number, toDay: number) {
      return db
        .selectFrom('analytics_daily')
        .select(['day', 'adds', 'removes', 'shoppers', 'last_seen', 'converted', 'orders_influenced'])
        .where('shop_id', '=', shopId)
        .where('day', '>=', fromDay)
        .where('day', '<=', toDay)
        .orderBy('day')
        .execute()
    },

    async topProducts(shopId: string, limit: number): Promise<{ productId: string; wishlistCount: number }[]> {
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
    async catalogNames(shopId: string, productIds: string[]): Promise<Map<string, { title: string | null; handle: string | null }>> {
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
     * statement, one row (`conversionsRow`), the histograms merged lag by lag here.
     */
    async conversionTotals(shopId: string, fromDay: number, today: number) {
      const [r] = await conversionsRow(db, shopId, fromDay)
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
        signals: { back_in_stock: Number(r?.back_in_stock ?? 0), price_dropped: Number(r?.price_dropped ?? 0), low_stock: Number(r?.low_stock ?? 0) },
        lags,
        revenue: revenue.sort((x, y) => (x.currency < y.currency ? -1 : 1)),
      }
    },

    /** Influenced purchases (lines) and revenue per currency of these products. */
    async productRevenue(shopId: string, productIds: string[]): Promise<Map<string, { purchases: number; revenue: { currency: string; amount: bigint }[] }>> {
      const out = new Map<string, { purchases: number; revenue: { currency: string; amount: bigint }[] }>()
      if (productIds.length === 0) return out
      const rows = await db
        .selectFrom('analytics_product_revenue')
        .select(['product_id', 'currency', 'purchases', amountPart(backendOf(db), 'amount_high', 'high').as('high'), amountPart(backendOf(db), 'amount', 'low').as('low')])
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
    async mainCurrency(shopId: string): Promise<string | null> {
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
    async topByRevenue(shopId: string, currency: string, limit: number): Promise<string[]> {
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

    async holdersOf(shopId: string, productIds: string[]): Promise<Map<string, number>> {
      if (productIds.length === 0) return new Map()
      const rows = await db.selectFrom('analytics_product_holders').select(['product_id', 'holders']).where('shop_id', '=', shopId).where('product_id', 'in', productIds).execute()
      return new Map(rows.map((r) => [r.product_id, r.holders]))
    },

    async holders(shopId: string, productId: string): Promise<number> {
      const row = await db
        .selectFrom('analytics_product_holders')
        .select('holders')
        .where('shop_id', '=', shopId)
        .where('product_id', '=', productId)
        .executeTakeFirst()
      return row?.holders ?? 0
    },
  }
}
