/**
 * Wishlist items (docs/api.md, "Wishlists"), and what other modules call (remove-on-purchase,
 * holders). Every write is one transaction that first locks the owner row (created on the
 * first write, never on a read), so `item_count` stays exact and concurrent adds cannot pass
 * the limit; webhook events and analytics facts go in the same transaction.
 */
import type { Transaction } from 'kysely'
import type { Static } from 'typebox'
import { statementsAreRoundTrips } from '../../db/dialect.js'
import type { Db } from '../../db/types.js'
import type { Database } from '../../db/schema.js'
import { AppError, invalid, notFound } from '../../lib/errors.js'
import { newOrderedId } from '../../lib/ids.js'
import { normalizePlatformId, platformIdOf } from '../../lib/platform-ids.js'
import { codePointLength, deeperThan } from '../../lib/text.js'
import { isoMillis, now, parseDateTime } from '../../lib/time.js'
import type { Owner, RequestContext } from '../auth/auth.types.js'
import { type AnalyticsFact, recordFacts } from '../analytics/facts.js'
import { enqueueWebhookEvents, type OutboxEvent } from '../events/outbox.js'
import { type ItemView, itemView, ownerData } from './item-view.js'
import { itemFieldsOf } from './item-fields.js'
import { assertListExists, resolveListId } from './list-scope.js'
import type { CacheableRead, CachedBodies } from './page-cache.js'
import { type GivenFields, type ItemRow, type NewItem, type RemovedItem, type WriteStatus, wishlistsRepo } from './wishlists.repo.js'
import {
  type AddItemBody,
  BULK_DELETE_MAX,
  type BulkDeleteBody,
  ITEM_LIMIT,
  type ItemsQuery as ItemsQuerySchema,
  type MergeBody,
  METADATA_MAX_CHARS,
  type PatchItemBody,
} from './wishlists.schemas.js'

export interface WishlistsDeps extends CachedBodies {
  db: Db
}

type ItemsQuery = Static<typeof ItemsQuerySchema>

export const itemLimitError = () =>
  new AppError('ITEM_LIMIT', `A wishlist owner may hold at most ${ITEM_LIMIT} items across all lists`, { limit: ITEM_LIMIT })

/** Levels of objects and arrays `metadata` may nest (the metadata object itself is the first). */
export const METADATA_MAX_DEPTH = 8

/** Serialized metadata must fit in 200 characters and nest at most 8 levels; `path` and `index` locate it in the request. */
export function serializeMetadata(metadata: object | undefined, path: string, index?: number): string | null {
  if (metadata === undefined) return null
  if (deeperThan(metadata, METADATA_MAX_DEPTH)) {
    throw invalid([
      { path, message: `must nest at most ${METADATA_MAX_DEPTH} levels of objects and arrays`, ...(index === undefined ? {} : { index }) },
    ])
  }
  const text = JSON.stringify(metadata)
  // UTF-16 units are never fewer than code points: count the latter only when it can matter.
  if (text.length > METADATA_MAX_CHARS && codePointLength(text) > METADATA_MAX_CHARS) {
    throw invalid([
      { path, message: `must be at most ${METADATA_MAX_CHARS} characters when serialized`, ...(index === undefined ? {} : { index }) },
    ])
  }
  return text
}

/**
 * An item's `addedAt` from a client's `added_at`: now when none is given, and never later
 * than now (a clock ahead of ours must not pin an item to the top of "newest first"). A leap
 * second is the last millisecond of its minute.
 */
export const addedAtOf = (raw: string | undefined, at: number): number => (raw === undefined ? at : Math.min(parseDateTime(raw), at))

export const addFacts = (type: AnalyticsFact['type'], owner: Owner, productIds: string[], at: number): AnalyticsFact[] =>
  productIds.map((productId) => ({ type, ownerType: owner.type, ownerId: owner.id, productId, occurredAt: at }))

/**
 * Throws the refusal a one-statement write answered (wishlists.repo.ts), as the API's error;
 * `message` says what was not found (NOT_FOUND, ITEM_NOT_IN_LIST).
 */
