/**
 * Kysely queries of the analytics read models. Every query filters by shop. The write side
 * (`rollupWriter`) runs inside the caller's transaction; the read side touches at most one
 * rollup row per day of the period (or `limit` rows of the holder index).
 */
import { type Kysely, sql, type Transaction } from 'kysely'
import type { Backend } from '../../db/connect.js'
import type { Database, OwnerType } from '../../db/schema.js'

export interface Owner {
  type: OwnerType
  id: string
}

export interface DailyDelta {
  adds: number
  removes: number
  shoppers: number
  last_seen: number
  converted: number
}

export interface DailyRow extends DailyDelta {
  day: number
}

const CHUNK = 500

export function rollupWriter(trx: Transaction<Database>, shopId: string, backend: Backend) {
  return {
    /** Adds each delta to its day's rollup row (creating it). Rows are locked in day order. */
    async addDaily(deltas: Map<number, DailyDelta>): Promise<void> {
      const rows = [...deltas.entries()].sort((a, b) => a[0] - b[0]).map(([day, d]) => ({ shop_id: shopId, day, ...d }))
      for (let i = 0; i < rows.length; i += CHUNK) {
        await trx
          .insertInto('analytics_daily')
          .values(rows.slice(i, i + CHUNK))
          .onConflict((oc) =>
            oc.columns(['shop_id', 'day']).doUpdateSet((eb) => ({
              adds: eb('analytics_daily.adds', '+', eb.ref('excluded.adds')),
              removes: eb('analytics_daily.removes', '+', eb.ref('excluded.removes')),
              shoppers: eb('analytics_daily.shoppers', '+', eb.ref('excluded.shoppers')),
              last_seen: eb('analytics_daily.last_seen', '+', eb.ref('excluded.last_seen')),
              converted: eb('analytics_daily.converted', '+', eb.ref('excluded.converted')),
            })),
          )
          .execute()
      }
    },

    /** Adds each delta to its product's holder count. Rows are locked in product order. */
    async addHolders(deltas: Map<string, number>): Promise<void> {
      const rows = [...deltas.entries()]
        .filter(([, n]) => n !== 0)
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map(([product_id, holders]) => ({ shop_id: shopId, product_id, holders }))
      for (let i = 0; i < rows.length; i += CHUNK) {
        await trx
          .insertInto('analytics_product_holders')
          .values(rows.slice(i, i + CHUNK))
          .onConflict((oc) =>
            oc.columns(['shop_id', 'product_id']).doUpdateSet((eb) => ({
              holders: eb('analytics_product_holders.holders', '+', eb.ref('excluded.holders')),
            })),
          )
          .execute()
      }
    },

    /** Adds the owner to the day's seen set; true when it was not there yet. */
    async markSeen(owner: Owner, day: number): Promise<boolean> {
      const row = await trx
        .insertInto('analytics_shopper_days')
        .values({ shop_id: shopId, day, owner_type: owner.type, owner_id: owner.id })
        .onConflict((oc) => oc.doNothing())
        .returning('day')
        .executeTakeFirst()
      return row !== undefined
    },

    /**
     * Moves the owner's last active day forward to `day`. Returns what moved:
     * `{from: null}` for a new owner, `{from: d}` when it moved from day d, or null.
     */
    async advanceLastDay(owner: Owner, day: number): Promise<{ from: number | null } | null> {
      const inserted = await trx
        .insertInto('analytics_shoppers')
        .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, last_day: day })
        .onConflict((oc) => oc.doNothing())
        .returning('last_day')
        .executeTakeFirst()
      if (inserted) return { from: null }
      let q = trx
        .selectFrom('analytics_shoppers')
        .select('last_day')
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
      if (backend === 'postgres') q = q.forUpdate()
      const current = await q.executeTakeFirstOrThrow()
      if (current.last_day >= day) return null
      await trx
        .updateTable('analytics_shoppers')
        .set({ last_day: day })
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
        .execute()
      return { from: current.last_day }
    },

    /** Does the owner hold the product in some list, not counting `exceptList`? */
    async holdsInLists(owner: Owner, productId: string, exceptList: string | undefined): Promise<boolean> {
      let q = trx
        .selectFrom('wishlist_items')
        .select('list_id')
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
        .where('product_id', '=', productId)
      if (exceptList !== undefined) q = q.where('list_id', '<>', exceptList)
      return (await q.limit(1).executeTakeFirst()) !== undefined
    },

    /** Records that the owner holds the product; true when it did not before. */
    async hold(owner: Owner, productId: string): Promise<boolean> {
      const row = await trx
        .insertInto('analytics_holdings')
        .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, product_id: productId })
        .onConflict((oc) => oc.doNothing())
        .returning('product_id')
        .executeTakeFirst()
      return row !== undefined
    },

    /** Records that the owner no longer holds the product; true when it did before. */
    async release(owner: Owner, productId: string): Promise<boolean> {
      const row = await trx
        .deleteFrom('analytics_holdings')
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
        .where('product_id', '=', productId)
        .returning('product_id')
        .executeTakeFirst()
      return row !== undefined
    },

    /** The products the analytics holdings set has for this owner. */
    async heldProducts(owner: Owner): Promise<string[]> {
      const rows = await trx
        .selectFrom('analytics_holdings')
        .select('product_id')
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
        .execute()
      return rows.map((r) => r.product_id)
    },

    /** The distinct products the owner's lists hold now. */
    async listedProducts(owner: Owner): Promise<string[]> {
      const rows = await trx
        .selectFrom('wishlist_items')
        .select('product_id')
        .distinct()
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
        .execute()
      return rows.map((r) => r.product_id)
    },

    async addPending(owner: Owner, productId: string, addedAt: number, day: number): Promise<void> {
      await trx
        .insertInto('analytics_pending_adds')
        .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, product_id: productId, added_at: addedAt, day, count: 1 })
        .onConflict((oc) =>
          oc
            .columns(['shop_id', 'owner_type', 'owner_id', 'product_id', 'added_at'])
            .doUpdateSet((eb) => ({ count: eb('analytics_pending_adds.count', '+', 1) })),
        )
        .execute()
    },

    /** Takes the owner's adds of the product made at or before `at` off the pending set. */
    async convertPending(owner: Owner, productId: string, at: number): Promise<{ day: number; count: number }[]> {
      return trx
        .deleteFrom('analytics_pending_adds')
        .where('shop_id', '=', shopId)
        .where('owner_type', '=', owner.type)
        .where('owner_id', '=', owner.id)
        .where('product_id', '=', productId)
        .where('added_at', '<=', at)
        .returning(['day', 'count'])
        .execute()
    },
  }
}

