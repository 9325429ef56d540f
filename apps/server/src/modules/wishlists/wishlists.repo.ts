/**
 * Kysely queries of wishlists, lists and share links. Every query is scoped by shop and
 * owner; pages read through `wishlist_items_page` (shop, owner, list, added_at, product_id),
 * holders of a product through `wishlist_items_by_product` (shop, product).
 */
import type { Kysely, Selectable, Transaction } from 'kysely'
import { backendOf, lockedForUpdate } from '../../db/dialect.js'
import { precompiled } from '../../db/precompiled.js'
import type { Database, ItemPriority, WishlistItemsTable } from '../../db/schema.js'
import type { Owner } from '../auth/auth.types.js'
import { ownedBy } from '../../db/owner-scope.js'

type Executor = Kysely<Database>
type Trx = Transaction<Database>

/** An item a delete really removed, with the variant the `wishlist.item.removed` event reports. */
export interface RemovedItem {
  list_id: string
  product_id: string
  variant_id: string | null
}
/** An item as read: `variant_id` is the stored variant, else the catalog's default variant (null while unknown). */
export type ItemRow = Pick<Selectable<WishlistItemsTable>, 'product_id' | 'variant_id' | 'handle' | 'metadata' | 'added_at' | 'quantity' | 'note' | 'priority' | 'purchased_at'>

export interface OwnerRow {
  item_count: number
  created_at: number
  updated_at: number
}

export type NewItem = ItemRow & Pick<WishlistItemsTable, 'list_id'>

/** Rows per INSERT: SQLite binds at most 32,766 parameters per statement. */
const CHUNK = 500

function chunks<T>(all: T[], size = CHUNK): T[][] {
  const out: T[][] = []
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size))
  return out
}

