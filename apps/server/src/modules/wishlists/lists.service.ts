/**
 * Multi-wishlist (docs/api.md, "Wishlists", lists): the implicit default list, named lists, move.
 * The default list has a row only once renamed; its name is "My Wishlist" until then.
 */
import type { Static } from 'typebox'
import { statementsAreRoundTrips } from '../../db/dialect.js'
import type { Db } from '../../db/types.js'
import { AppError, notFound, invalid } from '../../lib/errors.js'
import { newId } from '../../lib/ids.js'
import { platformIdOf } from '../../lib/platform-ids.js'
import { codePointLength, comparisonKey } from '../../lib/text.js'
import { isoMillis, now } from '../../lib/time.js'
import type { Owner, RequestContext } from '../auth/auth.types.js'
import { recordFacts } from '../analytics/facts.js'
import { multiWishlistActive, requireMultiWishlist } from '../shops/plans.js'
import { assertListExists } from './list-scope.js'
import { wishlistsRepo } from './wishlists.repo.js'
import { addFacts, assertWritten } from './wishlists.service.js'
import { DEFAULT_LIST_ID, DEFAULT_LIST_NAME, LIST_LIMIT, LIST_NAME_MAX_CHARS, type ListRecord } from './wishlists.schemas.js'

type ListRecordView = Static<typeof ListRecord>

/**
 * Trimmed, 1..LIST_NAME_MAX_CHARS characters (code points), not only format characters; returns the name
 * and its uniqueness key (`comparisonKey`: NFKC, format characters removed, case-folded).
 */
export function listName(raw: string): { name: string; key: string } {
  const name = raw.trim()
  const length = codePointLength(name)
  if (length < 1 || length > LIST_NAME_MAX_CHARS) {
    throw invalid(
      [{ path: 'body.name', message: `must be 1 to ${LIST_NAME_MAX_CHARS} characters after trimming` }],
      `name must be 1 to ${LIST_NAME_MAX_CHARS} characters after trimming`,
    )
  }
  const key = comparisonKey(name)
  if (key === '') {
    throw invalid(
      [{ path: 'body.name', message: 'must contain a character other than format characters (such as U+200B)' }],
      'name must contain a visible character',
    )
  }
  return { name, key }
}

/** The key of the default list's name while it has no row (it was never renamed). */
export const DEFAULT_LIST_KEY = comparisonKey(DEFAULT_LIST_NAME)

const nameTaken = (name: string) => new AppError('LIST_NAME_TAKEN', `A wishlist named "${name}" already exists`)