export type RollupWriter = ReturnType<typeof rollupWriter>

export function createAnalyticsRepo(db: Kysely<Database>) {
  return {
    /** Sums over the days from `fromDay` on (all days when null). */
    async totalsSince(shopId: string, fromDay: number | null) {
      let q = db
        .selectFrom('analytics_daily')
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<number>('adds'), sql<number>`0`).as('adds'),
          eb.fn.coalesce(eb.fn.sum<number>('removes'), sql<number>`0`).as('removes'),
          eb.fn.coalesce(eb.fn.sum<number>('last_seen'), sql<number>`0`).as('last_seen'),
          eb.fn.coalesce(eb.fn.sum<number>('converted'), sql<number>`0`).as('converted'),
        ])
        .where('shop_id', '=', shopId)
      if (fromDay !== null) q = q.where('day', '>=', fromDay)
      const row = await q.executeTakeFirstOrThrow()
      return { adds: Number(row.adds), removes: Number(row.removes), lastSeen: Number(row.last_seen), converted: Number(row.converted) }
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

    async days(shopId: string, fromDay: number, toDay: number): Promise<DailyRow[]> {
      return db
        .selectFrom('analytics_daily')
        .select(['day', 'adds', 'removes', 'shoppers', 'last_seen', 'converted'])
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

export type AnalyticsRepo = ReturnType<typeof createAnalyticsRepo>
