/**
 * Kysely queries of the analytics facts (facts.ts): the inbox, the event log, and the read
 * models the applier maintains, inside the caller's transaction. Every query filters by
 * shop, except `shopsWithPending`: the background applier's pass over all shops.
 */
import { type Insertable, sql } from 'kysely'
import { advisoryXactLock, backendOf, jsonRows, lockedForUpdate, rowsJson } from '../../db/dialect.js'
import { ownedBy } from '../../db/owner-scope.js'
import { precompiled, rowsStatement } from '../../db/precompiled.js'
import type { AnalyticsDailyTable, Database, OwnerType } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import type { Owner } from '../auth/auth.types.js'

export interface OwnerProduct {
  owner: Owner
  productId: string
}

/** The key of an (owner, product) pair in the sets below. */
export const pairKey = (ownerType: OwnerType, ownerId: string, productId: string): string => `${ownerType}:${ownerId}\u0000${productId}`

/** What a batch adds to one day's rollup row. */
export type DailyDelta = Pick<AnalyticsDailyTable, 'adds' | 'removes' | 'shoppers' | 'last_seen' | 'converted'>

/** An add waiting for a cart add of the same product by the same owner. */
export interface PendingAdd {
  owner: Owner
  productId: string
  addedAt: number
  day: number
}

/** A fact as the inbox and the log keep it. */
export type FactRow = Insertable<Database['analytics_events']>