export function createListsService(deps: { db: Db }) {
  const { db } = deps

  return {
    /** Default first, then by creation. With multi-wishlist inactive, the default list alone. */
    async lists(ctx: RequestContext, owner: Owner): Promise<ListRecordView[]> {
      const shopId = ctx.shop.id
      const [ownerRow, rows, counts] = await Promise.all([
        wishlistsRepo.getOwner(db, shopId, owner),
        wishlistsRepo.lists(db, shopId, owner),
        wishlistsRepo.countByList(db, shopId, owner),
      ])
      const defaultRow = rows.find((r) => r.id === DEFAULT_LIST_ID)
      // An owner who never wrote has the default list the shop gives everyone: as old as the shop, the same on every read.
      const createdAt = ownerRow?.created_at ?? defaultRow?.created_at ?? ctx.shop.createdAt
      const out: ListRecordView[] = [
        {
          wishlistId: DEFAULT_LIST_ID,
          name: defaultRow?.name ?? DEFAULT_LIST_NAME,
          itemCount: counts.get(DEFAULT_LIST_ID) ?? 0,
          createdAt: isoMillis(createdAt),
          updatedAt: isoMillis(defaultRow?.updated_at ?? createdAt),
        },
      ]
      if (!multiWishlistActive(ctx.shop)) return out
      for (const r of rows) {
        if (r.id === DEFAULT_LIST_ID) continue
        out.push({
          wishlistId: r.id,
          name: r.name,
          itemCount: counts.get(r.id) ?? 0,
          createdAt: isoMillis(r.created_at),
          updatedAt: isoMillis(r.updated_at),
        })
      }
      return out
    },

    async create(ctx: RequestContext, owner: Owner, rawName: string): Promise<ListRecordView> {
      requireMultiWishlist(ctx.shop)
      const { name, key } = listName(rawName)
      const shopId = ctx.shop.id
      return db.transaction().execute(async (trx) => {
        const at = now()
        await wishlistsRepo.ensureOwner(trx, shopId, owner, at)
        const rows = await wishlistsRepo.lists(trx, shopId, owner)
        const named = rows.filter((r) => r.id !== DEFAULT_LIST_ID)
        if (named.length + 1 >= LIST_LIMIT) {
          throw new AppError('WISHLIST_LIMIT', `A customer may have at most ${LIST_LIMIT} wishlists`, { limit: LIST_LIMIT })
        }
        const defaultKey = rows.find((r) => r.id === DEFAULT_LIST_ID)?.name_key ?? DEFAULT_LIST_KEY
        if (key === defaultKey || named.some((r) => r.name_key === key)) throw nameTaken(name)
        const id = newId('wl')
        // Lists are shown in creation order (created_at, then the random id): two created in
        // the same millisecond would come back in either order, so a new list is stamped at
        // least a millisecond after the owner's latest.
        const created = named.reduce((latest, r) => Math.max(latest, r.created_at + 1), at)
        await wishlistsRepo.insertList(trx, shopId, owner, { id, name, name_key: key, created_at: created, updated_at: created })
        return { wishlistId: id, name, itemCount: 0, createdAt: isoMillis(created), updatedAt: isoMillis(created) }
      })
    },

    async rename(ctx: RequestContext, owner: Owner, listId: string, rawName: string): Promise<void> {
      requireMultiWishlist(ctx.shop)
      const { name, key } = listName(rawName)
      const shopId = ctx.shop.id
      await db.transaction().execute(async (trx) => {
        const at = now()
        const ownerRow =
          listId === DEFAULT_LIST_ID
            ? await wishlistsRepo.ensureOwner(trx, shopId, owner, at)
            : await wishlistsRepo.lockOwner(trx, shopId, owner)
        if (!ownerRow) throw notFound('Wishlist')
        const rows = await wishlistsRepo.lists(trx, shopId, owner)
        const target = rows.find((r) => r.id === listId)
        if (!target && listId !== DEFAULT_LIST_ID) throw notFound('Wishlist')
        const otherKeys = rows.filter((r) => r.id !== listId).map((r) => r.name_key)
        if (listId !== DEFAULT_LIST_ID && !rows.some((r) => r.id === DEFAULT_LIST_ID)) otherKeys.push(DEFAULT_LIST_KEY)
        if (otherKeys.includes(key)) throw nameTaken(name)
        if (target) await wishlistsRepo.renameList(trx, shopId, owner, listId, name, key, at)
        else
          await wishlistsRepo.insertList(trx, shopId, owner, {
            id: DEFAULT_LIST_ID,
            name,
            name_key: key,
            created_at: ownerRow.created_at,
            updated_at: at,
          })
      })
    },

    /** Deletes a named list and its items (analytics removes, no webhooks) and its share links. */
    async remove(ctx: RequestContext, owner: Owner, listId: string): Promise<void> {
      requireMultiWishlist(ctx.shop)
      if (listId === DEFAULT_LIST_ID) throw new AppError('DEFAULT_LIST_PROTECTED', 'The default wishlist cannot be deleted')
      const shopId = ctx.shop.id
      await db.transaction().execute(async (trx) => {
        const ownerRow = await wishlistsRepo.lockOwner(trx, shopId, owner)
        if (!ownerRow || !(await wishlistsRepo.list(trx, shopId, owner, listId))) throw notFound('Wishlist')
        const at = now()
        const removed = await wishlistsRepo.deleteList(trx, shopId, owner, listId)
        await wishlistsRepo.adjustItemCount(trx, shopId, owner, -removed.length, at)
        await recordFacts(trx, shopId, addFacts('remove', owner, removed, at))
      })
    },

    /** Keeps addedAt, variant, handle and metadata; if `to` holds the product already, the source item is just removed. Emits nothing. */
    async move(ctx: RequestContext, owner: Owner, body: { product_id: string; from: string; to: string }): Promise<void> {
      requireMultiWishlist(ctx.shop)
      const productId = platformIdOf(body.product_id, 'Product', 'body.product_id')
      if (body.from === body.to) throw new AppError('SAME_LIST', '"from" and "to" are the same wishlist')
      const shopId = ctx.shop.id
      const notInList = `Product ${productId} is not in wishlist ${body.from}`
      if (statementsAreRoundTrips(db)) {
        assertWritten(await wishlistsRepo.moveAtOnce(db, shopId, owner, productId, body.from, body.to, now()), notInList)
        return
      }
      await db.transaction().execute(async (trx) => {
        const ownerRow = await wishlistsRepo.lockOwner(trx, shopId, owner)
        await assertListExists(trx, shopId, owner, body.from)
        await assertListExists(trx, shopId, owner, body.to)
        const item = ownerRow && (await wishlistsRepo.one(trx, shopId, owner, body.from, productId))
        if (!item) throw new AppError('ITEM_NOT_IN_LIST', notInList)
        if (await wishlistsRepo.one(trx, shopId, owner, body.to, productId)) {
          await wishlistsRepo.deleteItems(trx, shopId, owner, body.from, { productIds: [productId] })
          await wishlistsRepo.adjustItemCount(trx, shopId, owner, -1, now())
        } else {
          await wishlistsRepo.moveItem(trx, shopId, owner, productId, body.from, body.to)
        }
      })
    },
  }
}

export type ListsService = ReturnType<typeof createListsService>