export function createWishlistsRepo() {
  const items = (db: Executor, shopId: string, owner: Owner) =>
    db
      .selectFrom('wishlist_items as i')
      .where(ownedBy(shopId, owner, 'i'))

  /** Items with the default variant filled in from the catalog (resolved on read). */
  const itemsWithVariant = (db: Executor, shopId: string, owner: Owner, listId: string) =>
    items(db, shopId, owner)
      .where('i.list_id', '=', listId)
      .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
      .select((eb) => [
        'i.product_id',
        eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'),
        'i.handle',
        'i.metadata',
        'i.added_at',
        'i.quantity',
        'i.note',
        'i.priority',
        'i.purchased_at',
      ])

  // The GET page's two reads, compiled once (db/precompiled.ts): the hottest path of the API.
  const pageQuery = precompiled(6, (db, shopId: string, ownerType: Owner['type'], ownerId: string, listId: string, limit: number, offset: number) =>
    itemsWithVariant(db, shopId, { type: ownerType, id: ownerId }, listId)
      .orderBy('i.added_at', 'desc')
      .orderBy('i.product_id', 'desc')
      .limit(limit)
      .offset(offset),
  )
  const versionQuery = precompiled(3, (db, shopId: string, ownerType: Owner['type'], ownerId: string) =>
    db.selectFrom('wishlist_owners').select('version').where(ownedBy(shopId, { type: ownerType, id: ownerId })),
  )
  /** The number of items in one list of an owner. */
  const listCount = (db: Executor, shopId: string, owner: Owner, listId: string) =>
    items(db, shopId, owner)
      .where('i.list_id', '=', listId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
  const countQuery = precompiled(4, (db, shopId: string, ownerType: Owner['type'], ownerId: string, listId: string) => listCount(db, shopId, { type: ownerType, id: ownerId }, listId))

  // The statements of a single add or remove, compiled once like the page reads.
  const lockOwnerQuery = precompiled(3, (db, shopId: string, ownerType: Owner['type'], ownerId: string) => {
    const q = db
      .selectFrom('wishlist_owners')
      .select(['item_count', 'created_at', 'updated_at'])
      .where(ownedBy(shopId, { type: ownerType, id: ownerId }))
    return lockedForUpdate(q, backendOf(db))
  })
  // An upsert whose conflict branch rewrites nothing: it returns the row either way, and on
  // PostgreSQL the conflict branch takes the row lock (as FOR UPDATE would), in one statement.
  const ensureOwnerQuery = precompiled(4, (db, shopId: string, ownerType: Owner['type'], ownerId: string, at: number) =>
    db
      .insertInto('wishlist_owners')
      .values({ shop_id: shopId, owner_type: ownerType, owner_id: ownerId, item_count: 0, created_at: at, updated_at: at })
      .onConflict((oc) => oc.columns(['shop_id', 'owner_type', 'owner_id']).doUpdateSet((eb) => ({ item_count: eb.ref('wishlist_owners.item_count') })))
      .returning(['item_count', 'created_at', 'updated_at']),
  )
  /** The owner's `item_count` moved by `delta`. */
  const adjustedCount = (db: Executor, shopId: string, owner: Owner, delta: number, at: number) =>
    db
      .updateTable('wishlist_owners')
      .set((eb) => ({ item_count: eb('item_count', '+', delta), updated_at: at }))
      .where(ownedBy(shopId, owner))
  const adjustCountQuery = precompiled(5, (db, shopId: string, ownerType: Owner['type'], ownerId: string, delta: number, at: number) =>
    adjustedCount(db, shopId, { type: ownerType, id: ownerId }, delta, at),
  )
  // The same update answering the list's count after it: the count is a subquery of its
  // RETURNING (it sees the transaction's earlier statements), one round trip instead of two.
  const adjustAndCountQuery = precompiled(6, (db, shopId: string, ownerType: Owner['type'], ownerId: string, delta: number, at: number, listId: string) => {
    const owner = { type: ownerType, id: ownerId }
    return adjustedCount(db, shopId, owner, delta, at).returning(listCount(db, shopId, owner, listId).as('n'))
  })
  const oneQuery = precompiled(5, (db, shopId: string, ownerType: Owner['type'], ownerId: string, listId: string, productId: string) =>
    itemsWithVariant(db, shopId, { type: ownerType, id: ownerId }, listId).where('i.product_id', '=', productId),
  )
  const insertNewItemQuery = precompiled(
    12,
    (
      db,
      shop_id: string,
      owner_type: Owner['type'],
      owner_id: string,
      list_id: string,
      product_id: string,
      variant_id: string | null,
      handle: string | null,
      metadata: string | null,
      added_at: number,
      quantity: number,
      note: string | null,
      priority: ItemPriority,
    ) =>
      db
        .insertInto('wishlist_items')
        .values({ shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at, quantity, note, priority })
        .onConflict((oc) => oc.doNothing())
        .returning('product_id'),
  )
  const deleteReturning = (db: Executor, shopId: string, owner: Owner, listId: string) =>
    db.deleteFrom('wishlist_items').where(ownedBy(shopId, owner)).where('list_id', '=', listId)
  const deleteOneQuery = precompiled(5, (db, shopId: string, ownerType: Owner['type'], ownerId: string, listId: string, productId: string) =>
    deleteReturning(db, shopId, { type: ownerType, id: ownerId }, listId)
      .where('product_id', '=', productId)
      .returning(['list_id', 'product_id', 'variant_id']),
  )

  /** Fills unset variants with the catalog's default variant (what the API shows for them). */
  async function withDefaultVariants(db: Executor, shopId: string, rows: RemovedItem[]): Promise<RemovedItem[]> {
    const unset = [...new Set(rows.filter((r) => r.variant_id === null).map((r) => r.product_id))]
    if (unset.length === 0) return rows
    const defaults = new Map<string, string | null>()
    for (const part of chunks(unset)) {
      const found = await db.selectFrom('catalog_products').select(['product_id', 'default_variant_id']).where('shop_id', '=', shopId).where('product_id', 'in', part).execute()
      for (const f of found) defaults.set(f.product_id, f.default_variant_id)
    }
    return rows.map((r) => (r.variant_id === null ? { ...r, variant_id: defaults.get(r.product_id) ?? null } : r))
  }

  return {
    /** Locks the owner row (FOR UPDATE on PostgreSQL) and returns it; undefined when the owner has never written. */
    async lockOwner(trx: Trx, shopId: string, owner: Owner): Promise<OwnerRow | undefined> {
      const [row] = await lockOwnerQuery(trx, shopId, owner.type, owner.id)
      return row
    },

    /** Creates the owner row on its first write (concurrent creators meet on the primary key) and locks it. */
    async ensureOwner(trx: Trx, shopId: string, owner: Owner, at: number): Promise<OwnerRow> {
      const [row] = await ensureOwnerQuery(trx, shopId, owner.type, owner.id, at)
      if (!row) throw new Error('owner upsert returned no row')
      return row
    },

    /** The owner's page version (migration 0006) as text; 'none' while the owner has no row (and so no items or lists). */
    async ownerVersion(db: Executor, shopId: string, owner: Owner): Promise<string> {
      const [row] = await versionQuery(db, shopId, owner.type, owner.id)
      return row === undefined ? 'none' : String(row.version)
    },

    async getOwner(db: Executor, shopId: string, owner: Owner): Promise<OwnerRow | undefined> {
      return db
        .selectFrom('wishlist_owners')
        .select(['item_count', 'created_at', 'updated_at'])
        .where(ownedBy(shopId, owner))
        .executeTakeFirst()
    },

    async adjustItemCount(trx: Trx, shopId: string, owner: Owner, delta: number, at: number): Promise<void> {
      if (delta === 0) return
      await adjustCountQuery(trx, shopId, owner.type, owner.id, delta, at)
    },

    /** `adjustItemCount` (by a delta other than 0), answering the count of `listId` after it. */
    async adjustItemCountAndCount(trx: Trx, shopId: string, owner: Owner, delta: number, at: number, listId: string): Promise<number> {
      const [row] = await adjustAndCountQuery(trx, shopId, owner.type, owner.id, delta, at, listId)
      return Number(row?.n ?? 0)
    },

    async deleteOwner(trx: Trx, shopId: string, owner: Owner): Promise<void> {
      for (const table of ['share_links', 'wishlist_items', 'wishlist_lists', 'wishlist_owners'] as const) {
        await trx.deleteFrom(table).where(ownedBy(shopId, owner)).execute()
      }
    },

    // ---- items ----

    async countItems(db: Executor, shopId: string, owner: Owner, listId: string): Promise<number> {
      const [row] = await countQuery(db, shopId, owner.type, owner.id, listId)
      return Number(row?.n ?? 0)
    },

    /** Item counts per list of one owner (at most 2,500 rows to count). */
    async countByList(db: Executor, shopId: string, owner: Owner): Promise<Map<string, number>> {
      const rows = await items(db, shopId, owner)
        .select((eb) => ['i.list_id', eb.fn.countAll<number>().as('n')])
        .groupBy('i.list_id')
        .execute()
      return new Map(rows.map((r) => [r.list_id, Number(r.n)]))
    },

    /** Newest first; ties by product id (descending, so one backward index scan serves it). */
    async page(db: Executor, shopId: string, owner: Owner, listId: string, limit: number, offset: number): Promise<ItemRow[]> {
      return pageQuery(db, shopId, owner.type, owner.id, listId, limit, offset)
    },

    async all(db: Executor, shopId: string, owner: Owner, listId: string): Promise<ItemRow[]> {
      return itemsWithVariant(db, shopId, owner, listId).orderBy('i.added_at', 'desc').orderBy('i.product_id', 'desc').execute()
    },

    async one(db: Executor, shopId: string, owner: Owner, listId: string, productId: string): Promise<ItemRow | undefined> {
      const [row] = await oneQuery(db, shopId, owner.type, owner.id, listId, productId)
      return row
    },

    /** Which of `productIds` the list already holds. */
    async present(db: Executor, shopId: string, owner: Owner, listId: string, productIds: string[]): Promise<Set<string>> {
      const found = new Set<string>()
      for (const part of chunks(productIds)) {
        const rows = await items(db, shopId, owner).where('i.list_id', '=', listId).where('i.product_id', 'in', part).select('i.product_id').execute()
        for (const r of rows) found.add(r.product_id)
      }
      return found
    },

    /** Every item of the owner in every list (merge of a guest's stored wishlist). */
    async allOfOwner(db: Executor, shopId: string, owner: Owner): Promise<NewItem[]> {
      return items(db, shopId, owner)
        .select(['i.list_id', 'i.product_id', 'i.variant_id', 'i.handle', 'i.metadata', 'i.added_at', 'i.quantity', 'i.note', 'i.priority', 'i.purchased_at'])
        .orderBy('i.added_at', 'desc')
        .orderBy('i.product_id', 'desc')
        .execute()
    },

    /** Inserts the item unless the list holds the product already; true when it was inserted. */
    async insertIfAbsent(trx: Trx, shopId: string, owner: Owner, r: NewItem): Promise<boolean> {
      const rows = await insertNewItemQuery(trx, shopId, owner.type, owner.id, r.list_id, r.product_id, r.variant_id, r.handle, r.metadata, r.added_at, r.quantity, r.note, r.priority)
      return rows.length > 0
    },

    async insertItems(trx: Trx, shopId: string, owner: Owner, rows: NewItem[]): Promise<void> {
      for (const part of chunks(rows)) {
        await trx
          .insertInto('wishlist_items')
          .values(part.map((r) => ({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, ...r })))
          .execute()
      }
    },

    async updateItem(
      trx: Trx,
      shopId: string,
      owner: Owner,
      listId: string,
      productId: string,
      patch: { variant_id?: string; handle?: string; metadata?: string; quantity?: number; note?: string | null; priority?: ItemPriority },
    ): Promise<void> {
      if (Object.keys(patch).length === 0) return
      await trx
        .updateTable('wishlist_items')
        .set(patch)
        .where(ownedBy(shopId, owner))
        .where('list_id', '=', listId)
        .where('product_id', '=', productId)
        .execute()
    },

    /** Deletes the given products (or handles) from one list; returns what was really removed. */
    async deleteItems(
      trx: Trx,
      shopId: string,
      owner: Owner,
      listId: string,
      match: { productIds?: string[]; handles?: string[] },
    ): Promise<RemovedItem[]> {
      const productIds = match.productIds ?? []
      const handles = match.handles ?? []
      if (productIds.length === 0 && handles.length === 0) return []
      // The event reports each removed item's variant, the catalog default when none was stored.
      if (productIds.length === 1 && handles.length === 0) {
        return withDefaultVariants(trx, shopId, await deleteOneQuery(trx, shopId, owner.type, owner.id, listId, productIds[0] as string))
      }
      const removed = await deleteReturning(trx, shopId, owner, listId)
        .where((eb) => {
          const ors = []
          if (productIds.length) ors.push(eb('product_id', 'in', productIds))
          if (handles.length) ors.push(eb('handle', 'in', handles))
          return eb.or(ors)
        })
        .returning(['list_id', 'product_id', 'variant_id'])
        .execute()
      return withDefaultVariants(trx, shopId, removed)
    },

    /** Removes the products from every list of the owner; returns one row per removed item. */
    async deleteProductsEverywhere(
      trx: Trx,
      shopId: string,
      owner: Owner,
      productIds: string[],
    ): Promise<RemovedItem[]> {
      if (productIds.length === 0) return []
      const rows = await items(trx, shopId, owner)
        .where('i.product_id', 'in', productIds)
        .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
        .select((eb) => ['i.list_id', 'i.product_id', eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id')])
        .execute()
      await trx
        .deleteFrom('wishlist_items')
        .where(ownedBy(shopId, owner))
        .where('product_id', 'in', productIds)
        .execute()
      return rows
    },

    /** The list's item with this handle (the first by product id when several share it). */
    async productIdByHandle(db: Executor, shopId: string, owner: Owner, listId: string, handle: string): Promise<string | undefined> {
      const row = await items(db, shopId, owner).where('i.list_id', '=', listId).where('i.handle', '=', handle).select('i.product_id').orderBy('i.product_id').limit(1).executeTakeFirst()
      return row?.product_id
    },

    /** The owner's items of these products in every list (its variant the catalog default when none was stored). */
    async itemsOfProducts(db: Executor, shopId: string, owner: Owner, productIds: string[]) {
      if (productIds.length === 0) return []
      return items(db, shopId, owner)
        .where('i.product_id', 'in', productIds)
        .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
        .select((eb) => ['i.list_id', 'i.product_id', eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'), 'i.added_at', 'i.purchased_at'])
        .orderBy('i.list_id')
        .execute()
    },

    /**
     * Marks the owner's items of these products (every list) bought at `at`; returns each
     * item as it was before (its variant the catalog default when none was stored).
     */
    async markPurchased(trx: Trx, shopId: string, owner: Owner, productIds: string[], at: number) {
      if (productIds.length === 0) return []
      const rows = await items(trx, shopId, owner)
        .where('i.product_id', 'in', productIds)
        .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
        .select((eb) => ['i.list_id', 'i.product_id', eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'), 'i.added_at', 'i.purchased_at'])
        .orderBy('i.list_id')
        .execute()
      if (rows.length > 0) {
        await trx.updateTable('wishlist_items').set({ purchased_at: at }).where(ownedBy(shopId, owner)).where('product_id', 'in', productIds).execute()
      }
      return rows
    },

    async deleteList(trx: Trx, shopId: string, owner: Owner, listId: string): Promise<string[]> {
      const removed = await items(trx, shopId, owner).where('i.list_id', '=', listId).select('i.product_id').execute()
      for (const table of ['wishlist_items', 'share_links'] as const) {
        await trx.deleteFrom(table).where(ownedBy(shopId, owner)).where('list_id', '=', listId).execute()
      }
      await trx.deleteFrom('wishlist_lists').where(ownedBy(shopId, owner)).where('id', '=', listId).execute()
      return removed.map((r) => r.product_id)
    },

    async moveItem(trx: Trx, shopId: string, owner: Owner, productId: string, from: string, to: string): Promise<void> {
      await trx
        .updateTable('wishlist_items')
        .set({ list_id: to })
        .where(ownedBy(shopId, owner))
        .where('list_id', '=', from)
        .where('product_id', '=', productId)
        .execute()
    },

    // ---- lists ----

    async lists(db: Executor, shopId: string, owner: Owner) {
      return db
        .selectFrom('wishlist_lists')
        .select(['id', 'name', 'name_key', 'created_at', 'updated_at'])
        .where(ownedBy(shopId, owner))
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute()
    },

    async list(db: Executor, shopId: string, owner: Owner, listId: string) {
      return db
        .selectFrom('wishlist_lists')
        .select(['id', 'name', 'name_key', 'created_at', 'updated_at'])
        .where(ownedBy(shopId, owner))
        .where('id', '=', listId)
        .executeTakeFirst()
    },

    async insertList(trx: Trx, shopId: string, owner: Owner, row: { id: string; name: string; name_key: string; created_at: number; updated_at: number }): Promise<void> {
      await trx.insertInto('wishlist_lists').values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, ...row }).execute()
    },

    async renameList(trx: Trx, shopId: string, owner: Owner, listId: string, name: string, nameKey: string, at: number): Promise<void> {
      await trx
        .updateTable('wishlist_lists')
        .set({ name, name_key: nameKey, updated_at: at })
        .where(ownedBy(shopId, owner))
        .where('id', '=', listId)
        .execute()
    },

    // ---- share links ----

    async activeShareLink(db: Executor, shopId: string, owner: Owner, listId: string, at: number) {
      return db
        .selectFrom('share_links')
        .select(['token', 'created_at', 'expires_at'])
        .where(ownedBy(shopId, owner))
        .where('list_id', '=', listId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', at)
        .orderBy('created_at', 'desc')
        .executeTakeFirst()
    },

    async insertShareLink(trx: Trx, row: { shop_id: string; token: string; owner_type: Owner['type']; owner_id: string; list_id: string; created_at: number; expires_at: number }): Promise<void> {
      await trx.insertInto('share_links').values({ ...row, revoked_at: null }).execute()
    },

    async revokeShareLinks(trx: Trx, shopId: string, owner: Owner, listId: string, at: number): Promise<number> {
      const res = await trx
        .updateTable('share_links')
        .set({ revoked_at: at })
        .where(ownedBy(shopId, owner))
        .where('list_id', '=', listId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst()
      return Number(res.numUpdatedRows)
    },

    /** The public read knows only the token: the one lookup not scoped by shop (≥128 random bits). */
    async shareLinkByToken(db: Executor, token: string) {
      return db.selectFrom('share_links').selectAll().where('token', '=', token).executeTakeFirst()
    },

    // ---- holders of a product ----

    /** Whether any list holds the product: one index probe, whatever the number of holders. */
    async isHeld(db: Executor, shopId: string, productId: string): Promise<boolean> {
      return (await db.selectFrom('wishlist_items').select('owner_id').where('shop_id', '=', shopId).where('product_id', '=', productId).limit(1).executeTakeFirst()) !== undefined
    },

    /** Distinct owners holding a product (any list), and the first `limit` customer ids of them. */
    async holders(db: Executor, shopId: string, productId: string, limit: number) {
      const distinctOwners = db
        .selectFrom('wishlist_items')
        .select(['owner_type', 'owner_id'])
        .distinct()
        .where('shop_id', '=', shopId)
        .where('product_id', '=', productId)
      const counted = await db
        .selectFrom(distinctOwners.as('h'))
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst()
      const customers = await db
        .selectFrom('wishlist_items')
        .select('owner_id')
        .distinct()
        .where('shop_id', '=', shopId)
        .where('product_id', '=', productId)
        .where('owner_type', '=', 'customer')
        .orderBy('owner_id', 'asc')
        .limit(limit + 1)
        .execute()
      return {
        wishlistCount: Number(counted?.n ?? 0),
        customerIds: customers.slice(0, limit).map((r) => r.owner_id),
        truncated: customers.length > limit,
      }
    },
  }
}

export type WishlistsRepo = ReturnType<typeof createWishlistsRepo>