export function assertWritten(status: WriteStatus, message = 'Not found'): void {
  switch (status) {
    case 'ok':
      return
    case 'list_not_found':
      throw notFound('Wishlist')
    case 'item_limit':
      throw itemLimitError()
    case 'not_found':
      throw new AppError('NOT_FOUND', message)
    case 'item_not_in_list':
      throw new AppError('ITEM_NOT_IN_LIST', message)
  }
}

interface ItemsPage {
  items: ItemView[]
  count: number
  total: number
  has_more: boolean
}

const pageOf = (rows: ItemRow[], total: number, offset: number): ItemsPage => ({
  items: rows.map(itemView),
  count: rows.length,
  total,
  has_more: offset + rows.length < total,
})

export function createWishlistsService(deps: WishlistsDeps) {
  const { db } = deps
  // PostgreSQL: a write is one call of its function, an uncached page one statement.
  const atOnce = statementsAreRoundTrips(db)

  async function getItems(ctx: RequestContext, owner: Owner, query: ItemsQuery): Promise<ItemsPage> {
    const shopId = ctx.shop.id
    const listId = resolveListId(ctx.shop, query.wishlist_id)
    if (atOnce) return (await versionedItems(shopId, owner, listId, query, undefined)).data as ItemsPage
    await assertListExists(db, shopId, owner, listId)
    const [rows, total] = await Promise.all([
      wishlistsRepo.page(db, shopId, owner, listId, query.limit, query.offset),
      wishlistsRepo.countItems(db, shopId, owner, listId),
    ])
    return pageOf(rows, total, query.offset)
  }

  /** The page with the owner's version in one statement; no data when the version is `known`. */
  async function versionedItems(
    shopId: string,
    owner: Owner,
    listId: string,
    query: ItemsQuery,
    known: string | undefined,
  ): Promise<{ version: string; data?: ItemsPage }> {
    const { version, page } = await wishlistsRepo.versionedPage(db, shopId, owner, listId, query.limit, query.offset, known)
    if (page === undefined) return { version }
    if (page === null) throw notFound('Wishlist')
    return { version, data: pageOf(page.rows, page.total, query.offset) }
  }

  /**
   * The bookkeeping of removed items, in the removing transaction: count, events, facts.
   * With `countList`, answers that list's count after the removal (from the count's update).
   */
  async function recordRemovals(
    trx: Transaction<Database>,
    shopId: string,
    owner: Owner,
    removed: RemovedItem[],
    at: number,
    extra: Record<string, unknown> = {},
    countList?: string,
  ): Promise<number | null> {
    let count: number | null = null
    if (countList === undefined) await wishlistsRepo.adjustItemCount(trx, shopId, owner, -removed.length, at)
    else count = await wishlistsRepo.adjustItemCountAndCount(trx, shopId, owner, -removed.length, at, countList)
    await enqueueWebhookEvents(
      trx,
      shopId,
      removed.map((r) => ({
        event: 'wishlist.item.removed',
        data: { ...ownerData(owner), productId: r.product_id, variantId: r.variant_id, wishlistId: r.list_id, ...extra },
        occurredAt: at,
      })),
    )
    await recordFacts(
      trx,
      shopId,
      addFacts(
        'remove',
        owner,
        removed.map((r) => r.product_id),
        at,
      ),
    )
    return count
  }

  /** Removes from one list: one statement on PostgreSQL, a transaction on SQLite. */
  async function removeMatching(
    ctx: RequestContext,
    owner: Owner,
    listId: string,
    match: { productIds?: string[]; handles?: string[] },
  ): Promise<{ removed: number; count: number }> {
    if (!atOnce) return db.transaction().execute((trx) => removeFromList(trx, ctx, owner, listId, match))
    const res = await wishlistsRepo.removeAtOnce(
      db,
      ctx.shop.id,
      owner,
      listId,
      { productIds: match.productIds ?? [], handles: match.handles ?? [] },
      now(),
      newOrderedId('msg'),
    )
    assertWritten(res.status)
    return { removed: res.removed, count: res.n }
  }

  async function removeFromList(
    trx: Transaction<Database>,
    ctx: RequestContext,
    owner: Owner,
    listId: string,
    match: { productIds?: string[]; handles?: string[] },
  ): Promise<{ removed: number; count: number }> {
    const shopId = ctx.shop.id
    const ownerRow = await wishlistsRepo.lockOwner(trx, shopId, owner)
    await assertListExists(trx, shopId, owner, listId)
    if (!ownerRow) return { removed: 0, count: 0 }
    const at = now()
    const removed = await wishlistsRepo.deleteItems(trx, shopId, owner, listId, match)
    const count = removed.length > 0 ? await recordRemovals(trx, shopId, owner, removed, at, {}, listId) : null
    return { removed: removed.length, count: count ?? (await wishlistsRepo.countItems(trx, shopId, owner, listId)) }
  }

  return {
    pageCacheStats: deps.pageCache?.stats ?? { hits: 0, misses: 0 },

    /**
     * The GET page as a read the page cache may answer while the owner's version is the one
     * it was built at (page-cache.ts). The version is read before the page, so a body is
     * never filed under a version newer than what it shows.
     */
    itemsRead(ctx: RequestContext, owner: Owner, query: ItemsQuery): CacheableRead<Awaited<ReturnType<typeof getItems>>> {
      return {
        bodies: deps,
        key: `page\u0000${ctx.shop.id}\u0000${owner.type}\u0000${owner.id}\u0000${resolveListId(ctx.shop, query.wishlist_id)}\u0000${query.limit}\u0000${query.offset}`,
        version: () => wishlistsRepo.ownerVersion(db, ctx.shop.id, owner),
        load: () => getItems(ctx, owner, query),
        ...(atOnce
          ? {
              versioned: (known: string | undefined) =>
                versionedItems(ctx.shop.id, owner, resolveListId(ctx.shop, query.wishlist_id), query, known),
            }
          : {}),
      }
    },

    /** A page of a list's items, newest first, without the page cache (the app proxy's wishlist page). */
    page: getItems,

    /** 201 (`created`) for a new item, 200 when present: `variantId`, `handle`, `metadata` updated where given, `addedAt` kept. */
    async addItem(
      ctx: RequestContext,
      owner: Owner,
      wishlistId: string | undefined,
      input: Static<typeof AddItemBody>,
    ): Promise<{ created: boolean; item: ItemView; count: number }> {
      const shopId = ctx.shop.id
      const listId = resolveListId(ctx.shop, wishlistId)
      const productId = platformIdOf(input.product_id, 'Product', 'body.product_id')
      const variantId = input.variant_id === undefined ? undefined : platformIdOf(input.variant_id, 'ProductVariant', 'body.variant_id')
      const metadata = serializeMetadata(input.metadata, 'body.metadata')
      const fields = itemFieldsOf(input, 'body')
      // What the request gives: an update of a present item sets these alone.
      const given: GivenFields = {
        ...(variantId === undefined ? {} : { variant_id: variantId }),
        ...(input.handle === undefined ? {} : { handle: input.handle }),
        ...(metadata === null ? {} : { metadata }),
        ...fields,
      }
      if (atOnce) {
        const row = await wishlistsRepo.addAtOnce(db, shopId, owner, {
          listId,
          productId,
          given,
          at: now(),
          limit: ITEM_LIMIT,
          eventId: newOrderedId('msg'),
        })
        assertWritten(row.status)
        return { created: row.created, item: itemView(row), count: row.n }
      }
      return db.transaction().execute(async (trx) => {
        const at = now()
        const ownerRow = await wishlistsRepo.ensureOwner(trx, shopId, owner, at)
        await assertListExists(trx, shopId, owner, listId)
        const fresh: NewItem = {
          list_id: listId,
          product_id: productId,
          variant_id: variantId ?? null,
          handle: input.handle ?? null,
          metadata,
          added_at: at,
          quantity: fields.quantity ?? 1,
          note: fields.note ?? null,
          priority: fields.priority ?? 'normal',
          purchased_at: null,
        }
        // Under the limit, the insert itself tells whether the list held the product already.
        const created = ownerRow.item_count < ITEM_LIMIT && (await wishlistsRepo.insertIfAbsent(trx, shopId, owner, fresh))
        if (!created) {
          if (ownerRow.item_count >= ITEM_LIMIT && !(await wishlistsRepo.one(trx, shopId, owner, listId, productId))) throw itemLimitError()
          await wishlistsRepo.updateItem(trx, shopId, owner, listId, productId, given)
        }
        // A new item with its variant given is exactly what was inserted; otherwise read it
        // back (kept fields, the catalog's default variant).
        const row = created && variantId !== undefined ? fresh : await wishlistsRepo.one(trx, shopId, owner, listId, productId)
        if (!row) throw new Error('item vanished inside its transaction')
        if (!created) return { created, item: itemView(row), count: await wishlistsRepo.countItems(trx, shopId, owner, listId) }
        const count = await wishlistsRepo.adjustItemCountAndCount(trx, shopId, owner, 1, at, listId)
        await enqueueWebhookEvents(trx, shopId, [
          {
            event: 'wishlist.item.added',
            data: { ...ownerData(owner), productId, variantId: row.variant_id, wishlistId: listId },
            occurredAt: at,
          },
        ])
        await recordFacts(trx, shopId, addFacts('add', owner, [productId], at))
        return { created, item: itemView(row), count }
      })
    },

    /** PATCH: the given fields of one item (404 when the list does not hold it); emits nothing. */
    async updateItem(
      ctx: RequestContext,
      owner: Owner,
      wishlistId: string | undefined,
      key: string,
      by: 'handle' | undefined,
      input: Static<typeof PatchItemBody>,
    ): Promise<{ item: ItemView }> {
      const shopId = ctx.shop.id
      const listId = resolveListId(ctx.shop, wishlistId)
      const keyedProduct = by === 'handle' ? undefined : platformIdOf(key, 'Product', 'params.productId')
      const variantId = input.variant_id === undefined ? undefined : platformIdOf(input.variant_id, 'ProductVariant', 'body.variant_id')
      const fields = itemFieldsOf(input, 'body')
      const missing = by === 'handle' ? 'No item with this handle in the list' : 'The list does not hold this product'
      const itemNotFound = () => new AppError('NOT_FOUND', missing)
      const given: GivenFields = { ...(variantId === undefined ? {} : { variant_id: variantId }), ...fields }
      if (atOnce) {
        const keyed = keyedProduct === undefined ? { productId: null, handle: key } : { productId: keyedProduct, handle: null }
        const row = await wishlistsRepo.patchAtOnce(db, shopId, owner, listId, keyed, given)
        assertWritten(row.status, missing)
        return { item: itemView(row) }
      }
      return db.transaction().execute(async (trx) => {
        // Reads never create the owner: one that never wrote holds nothing.
        if (!(await wishlistsRepo.lockOwner(trx, shopId, owner))) {
          await assertListExists(trx, shopId, owner, listId)
          throw itemNotFound()
        }
        await assertListExists(trx, shopId, owner, listId)
        const productId = keyedProduct ?? (await wishlistsRepo.productIdByHandle(trx, shopId, owner, listId, key))
        if (productId === undefined || !(await wishlistsRepo.one(trx, shopId, owner, listId, productId))) throw itemNotFound()
        await wishlistsRepo.updateItem(trx, shopId, owner, listId, productId, given)
        const row = await wishlistsRepo.one(trx, shopId, owner, listId, productId)
        if (!row) throw new Error('item vanished inside its transaction')
        return { item: itemView(row) }
      })
    },

    /** DELETE by product id, or by handle (`by=handle`); absent → removed: false. */
    async removeItem(ctx: RequestContext, owner: Owner, wishlistId: string | undefined, key: string, by: 'handle' | undefined) {
      const listId = resolveListId(ctx.shop, wishlistId)
      const match = by === 'handle' ? { handles: [key] } : { productIds: [platformIdOf(key, 'Product', 'params.productId')] }
      const res = await removeMatching(ctx, owner, listId, match)
      return { removed: res.removed > 0, count: res.count }
    },

    async bulkDelete(ctx: RequestContext, owner: Owner, wishlistId: string | undefined, body: Static<typeof BulkDeleteBody>) {
      const productIds = (body.product_ids ?? []).map((p, i) => platformIdOf(p, 'Product', `body.product_ids.${i}`))
      const handles = body.handles ?? []
      if (productIds.length === 0 && handles.length === 0) {
        throw invalid(
          [{ path: 'body', message: 'product_ids or handles must be a non-empty array' }],
          'Give product_ids or handles (a non-empty array)',
        )
      }
      if (productIds.length + handles.length > BULK_DELETE_MAX) {
        throw invalid(
          [{ path: 'body', message: `at most ${BULK_DELETE_MAX} entries combined` }],
          `At most ${BULK_DELETE_MAX} entries in product_ids and handles combined`,
        )
      }
      const listId = resolveListId(ctx.shop, wishlistId)
      const res = await removeMatching(ctx, owner, listId, { productIds, handles })
      return { removed_count: res.removed, count: res.count }
    },

    /**
     * Merge guest items (and the stored wishlist of `guest_id`, which is then deleted) into a
     * customer's list. Present products are kept as they are; new ones beyond the item
     * limit are skipped. The body's items come first, then the stored guest items, newest
     * first. A retried merge finds everything present and adds nothing.
     */
    async merge(ctx: RequestContext, owner: Owner, wishlistId: string | undefined, body: Static<typeof MergeBody>) {
      if (body.guest_items === undefined && body.guest_id === undefined) {
        throw invalid(
          [{ path: 'body.guest_items', message: 'is required unless guest_id is given' }],
          'body.guest_items is required (it may be empty when guest_id names the guest to merge)',
        )
      }
      const shopId = ctx.shop.id
      const listId = resolveListId(ctx.shop, wishlistId)
      return db.transaction().execute(async (trx) => {
        const at = now()
        const candidates = new Map<string, NewItem>()
        for (const [i, g] of (body.guest_items ?? []).entries()) {
          const productId = platformIdOf(g.product_id, 'Product', `body.guest_items.${i}.product_id`)
          const variantId =
            g.variant_id === undefined ? null : platformIdOf(g.variant_id, 'ProductVariant', `body.guest_items.${i}.variant_id`)
          const fields = itemFieldsOf(g, `body.guest_items.${i}`, i)
          const first = candidates.get(productId)
          if (first) {
            // The first occurrence wins, but a missing variant or handle never erases a known one.
            first.variant_id ??= variantId
            first.handle ??= g.handle ?? null
            continue
          }
          candidates.set(productId, {
            list_id: listId,
            product_id: productId,
            variant_id: variantId,
            handle: g.handle ?? null,
            metadata: null,
            added_at: addedAtOf(g.added_at, at),
            quantity: fields.quantity ?? 1,
            note: fields.note ?? null,
            priority: fields.priority ?? 'normal',
            purchased_at: null,
          })
        }
        const ownerRow = await wishlistsRepo.ensureOwner(trx, shopId, owner, at)
        await assertListExists(trx, shopId, owner, listId)
        // Lock order: the customer, then the guest (only merge holds two owner locks).
        const guest: Owner | undefined = body.guest_id === undefined ? undefined : { type: 'guest', id: body.guest_id }
        const guestRow = guest && (await wishlistsRepo.lockOwner(trx, shopId, guest))
        const guestItems = guest && guestRow ? await wishlistsRepo.allOfOwner(trx, shopId, guest) : []
        for (const g of guestItems) {
          const first = candidates.get(g.product_id)
          if (first) {
            first.variant_id ??= g.variant_id
            first.handle ??= g.handle
            continue
          }
          candidates.set(g.product_id, { ...g, list_id: listId })
        }
        const present = await wishlistsRepo.present(trx, shopId, owner, listId, [...candidates.keys()])
        const fresh = [...candidates.values()].filter((c) => !present.has(c.product_id))
        const room = Math.max(0, ITEM_LIMIT - ownerRow.item_count)
        const added = fresh.slice(0, room)
        if (added.length > 0) {
          await wishlistsRepo.insertItems(trx, shopId, owner, added)
          await wishlistsRepo.adjustItemCount(trx, shopId, owner, added.length, at)
          await recordFacts(
            trx,
            shopId,
            addFacts(
              'add',
              owner,
              added.map((a) => a.product_id),
              at,
            ),
          )
        }
        if (guest && guestRow) {
          // The guest's wishlist moves to the customer: its items leave the guest (analytics removes, no webhooks).
          await wishlistsRepo.deleteOwner(trx, shopId, guest)
          // After the delete: analytics decides from the remaining items whether the guest still holds a product.
          await recordFacts(
            trx,
            shopId,
            addFacts(
              'remove',
              guest,
              guestItems.map((g) => g.product_id),
              at,
            ),
          )
        }
        const rows = await wishlistsRepo.all(trx, shopId, owner, listId)
        if (added.length > 0) {
          const variants = new Map(rows.map((r) => [r.product_id, r.variant_id]))
          await enqueueWebhookEvents(
            trx,
            shopId,
            added.map((a): OutboxEvent => ({
              event: 'wishlist.item.added',
              data: { ...ownerData(owner), productId: a.product_id, variantId: variants.get(a.product_id) ?? null, wishlistId: listId },
              occurredAt: at,
            })),
          )
        }
        return { merged_count: added.length, skipped_count: fresh.length - added.length, items: rows.map(itemView), count: rows.length }
      })
    },

    /**
     * For `order.created` with remove_on_purchase: removes the products from every list of
     * the customer inside the caller's transaction. Records analytics removes and emits
     * `wishlist.item.removed` with `reason: "purchased"` (the item did leave the wishlist).
     * Returns the number of items removed.
     */
    async removeProductsForCustomer(trx: Transaction<Database>, shopId: string, customerId: string, productIds: string[]): Promise<number> {
      const owner: Owner = { type: 'customer', id: customerId }
      const ids = [...new Set(productIds.map((p) => normalizePlatformId(p, 'Product')).filter((p): p is string => p !== null))]
      if (ids.length === 0) return 0
      if (!(await wishlistsRepo.lockOwner(trx, shopId, owner))) return 0
      const at = now()
      const removed = await wishlistsRepo.deleteProductsEverywhere(trx, shopId, owner, ids)
      if (removed.length === 0) return 0
      await recordRemovals(trx, shopId, owner, removed, at, { reason: 'purchased' })
      return removed.length
    },

    /**
     * An order of the customer (events intake, in its transaction): the items of these
     * products in every list of the customer get `purchasedAt` = `at`, or are removed when
     * `remove` (the shop's remove_on_purchase; analytics removes and `wishlist.item.removed`
     * with `reason: "purchased"`); each emits `wishlist.item.purchased`. Returns the items as
     * they were before the order (attribution reads them).
     */
    async purchaseForCustomer(
      trx: Transaction<Database>,
      shopId: string,
      customerId: string,
      order: { orderId: string | null; at: number; quantities: Map<string, number>; remove: boolean },
    ): Promise<{ productId: string; addedAt: number; purchasedAt: number | null }[]> {
      const owner: Owner = { type: 'customer', id: customerId }
      const ids = [...order.quantities.keys()]
      if (ids.length === 0 || !(await wishlistsRepo.lockOwner(trx, shopId, owner))) return []
      const rows = order.remove
        ? await wishlistsRepo.itemsOfProducts(trx, shopId, owner, ids)
        : await wishlistsRepo.markPurchased(trx, shopId, owner, ids, order.at)
      if (rows.length === 0) return []
      const purchasedAt = isoMillis(order.at)
      await enqueueWebhookEvents(
        trx,
        shopId,
        rows.map((r) => ({
          event: 'wishlist.item.purchased',
          data: {
            customerId,
            wishlistId: r.list_id,
            productId: r.product_id,
            variantId: r.variant_id,
            orderId: order.orderId,
            quantity: order.quantities.get(r.product_id) ?? 1,
            purchasedAt,
          },
          occurredAt: order.at,
        })),
      )
      if (order.remove) {
        const removed = await wishlistsRepo.deleteProductsEverywhere(trx, shopId, owner, ids)
        await recordRemovals(trx, shopId, owner, removed, now(), { reason: 'purchased' })
      }
      return rows.map((r) => ({ productId: r.product_id, addedAt: r.added_at, purchasedAt: r.purchased_at }))
    },

    /**
     * Who holds a product now (any list): `wishlistCount` distinct owners (customers and
     * guests), the first `limit` customer ids in id order, and whether more exist.
     */
    holdersOfProduct(shopId: string, productId: string, opts: { limit?: number; db?: Db } = {}) {
      return wishlistsRepo.holders(opts.db ?? db, shopId, productId, opts.limit ?? 1_000)
    },
  }
}

export type WishlistsService = ReturnType<typeof createWishlistsService>
