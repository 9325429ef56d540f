/**
 * Kysely queries of wishlists, lists and share links. Every query is scoped by shop and
 * owner, except a share link's lookup by its token (the token is the credential) and the
 * holders of a product (by shop). Pages read through `wishlist_items_page` (shop, owner, list, added_at, product_id),
 * holders of a product through `wishlist_items_by_product` (shop, product).
 */
import { type Selectable, sql } from 'kysely'
import { backendOf, lockedForUpdate } from '../../db/dialect.js'
import { ownedBy } from '../../db/owner-scope.js'
import { precompiled } from '../../db/precompiled.js'
import type { ItemPriority, ShareLinksTable, WishlistItemsTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import type { Owner } from '../auth/auth.types.js'

/** An item a delete really removed, with the variant the `wishlist.item.removed` event reports. */
export interface RemovedItem {
  list_id: string
  product_id: string
  variant_id: string | null
}
/** An item as read: `variant_id` is the stored variant, else the catalog's default variant (null while unknown). */
export type ItemRow = Pick<
  Selectable<WishlistItemsTable>,
  'product_id' | 'variant_id' | 'handle' | 'metadata' | 'added_at' | 'quantity' | 'note' | 'priority' | 'purchased_at'
>

export interface OwnerRow {
  item_count: number
  created_at: number
  updated_at: number
}

export type NewItem = ItemRow & Pick<WishlistItemsTable, 'list_id'>

export type ShareLinkRow = Selectable<ShareLinksTable>

/** Rows per INSERT: SQLite binds at most 32,766 parameters per statement. */
const CHUNK = 500

function chunks<T>(all: T[], size = CHUNK): T[][] {
  const out: T[][] = []
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size))
  return out
}

const items = (db: Db, shopId: string, owner: Owner) => db.selectFrom('wishlist_items as i').where(ownedBy(shopId, owner, 'i'))

/** Items with the default variant filled in from the catalog (resolved on read). */
const itemsWithVariant = (db: Db, shopId: string, owner: Owner, listId: string) =>
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

/** The number of items in one list of an owner. */
const listCount = (db: Db, shopId: string, owner: Owner, listId: string) =>
  items(db, shopId, owner)
    .where('i.list_id', '=', listId)
    .select((eb) => eb.fn.countAll<number>().as('n'))

/** The owner's `item_count` moved by `delta`. */
const adjustedCount = (db: Db, shopId: string, owner: Owner, delta: number, at: number) =>
  db
    .updateTable('wishlist_owners')
    .set((eb) => ({ item_count: eb('item_count', '+', delta), updated_at: at }))
    .where(ownedBy(shopId, owner))

const deleteReturning = (db: Db, shopId: string, owner: Owner, listId: string) =>
  db.deleteFrom('wishlist_items').where(ownedBy(shopId, owner)).where('list_id', '=', listId)

/** The named parameters of the precompiled statements below. */
interface OwnerParams {
  shopId: string
  owner: Owner
}
interface ListParams extends OwnerParams {
  listId: string
}

// The GET page's two reads, compiled once (db/precompiled.ts): the hottest path of the API.
const pageQuery = precompiled((db, p: ListParams & { limit: number; offset: number }) =>
  itemsWithVariant(db, p.shopId, p.owner, p.listId)
    .orderBy('i.added_at', 'desc')
    .orderBy('i.product_id', 'desc')
    .limit(p.limit)
    .offset(p.offset),
)
const versionQuery = precompiled((db, p: OwnerParams) =>
  db.selectFrom('wishlist_owners').select('version').where(ownedBy(p.shopId, p.owner)),
)
const countQuery = precompiled((db, p: ListParams) => listCount(db, p.shopId, p.owner, p.listId))