const COLUMNS = ['shop_id', 'type', 'owner_type', 'owner_id', 'product_id', 'occurred_at'] as const
const insertInbox = rowsStatement('analytics_inbox', COLUMNS)
const insertEvents = rowsStatement('analytics_events', COLUMNS)

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
const upsertPending = rowsStatement(
  'analytics_pending_adds',
  ['shop_id', 'owner_type', 'owner_id', 'product_id', 'added_at', 'day', 'count'],
  (q) =>
    q.onConflict((oc) =>
      oc
        .columns(['shop_id', 'owner_type', 'owner_id', 'product_id', 'added_at'])
        .doUpdateSet((eb) => ({ count: eb('analytics_pending_adds.count', '+', eb.ref('excluded.count')) })),
    ),
)
// Insert-if-absent: the rows returned are the ones that were not there.
const insertHoldings = rowsStatement('analytics_holdings', ['shop_id', 'owner_type', 'owner_id', 'product_id', 'held_since'], (q) =>
  q.onConflict((oc) => oc.doNothing()).returning('product_id'),
)
// The last release of each pair (migration 0016): a later release replaces an earlier one.
const upsertReleases = rowsStatement(
  'analytics_releases',
  ['shop_id', 'owner_type', 'owner_id', 'product_id', 'held_since', 'released_at', 'purchased'],
  (q) =>
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

// Every read and every pass of the applier asks the first; the second takes a batch.
const anyPending = precompiled((db, p: { shopId: string }) =>
  db.selectFrom('analytics_inbox').select('id').where('shop_id', '=', p.shopId).limit(1),
)
/** Deletes the shop's oldest `limit` pending facts and returns them (in no particular order). */
const takePending = precompiled((db, p: { shopId: string; limit: number }) =>
  db
    .deleteFrom('analytics_inbox')
    .where('shop_id', '=', p.shopId)
    .where('id', 'in', (eb) => eb.selectFrom('analytics_inbox').select('id').where('shop_id', '=', p.shopId).orderBy('id').limit(p.limit))
    .returning(['id', 'type', 'owner_type', 'owner_id', 'product_id', 'occurred_at']),
)

const shopperRow = (db: Db, shopId: string, owner: Owner) => db.selectFrom('analytics_shoppers').where(ownedBy(shopId, owner))

/** The named parameters of the statements below. */
interface OwnerParams {
  shopId: string
  owner: Owner
}

/**
 * The statements of a single wishlist change, compiled once (db/precompiled.ts): every add
 * and remove runs most of them, and building Kysely's query tree each time cost more CPU
 * than SQLite's work (bench profile of add+remove). Multi-row variants stay dynamic.
 */
const statements = {
  insertShopper: precompiled((db, p: OwnerParams & { day: number }) =>
    db
      .insertInto('analytics_shoppers')
      .values({ shop_id: p.shopId, owner_type: p.owner.type, owner_id: p.owner.id, last_day: p.day })
      .onConflict((oc) => oc.doNothing())
      .returning('last_day'),
  ),
  lastDay: precompiled((db, p: OwnerParams) => {
    const q = shopperRow(db, p.shopId, p.owner).select('last_day')
    return lockedForUpdate(q, backendOf(db))
  }),
  setLastDay: precompiled((db, p: OwnerParams & { day: number }) =>
    db.updateTable('analytics_shoppers').set({ last_day: p.day }).where(ownedBy(p.shopId, p.owner)),
  ),
  convertPending: precompiled((db, p: OwnerParams & { productId: string; at: number }) =>
    db
      .deleteFrom('analytics_pending_adds')
      .where(ownedBy(p.shopId, p.owner))
      .where('product_id', '=', p.productId)
      .where('added_at', '<=', p.at)
      .returning(['day', 'count']),
  ),
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
  rowsJson(
    db,
    pairs.map((p) => ({ owner_type: p.owner.type, owner_id: p.owner.id, product_id: p.productId })),
    PAIR_COLUMNS,
  )
const pairRows = (db: Db, json: string) => jsonRows(db, 'analytics_holdings', PAIR_COLUMNS, json)

/** Which of the pairs have a row in `table`: one statement, an index lookup each. */
const existingPairsIn = (table: 'wishlist_items' | 'analytics_holdings') =>
  precompiled((db, p: { shopId: string; json: string }) =>
    db
      .selectFrom(pairRows(db, p.json))
      .select(['rows.owner_type', 'rows.owner_id', 'rows.product_id'])
      .where(
        sql<boolean>`exists (select 1 from ${sql.table(table)} t
          where t.shop_id = ${p.shopId} and t.owner_type = rows.owner_type and t.owner_id = rows.owner_id and t.product_id = rows.product_id)`,
      ),
  )
const listedPairs = existingPairsIn('wishlist_items')
const heldPairs = existingPairsIn('analytics_holdings')

/** Deletes the pairs' holdings; returns the product of each holding it deleted. */
const releasePairs = precompiled((db, p: { shopId: string; json: string }) =>
  db
    .deleteFrom('analytics_holdings')
    .where('shop_id', '=', p.shopId)
    .where((eb) =>
      eb(
        eb.refTuple('owner_type', 'owner_id', 'product_id'),
        'in',
        eb
          .selectFrom(pairRows(db, p.json))
          .select(['rows.owner_type', 'rows.owner_id', 'rows.product_id'])
          .$asTuple('owner_type', 'owner_id', 'product_id'),
      ),
    )
    .returning(['owner_type', 'owner_id', 'product_id', 'held_since']),
)

async function pairKeys(rows: Promise<{ owner_type: OwnerType; owner_id: string; product_id: string }[]>): Promise<Set<string>> {
  return new Set((await rows).map((r) => pairKey(r.owner_type, r.owner_id, r.product_id)))
}

const byPairKey = (
  a: { owner_type: OwnerType; owner_id: string; product_id: string },
  b: { owner_type: OwnerType; owner_id: string; product_id: string },
) => (pairKey(a.owner_type, a.owner_id, a.product_id) < pairKey(b.owner_type, b.owner_id, b.product_id) ? -1 : 1)

export const factsRepo = {
  // ---- the inbox and the log ----

  /** Appends facts (rows of their shop) to the inbox: one statement, no promise of its own (every add and remove). */
  addToInbox: (db: Db, rows: FactRow[]): Promise<unknown> => insertInbox(db, rows),

  /** Appends applied facts (rows of their shop) to the event log. */
  addToLog: (db: Db, rows: FactRow[]): Promise<unknown> => insertEvents(db, rows),

  async anyPending(db: Db, shopId: string): Promise<boolean> {
    return (await anyPending(db, { shopId })).length > 0
  },

  /** Takes the shop's oldest `limit` pending facts off the inbox; returns them in inbox order. */
  async take(db: Db, shopId: string, limit: number) {
    return (await takePending(db, { shopId, limit })).sort((x, y) => x.id - y.id)
  },

  /** The shops that have pending facts, all shops: the background applier's pass. */
  async shopsWithPending(db: Db): Promise<string[]> {
    return (await db.selectFrom('analytics_inbox').select('shop_id').distinct().execute()).map((r) => r.shop_id)
  },

  /** Makes the transaction `trx` the shop's only applier (waiting for it, or false at once when `wait` is false). */
  lockApplier: (trx: Db, shopId: string, wait: boolean): Promise<boolean> => advisoryXactLock(trx, `wishlist.analytics:${shopId}`, wait),

  // ---- the read models ----

  /** Adds each delta to its day's rollup row (creating it). Rows are locked in day order. */
  async addDaily(db: Db, shopId: string, deltas: Map<number, DailyDelta>): Promise<void> {
    await upsertDaily(
      db,
      [...deltas.entries()].sort((a, b) => a[0] - b[0]).map(([day, d]) => ({ shop_id: shopId, day, ...d })),
    )
  },

  /** Adds each delta to its product's holder count. Rows are locked in product order. */
  async addHolders(db: Db, shopId: string, deltas: Map<string, number>): Promise<void> {
    await upsertHolders(
      db,
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
  async advanceLastDay(db: Db, shopId: string, owner: Owner, day: number): Promise<{ from: number | null } | null> {
    if ((await statements.insertShopper(db, { shopId, owner, day })).length > 0) return { from: null }
    const [current] = await statements.lastDay(db, { shopId, owner })
    if (!current) throw new Error('analytics_shoppers row vanished inside its transaction')
    if (current.last_day >= day) return null
    await statements.setLastDay(db, { shopId, owner, day })
    return { from: current.last_day }
  },

  /**
   * Records that the owners no longer hold their products, and when (`releasedAt` of each
   * pair's key, else `at`: attribution looks back to it); returns one product id per pair held before.
   */
  async releaseAll(db: Db, shopId: string, pairs: OwnerProduct[], at: number, releasedAt?: Map<string, number>): Promise<string[]> {
    if (pairs.length === 0) return []
    const released = await releasePairs(db, { shopId, json: pairsJson(db, pairs) })
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
      .sort(byPairKey)
    await upsertReleases(db, rows)
    return released.map((r) => r.product_id)
  },

  /** Pairs held and released within one batch (never in the holdings set): their release, as `releaseAll` records it. */
  async recordReleases(db: Db, shopId: string, spans: { owner: Owner; productId: string; since: number; until: number }[]): Promise<void> {
    if (spans.length === 0) return
    const rows = spans
      .map((p) => ({
        shop_id: shopId,
        owner_type: p.owner.type,
        owner_id: p.owner.id,
        product_id: p.productId,
        held_since: p.since,
        released_at: p.until,
        purchased: 0,
      }))
      .sort(byPairKey)
    await upsertReleases(db, rows)
  },

  /** The products the analytics holdings set has for this owner. */
  async heldProducts(db: Db, shopId: string, owner: Owner): Promise<string[]> {
    const rows = await db.selectFrom('analytics_holdings').select('product_id').where(ownedBy(shopId, owner)).execute()
    return rows.map((r) => r.product_id)
  },

  /** The distinct products the owner's lists hold now. */
  async listedProducts(db: Db, shopId: string, owner: Owner): Promise<string[]> {
    const rows = await db.selectFrom('wishlist_items').where(ownedBy(shopId, owner)).select('product_id').distinct().execute()
    return rows.map((r) => r.product_id)
  },

  /** The pairs whose owner holds the product in some list now, as `pairKey`s. */
  listedPairs: (db: Db, shopId: string, pairs: OwnerProduct[]): Promise<Set<string>> =>
    pairKeys(listedPairs(db, { shopId, json: pairsJson(db, pairs) })),

  /** The pairs in the analytics holdings set, as `pairKey`s. */
  heldPairs: (db: Db, shopId: string, pairs: OwnerProduct[]): Promise<Set<string>> =>
    pairKeys(heldPairs(db, { shopId, json: pairsJson(db, pairs) })),

  /** Adds to the pending set, in key order; equal keys (same owner, product and time) add up. */
  async addPending(db: Db, shopId: string, adds: PendingAdd[]): Promise<void> {
    const rows = [...byKey(adds, (a) => `${a.owner.type}\u0000${a.owner.id}\u0000${a.productId}\u0000${a.addedAt}`).values()].map(
      (same) => {
        const a = same[0] as PendingAdd
        return {
          shop_id: shopId,
          owner_type: a.owner.type,
          owner_id: a.owner.id,
          product_id: a.productId,
          added_at: a.addedAt,
          day: a.day,
          count: same.length,
        }
      },
    )
    await upsertPending(db, rows)
  },

  /** Records that each owner holds its product since `since` (else `at`); returns one product id per pair not held before. */
  async holdAll(db: Db, shopId: string, pairs: OwnerProduct[], at: number, since?: Map<string, number>): Promise<string[]> {
    const rows = [...byKey(pairs, (p) => `${p.owner.type}\u0000${p.owner.id}\u0000${p.productId}`).values()].map((same) => {
      const p = same[0] as OwnerProduct
      const held_since = since?.get(pairKey(p.owner.type, p.owner.id, p.productId)) ?? at
      return { shop_id: shopId, owner_type: p.owner.type, owner_id: p.owner.id, product_id: p.productId, held_since }
    })
    return (await insertHoldings(db, rows)).map((r) => r.product_id)
  },

  /** Adds each (owner, day) to the seen set, in key order; returns the keys (`keyOf`) that were not there yet. */
  async markAllSeen(
    db: Db,
    shopId: string,
    seen: { owner: Owner; day: number }[],
    keyOf: (owner: Owner, day: number) => string,
  ): Promise<Set<string>> {
    const rows = seen
      .map((x) => ({ shop_id: shopId, day: x.day, owner_type: x.owner.type, owner_id: x.owner.id }))
      .sort(
        (a, b) =>
          a.day - b.day ||
          (a.owner_type < b.owner_type
            ? -1
            : a.owner_type > b.owner_type
              ? 1
              : a.owner_id < b.owner_id
                ? -1
                : a.owner_id > b.owner_id
                  ? 1
                  : 0),
      )
    const inserted = await insertSeenDays(db, rows)
    return new Set(inserted.map((r) => keyOf({ type: r.owner_type, id: r.owner_id }, r.day)))
  },

  /** Takes the owner's adds of the product made at or before `at` off the pending set. */
  convertPending: (db: Db, shopId: string, owner: Owner, productId: string, at: number): Promise<{ day: number; count: number }[]> =>
    statements.convertPending(db, { shopId, owner, productId, at }),
}