// The statements of a single add or remove, compiled once like the page reads.
const lockOwnerQuery = precompiled((db, p: OwnerParams) => {
  const q = db.selectFrom('wishlist_owners').select(['item_count', 'created_at', 'updated_at']).where(ownedBy(p.shopId, p.owner))
  return lockedForUpdate(q, backendOf(db))
})
// An upsert whose conflict branch rewrites nothing: it returns the row either way, and on
// PostgreSQL the conflict branch takes the row lock (as FOR UPDATE would), in one statement.
const ensureOwnerQuery = precompiled((db, p: OwnerParams & { at: number }) =>
  db
    .insertInto('wishlist_owners')
    .values({ shop_id: p.shopId, owner_type: p.owner.type, owner_id: p.owner.id, item_count: 0, created_at: p.at, updated_at: p.at })
    .onConflict((oc) =>
      oc.columns(['shop_id', 'owner_type', 'owner_id']).doUpdateSet((eb) => ({ item_count: eb.ref('wishlist_owners.item_count') })),
    )
    .returning(['item_count', 'created_at', 'updated_at']),
)
const adjustCountQuery = precompiled((db, p: OwnerParams & { delta: number; at: number }) =>
  adjustedCount(db, p.shopId, p.owner, p.delta, p.at),
)
// The same update answering the list's count after it: the count is a subquery of its
// RETURNING (it sees the transaction's earlier statements), one round trip instead of two.
const adjustAndCountQuery = precompiled((db, p: ListParams & { delta: number; at: number }) =>
  adjustedCount(db, p.shopId, p.owner, p.delta, p.at).returning(listCount(db, p.shopId, p.owner, p.listId).as('n')),
)
const oneQuery = precompiled((db, p: ListParams & { productId: string }) =>
  itemsWithVariant(db, p.shopId, p.owner, p.listId).where('i.product_id', '=', p.productId),
)
const insertNewItemQuery = precompiled((db, { shopId, owner, item }: OwnerParams & { item: NewItem }) =>
  db
    .insertInto('wishlist_items')
    .values({
      shop_id: shopId,
      owner_type: owner.type,
      owner_id: owner.id,
      list_id: item.list_id,
      product_id: item.product_id,
      variant_id: item.variant_id,
      handle: item.handle,
      metadata: item.metadata,
      added_at: item.added_at,
      quantity: item.quantity,
      note: item.note,
      priority: item.priority,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('product_id'),
)
const deleteOneQuery = precompiled((db, p: ListParams & { productId: string }) =>
  deleteReturning(db, p.shopId, p.owner, p.listId).where('product_id', '=', p.productId).returning(['list_id', 'product_id', 'variant_id']),
)

// ---- PostgreSQL: each write as one call of its function (migration 0027), the page as one statement ----

/** The item fields a write gives, by column (`metadata` as its JSON text): an add inserts their defaults for the rest, an update sets only these. */
export interface GivenFields {
  variant_id?: string
  handle?: string
  metadata?: string
  quantity?: number
  note?: string | null
  priority?: ItemPriority
}

/** A refusal the functions answer before writing anything, or 'ok'. */
export type WriteStatus = 'ok' | 'list_not_found' | 'item_limit' | 'not_found' | 'item_not_in_list'

type AddedRow = ItemRow & { status: WriteStatus; created: boolean; n: number }
type PatchedRow = ItemRow & { status: WriteStatus }

const call = <Row>(fn: string, args: unknown[]) => sql<Row>`${sql.raw(fn)}(${sql.join(args)})`.as('w')

const addAtOnceQuery = precompiled(
  (db, p: ListParams & { productId: string; given: string; at: number; limit: number; eventId: string }) =>
    db
      .selectFrom(
        call<AddedRow>('wishlist_add_item', [p.shopId, p.owner.type, p.owner.id, p.listId, p.productId, p.given, p.at, p.limit, p.eventId]),
      )
      .selectAll(),
  { writes: true },
)
const removeAtOnceQuery = precompiled(
  (db, p: ListParams & { productIds: string[]; handles: string[]; at: number; eventId: string }) =>
    db
      .selectFrom(
        call<{ status: WriteStatus; removed: number; n: number }>('wishlist_remove_items', [
          p.shopId,
          p.owner.type,
          p.owner.id,
          p.listId,
          p.productIds,
          p.handles,
          p.at,
          p.eventId,
        ]),
      )
      .selectAll(),
  { writes: true },
)
const patchAtOnceQuery = precompiled(
  (db, p: ListParams & { productId: string | null; handle: string | null; given: string }) =>
    db
      .selectFrom(call<PatchedRow>('wishlist_patch_item', [p.shopId, p.owner.type, p.owner.id, p.listId, p.productId, p.handle, p.given]))
      .selectAll(),
  { writes: true },
)
const moveAtOnceQuery = precompiled(
  (db, p: OwnerParams & { productId: string; from: string; to: string; at: number }) =>
    db.selectNoFrom(
      sql<WriteStatus>`wishlist_move_item(${sql.join([p.shopId, p.owner.type, p.owner.id, p.productId, p.from, p.to, p.at])})`.as('status'),
    ),
  { writes: true },
)

/** The owner's version, and unless it is `known`: whether the list exists, its count and the page (json_agg keeps the page's order). */
const versionedPageQuery = precompiled((db, p: ListParams & { limit: number; offset: number; known: number | null }) => {
  const page = itemsWithVariant(db, p.shopId, p.owner, p.listId)
    .orderBy('i.added_at', 'desc')
    .orderBy('i.product_id', 'desc')
    .limit(p.limit)
    .offset(p.offset)
  const args = sql.join([p.shopId, p.owner.type, p.owner.id, p.listId])
  const changed = sql`v.version is distinct from ${p.known}::bigint`
  return db
    .selectFrom(
      db.selectNoFrom((eb) => eb.selectFrom('wishlist_owners').select('version').where(ownedBy(p.shopId, p.owner)).as('version')).as('v'),
    )
    .select([
      'v.version',
      sql<boolean | null>`case when ${changed} then wishlist_list_exists(${args}) end`.as('list_ok'),
      sql<number | null>`case when ${changed} then wishlist_list_count(${args}) end`.as('total'),
      sql<
        ItemRow[] | null
      >`case when ${changed} then (select coalesce(json_agg(p order by p.added_at desc, p.product_id desc), '[]') from (${page}) p) end`.as(
        'items',
      ),
    ])
})

/** Fills unset variants with the catalog's default variant (what the API shows for them). */
async function withDefaultVariants(db: Db, shopId: string, rows: RemovedItem[]): Promise<RemovedItem[]> {
  const unset = [...new Set(rows.filter((r) => r.variant_id === null).map((r) => r.product_id))]
  if (unset.length === 0) return rows
  const defaults = new Map<string, string | null>()
  for (const part of chunks(unset)) {
    const found = await db
      .selectFrom('catalog_products')
      .select(['product_id', 'default_variant_id'])
      .where('shop_id', '=', shopId)
      .where('product_id', 'in', part)
      .execute()
    for (const f of found) defaults.set(f.product_id, f.default_variant_id)
  }
  return rows.map((r) => (r.variant_id === null ? { ...r, variant_id: defaults.get(r.product_id) ?? null } : r))
}

export const wishlistsRepo = {
  // ---- PostgreSQL: one statement per write (statementsAreRoundTrips) ----

  /** An add as one statement: what the SQLite path's transaction does (wishlists.service.ts), `eventId` for its `wishlist.item.added`. */
  async addAtOnce(
    db: Db,
    shopId: string,
    owner: Owner,
    item: { listId: string; productId: string; given: GivenFields; at: number; limit: number; eventId: string },
  ): Promise<AddedRow> {
    const [row] = await addAtOnceQuery(db, { shopId, owner, ...item, given: JSON.stringify(item.given) })
    if (!row) throw new Error('wishlist_add_item returned no row')
    return row
  },

  /** A removal (by product ids and handles) as one statement; `eventId` (numbered on from the second) for its events. */
  async removeAtOnce(
    db: Db,
    shopId: string,
    owner: Owner,
    listId: string,
    match: { productIds: string[]; handles: string[] },
    at: number,
    eventId: string,
  ): Promise<{ status: WriteStatus; removed: number; n: number }> {
    const [row] = await removeAtOnceQuery(db, { shopId, owner, listId, ...match, at, eventId })
    if (!row) throw new Error('wishlist_remove_items returned no row')
    return row
  },

  /** PATCH as one statement: the item by product id, or by handle when `productId` is null. */
  async patchAtOnce(
    db: Db,
    shopId: string,
    owner: Owner,
    listId: string,
    key: { productId: string | null; handle: string | null },
    given: GivenFields,
  ): Promise<PatchedRow> {
    const [row] = await patchAtOnceQuery(db, { shopId, owner, listId, ...key, given: JSON.stringify(given) })
    if (!row) throw new Error('wishlist_patch_item returned no row')
    return row
  },

  async moveAtOnce(db: Db, shopId: string, owner: Owner, productId: string, from: string, to: string, at: number): Promise<WriteStatus> {
    const [row] = await moveAtOnceQuery(db, { shopId, owner, productId, from, to, at })
    return row?.status ?? 'item_not_in_list'
  },

  /**
   * The page as one statement with the owner's version ('none' without a row): `page` is
   * undefined when the version is `known` (the caller holds that page), null when the list does not exist.
   */
  async versionedPage(
    db: Db,
    shopId: string,
    owner: Owner,
    listId: string,
    limit: number,
    offset: number,
    known: string | undefined,
  ): Promise<{ version: string; page?: { rows: ItemRow[]; total: number } | null }> {
    const knownVersion = known === undefined ? -1 : known === 'none' ? null : Number(known)
    const [row] = await versionedPageQuery(db, { shopId, owner, listId, limit, offset, known: knownVersion })
    const version = row?.version === null || row?.version === undefined ? 'none' : String(row.version)
    if (!row || row.items === null) return { version }
    if (row.list_ok !== true) return { version, page: null }
    return { version, page: { rows: row.items, total: Number(row.total) } }
  },

  /** Locks the owner row (FOR UPDATE on PostgreSQL) and returns it; undefined when the owner has never written. */
  async lockOwner(db: Db, shopId: string, owner: Owner): Promise<OwnerRow | undefined> {
    const [row] = await lockOwnerQuery(db, { shopId, owner })
    return row
  },

  /** Creates the owner row on its first write (concurrent creators meet on the primary key) and locks it. */
  async ensureOwner(db: Db, shopId: string, owner: Owner, at: number): Promise<OwnerRow> {
    const [row] = await ensureOwnerQuery(db, { shopId, owner, at })
    if (!row) throw new Error('owner upsert returned no row')
    return row
  },

  /** The owner's page version (migration 0006) as text; 'none' while the owner has no row (and so no items or lists). */
  async ownerVersion(db: Db, shopId: string, owner: Owner): Promise<string> {
    const [row] = await versionQuery(db, { shopId, owner })
    return row === undefined ? 'none' : String(row.version)
  },

  async getOwner(db: Db, shopId: string, owner: Owner): Promise<OwnerRow | undefined> {
    return db
      .selectFrom('wishlist_owners')
      .select(['item_count', 'created_at', 'updated_at'])
      .where(ownedBy(shopId, owner))
      .executeTakeFirst()
  },

  async adjustItemCount(db: Db, shopId: string, owner: Owner, delta: number, at: number): Promise<void> {
    if (delta === 0) return
    await adjustCountQuery(db, { shopId, owner, delta, at })
  },

  /** `adjustItemCount` (by a delta other than 0), answering the count of `listId` after it. */
  async adjustItemCountAndCount(db: Db, shopId: string, owner: Owner, delta: number, at: number, listId: string): Promise<number> {
    const [row] = await adjustAndCountQuery(db, { shopId, owner, delta, at, listId })
    return Number(row?.n ?? 0)
  },

  async deleteOwner(db: Db, shopId: string, owner: Owner): Promise<void> {
    for (const table of ['share_links', 'wishlist_items', 'wishlist_lists', 'wishlist_owners'] as const) {
      await db.deleteFrom(table).where(ownedBy(shopId, owner)).execute()
    }
  },

  // ---- items ----

  async countItems(db: Db, shopId: string, owner: Owner, listId: string): Promise<number> {
    const [row] = await countQuery(db, { shopId, owner, listId })
    return Number(row?.n ?? 0)
  },

  /** Item counts per list of one owner (at most 2,500 rows to count). */
  async countByList(db: Db, shopId: string, owner: Owner): Promise<Map<string, number>> {
    const rows = await items(db, shopId, owner)
      .select((eb) => ['i.list_id', eb.fn.countAll<number>().as('n')])
      .groupBy('i.list_id')
      .execute()
    return new Map(rows.map((r) => [r.list_id, Number(r.n)]))
  },

  /** Newest first; ties by product id (descending, so one backward index scan serves it). */
  async page(db: Db, shopId: string, owner: Owner, listId: string, limit: number, offset: number): Promise<ItemRow[]> {
    return pageQuery(db, { shopId, owner, listId, limit, offset })
  },

  async all(db: Db, shopId: string, owner: Owner, listId: string): Promise<ItemRow[]> {
    return itemsWithVariant(db, shopId, owner, listId).orderBy('i.added_at', 'desc').orderBy('i.product_id', 'desc').execute()
  },

  async one(db: Db, shopId: string, owner: Owner, listId: string, productId: string): Promise<ItemRow | undefined> {
    const [row] = await oneQuery(db, { shopId, owner, listId, productId })
    return row
  },

  /** Which of `productIds` the list already holds. */
  async present(db: Db, shopId: string, owner: Owner, listId: string, productIds: string[]): Promise<Set<string>> {
    const found = new Set<string>()
    for (const part of chunks(productIds)) {
      const rows = await items(db, shopId, owner)
        .where('i.list_id', '=', listId)
        .where('i.product_id', 'in', part)
        .select('i.product_id')
        .execute()
      for (const r of rows) found.add(r.product_id)
    }
    return found
  },

  /** Every item of the owner in every list (merge of a guest's stored wishlist). */
  async allOfOwner(db: Db, shopId: string, owner: Owner): Promise<NewItem[]> {
    return items(db, shopId, owner)
      .select([
        'i.list_id',
        'i.product_id',
        'i.variant_id',
        'i.handle',
        'i.metadata',
        'i.added_at',
        'i.quantity',
        'i.note',
        'i.priority',
        'i.purchased_at',
      ])
      .orderBy('i.added_at', 'desc')
      .orderBy('i.product_id', 'desc')
      .execute()
  },

  /** Inserts the item unless the list holds the product already; true when it was inserted. */
  async insertIfAbsent(db: Db, shopId: string, owner: Owner, item: NewItem): Promise<boolean> {
    const rows = await insertNewItemQuery(db, { shopId, owner, item })
    return rows.length > 0
  },

  async insertItems(db: Db, shopId: string, owner: Owner, rows: NewItem[]): Promise<void> {
    for (const part of chunks(rows)) {
      await db
        .insertInto('wishlist_items')
        .values(part.map((r) => ({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, ...r })))
        .execute()
    }
  },

  async updateItem(db: Db, shopId: string, owner: Owner, listId: string, productId: string, patch: GivenFields): Promise<void> {
    if (Object.keys(patch).length === 0) return
    await db
      .updateTable('wishlist_items')
      .set(patch)
      .where(ownedBy(shopId, owner))
      .where('list_id', '=', listId)
      .where('product_id', '=', productId)
      .execute()
  },

  /** Deletes the given products (or handles) from one list; returns what was really removed. */
  async deleteItems(
    db: Db,
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
      return withDefaultVariants(db, shopId, await deleteOneQuery(db, { shopId, owner, listId, productId: productIds[0] as string }))
    }
    const removed = await deleteReturning(db, shopId, owner, listId)
      .where((eb) => {
        const ors = []
        if (productIds.length) ors.push(eb('product_id', 'in', productIds))
        if (handles.length) ors.push(eb('handle', 'in', handles))
        return eb.or(ors)
      })
      .returning(['list_id', 'product_id', 'variant_id'])
      .execute()
    return withDefaultVariants(db, shopId, removed)
  },

  /** Removes the products from every list of the owner; returns one row per removed item. */
  async deleteProductsEverywhere(db: Db, shopId: string, owner: Owner, productIds: string[]): Promise<RemovedItem[]> {
    if (productIds.length === 0) return []
    const rows = await items(db, shopId, owner)
      .where('i.product_id', 'in', productIds)
      .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
      .select((eb) => ['i.list_id', 'i.product_id', eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id')])
      .execute()
    await db.deleteFrom('wishlist_items').where(ownedBy(shopId, owner)).where('product_id', 'in', productIds).execute()
    return rows
  },

  /** The list's item with this handle (the first by product id when several share it). */
  async productIdByHandle(db: Db, shopId: string, owner: Owner, listId: string, handle: string): Promise<string | undefined> {
    const row = await items(db, shopId, owner)
      .where('i.list_id', '=', listId)
      .where('i.handle', '=', handle)
      .select('i.product_id')
      .orderBy('i.product_id')
      .limit(1)
      .executeTakeFirst()
    return row?.product_id
  },

  /** The owner's items of these products in every list (its variant the catalog default when none was stored). */
  async itemsOfProducts(db: Db, shopId: string, owner: Owner, productIds: string[]) {
    if (productIds.length === 0) return []
    return items(db, shopId, owner)
      .where('i.product_id', 'in', productIds)
      .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
      .select((eb) => [
        'i.list_id',
        'i.product_id',
        eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'),
        'i.added_at',
        'i.purchased_at',
      ])
      .orderBy('i.list_id')
      .execute()
  },

  /**
   * Marks the owner's items of these products (every list) bought at `at`; returns each
   * item as it was before (its variant the catalog default when none was stored).
   */
  async markPurchased(db: Db, shopId: string, owner: Owner, productIds: string[], at: number) {
    if (productIds.length === 0) return []
    const rows = await items(db, shopId, owner)
      .where('i.product_id', 'in', productIds)
      .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
      .select((eb) => [
        'i.list_id',
        'i.product_id',
        eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'),
        'i.added_at',
        'i.purchased_at',
      ])
      .orderBy('i.list_id')
      .execute()
    if (rows.length > 0) {
      await db
        .updateTable('wishlist_items')
        .set({ purchased_at: at })
        .where(ownedBy(shopId, owner))
        .where('product_id', 'in', productIds)
        .execute()
    }
    return rows
  },

  async deleteList(db: Db, shopId: string, owner: Owner, listId: string): Promise<string[]> {
    const removed = await items(db, shopId, owner).where('i.list_id', '=', listId).select('i.product_id').execute()
    for (const table of ['wishlist_items', 'share_links'] as const) {
      await db.deleteFrom(table).where(ownedBy(shopId, owner)).where('list_id', '=', listId).execute()
    }
    await db.deleteFrom('wishlist_lists').where(ownedBy(shopId, owner)).where('id', '=', listId).execute()
    return removed.map((r) => r.product_id)
  },

  async moveItem(db: Db, shopId: string, owner: Owner, productId: string, from: string, to: string): Promise<void> {
    await db
      .updateTable('wishlist_items')
      .set({ list_id: to })
      .where(ownedBy(shopId, owner))
      .where('list_id', '=', from)
      .where('product_id', '=', productId)
      .execute()
  },

  // ---- lists ----

  async lists(db: Db, shopId: string, owner: Owner) {
    return db
      .selectFrom('wishlist_lists')
      .select(['id', 'name', 'name_key', 'created_at', 'updated_at'])
      .where(ownedBy(shopId, owner))
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute()
  },

  async list(db: Db, shopId: string, owner: Owner, listId: string) {
    return db
      .selectFrom('wishlist_lists')
      .select(['id', 'name', 'name_key', 'created_at', 'updated_at'])
      .where(ownedBy(shopId, owner))
      .where('id', '=', listId)
      .executeTakeFirst()
  },

  async insertList(
    db: Db,
    shopId: string,
    owner: Owner,
    row: { id: string; name: string; name_key: string; created_at: number; updated_at: number },
  ): Promise<void> {
    await db
      .insertInto('wishlist_lists')
      .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, ...row })
      .execute()
  },

  async renameList(db: Db, shopId: string, owner: Owner, listId: string, name: string, nameKey: string, at: number): Promise<void> {
    await db
      .updateTable('wishlist_lists')
      .set({ name, name_key: nameKey, updated_at: at })
      .where(ownedBy(shopId, owner))
      .where('id', '=', listId)
      .execute()
  },

  // ---- share links ----

  async activeShareLink(db: Db, shopId: string, owner: Owner, listId: string, at: number) {
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

  async insertShareLink(
    db: Db,
    shopId: string,
    owner: Owner,
    row: { token: string; list_id: string; created_at: number; expires_at: number },
  ): Promise<void> {
    await db
      .insertInto('share_links')
      .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, ...row, revoked_at: null })
      .execute()
  },

  async revokeShareLinks(db: Db, shopId: string, owner: Owner, listId: string, at: number): Promise<number> {
    const res = await db
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
  async shareLinkByToken(db: Db, token: string): Promise<ShareLinkRow | undefined> {
    return db.selectFrom('share_links').selectAll().where('token', '=', token).executeTakeFirst()
  },

  // ---- holders of a product ----

  /** Whether any list holds the product: one index probe, whatever the number of holders. */
  async isHeld(db: Db, shopId: string, productId: string): Promise<boolean> {
    return (
      (await db
        .selectFrom('wishlist_items')
        .select('owner_id')
        .where('shop_id', '=', shopId)
        .where('product_id', '=', productId)
        .limit(1)
        .executeTakeFirst()) !== undefined
    )
  },

  /** Distinct owners holding a product (any list), and the first `limit` customer ids of them. */
  async holders(db: Db, shopId: string, productId: string, limit: number) {
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
