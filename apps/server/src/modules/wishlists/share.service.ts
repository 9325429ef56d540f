/**
 * Share links (docs/api.md, "Wishlists", share links): one active read-only link per list, reused until it expires
 * or is revoked; a public read of the list as it is now.
 */
import { randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { primaryReads, type Reader, type Reads } from '../../db/replica.js'
import type { Db } from '../../db/types.js'
import { AppError, notFound } from '../../lib/errors.js'
import { DAY_MS, isoMillis, now } from '../../lib/time.js'
import type { Owner, RequestContext } from '../auth/auth.types.js'
import { recordFacts } from '../analytics/facts.js'
import { enqueueWebhookEvents } from '../events/outbox.js'
import { multiWishlistActive, planAtLeast, requirePlan } from '../shops/plans.js'
import type { ShopsService } from '../shops/shops.service.js'
import { itemView, ownerData } from './item-view.js'
import { assertListExists, resolveListId } from './list-scope.js'
import type { CacheableRead, CachedBodies } from './page-cache.js'
import { type ShareLinkRow, wishlistsRepo } from './wishlists.repo.js'
import { DEFAULT_LIST_ID, DEFAULT_LIST_NAME, type SharedView } from './wishlists.schemas.js'

/** An item as the storefront's own pages show it (the shared list, the shopper's list). */
export interface PageItem {
  productId: string
  variantId: string | null
  handle: string | null
  /** How many the shopper wants (1..99): what add to cart and add all post. */
  quantity: number
  /** The shopper's note (their own text), or null. */
  note: string | null
  /** An order of the list's owner bought it. */
  purchased: boolean
}

/** 192 random bits (the contract asks for at least 128), base64url: 32 characters. */
export const newShareToken = (): string => randomBytes(24).toString('base64url')

export const SHARED_PATH = '/v1/wishlists/shared/'

export function createShareService(deps: CachedBodies & { db: Db; reads?: Reads; shops: ShopsService; publicBaseUrl: string }) {
  const { db } = deps
  const reads = deps.reads ?? primaryReads(db)
  /**
   * The public reads may lag (the read replica, db/replica.ts). The change stamp follows the
   * primary, so a replica's read is never confirmed by it (a body or link confirmed at a stamp
   * while the replica lagged would outlive the lag): each is checked against the version.
   */
  const sharedReader = (): Reader & { bodies: CachedBodies } => {
    const r = reads.reader()
    return { ...r, bodies: r.replica ? { pageCache: deps.pageCache } : deps }
  }
  const defaultBase = `${deps.publicBaseUrl}${SHARED_PATH}`
  /**
   * Links read by token, each with the change stamp it was read at (page-cache.ts): while the
   * stamp has not moved nothing was written, this link included (on PostgreSQL a change to
   * `share_links` notifies every instance, migration 0021), so a shared read answered from
   * the page cache needs no query at all. Unknown tokens are not kept.
   */
  const links = new LRUCache<string, { link: ShareLinkRow; stamp: string }>({ max: 10_000 })
  async function linkByToken(token: string, r: { db: Db; bodies: CachedBodies }): Promise<ShareLinkRow | undefined> {
    const stamp = r.bodies.changeStamp?.()
    const kept = links.get(token)
    if (stamp !== undefined && kept?.stamp === stamp) return kept.link
    const link = await wishlistsRepo.shareLinkByToken(r.db, token)
    if (link !== undefined && stamp !== undefined) links.set(token, { link, stamp })
    return link
  }
  const shareUrlOf = (ctx: RequestContext) => (token: string) => `${ctx.shareBaseUrl ?? defaultBase}${token}`

  return {
    /** The list's active link, or a new one (TTL: the shop's share_link_ttl_days) that emits `wishlist.shared`. */
    async link(
      ctx: RequestContext,
      owner: Owner,
      wishlistId: string | undefined,
    ): Promise<{ token: string; share_url: string; expires_at: string }> {
      const shopId = ctx.shop.id
      const listId = resolveListId(ctx.shop, wishlistId)
      const shareUrl = shareUrlOf(ctx)
      return db.transaction().execute(async (trx) => {
        const at = now()
        // Creating a link is a write: the owner row is its lock, so concurrent calls share one link.
        await wishlistsRepo.ensureOwner(trx, shopId, owner, at)
        await assertListExists(trx, shopId, owner, listId)
        const active = await wishlistsRepo.activeShareLink(trx, shopId, owner, listId, at)
        if (active) return { token: active.token, share_url: shareUrl(active.token), expires_at: isoMillis(active.expires_at) }
        const token = newShareToken()
        const expiresAt = at + ctx.shop.settings.share_link_ttl_days * DAY_MS
        await wishlistsRepo.insertShareLink(trx, shopId, owner, { token, list_id: listId, created_at: at, expires_at: expiresAt })
        await enqueueWebhookEvents(trx, shopId, [
          {
            event: 'wishlist.shared',
            data: { ...ownerData(owner), wishlistId: listId, shareUrl: shareUrl(token), expiresAt: isoMillis(expiresAt) },
            occurredAt: at,
          },
        ])
        // A share is about the list, not a product: the fact carries an empty product id.
        await recordFacts(trx, shopId, [{ type: 'share', ownerType: owner.type, ownerId: owner.id, productId: '', occurredAt: at }])
        return { token, share_url: shareUrl(token), expires_at: isoMillis(expiresAt) }
      })
    },

    /** Revokes the list's active link; `revoked: false` when there was none. */
    async revoke(ctx: RequestContext, owner: Owner, wishlistId: string | undefined): Promise<{ revoked: boolean }> {
      const shopId = ctx.shop.id
      const listId = resolveListId(ctx.shop, wishlistId)
      return db.transaction().execute(async (trx) => {
        const ownerRow = await wishlistsRepo.lockOwner(trx, shopId, owner)
        await assertListExists(trx, shopId, owner, listId)
        if (!ownerRow) return { revoked: false }
        return { revoked: (await wishlistsRepo.revokeShareLinks(trx, shopId, owner, listId, now())) > 0 }
      })
    },

    /**
     * The list's active link without making one (the wishlist page shows it after its share
     * form); null when it has none.
     */
    async activeLink(ctx: RequestContext, owner: Owner, wishlistId: string | undefined): Promise<{ share_url: string } | null> {
      const listId = resolveListId(ctx.shop, wishlistId)
      const active = await wishlistsRepo.activeShareLink(db, ctx.shop.id, owner, listId, now())
      return active ? { share_url: shareUrlOf(ctx)(active.token) } : null
    },

    /**
     * A shared list of one shop as the app proxy's page shows it (items with their handles,
     * quantities, notes and whether they were bought; `name` null for the default list until
     * it is renamed, which the page names in its language): `unknown` for what `readBody`
     * answers 404 (and a link of another shop, or below the starter plan), `expired` for its 410.
     */
    async sharedPage(
      shopId: string,
      token: string,
    ): Promise<
      | { status: 'unknown' | 'expired' }
      | {
          status: 'ok'
          name: string | null
          expiresAt: number
          items: PageItem[]
        }
    > {
      const { db } = reads.reader()
      const link = await wishlistsRepo.shareLinkByToken(db, token)
      if (!link || link.revoked_at !== null || link.shop_id !== shopId) return { status: 'unknown' }
      const shop = await deps.shops.get(shopId)
      if (!shop || !planAtLeast(shop.plan, 'starter')) return { status: 'unknown' }
      if (link.expires_at <= now()) return { status: 'expired' }
      if (link.list_id !== DEFAULT_LIST_ID && !multiWishlistActive(shop)) return { status: 'unknown' }
      const owner: Owner = { type: link.owner_type, id: link.owner_id }
      const listRow = await wishlistsRepo.list(db, shopId, owner, link.list_id)
      if (link.list_id !== DEFAULT_LIST_ID && !listRow) return { status: 'unknown' }
      const rows = await wishlistsRepo.all(db, shopId, owner, link.list_id)
      return {
        status: 'ok',
        name: listRow?.name ?? null,
        expiresAt: link.expires_at,
        items: rows.map((r) => {
          const v = itemView(r)
          return {
            productId: v.productId,
            variantId: v.variantId,
            handle: r.handle,
            quantity: v.quantity,
            note: v.note,
            purchased: v.purchasedAt !== null,
          }
        }),
      }
    },

    /**
     * Public: unknown or revoked → 404, past expires_at → 410; items carry productId,
     * variantId, addedAt, quantity, note, priority and purchasedAt only. The link is checked on every read; the body comes from the
     * page cache (page-cache.ts) while the owner's version is unchanged: a shared registry
     * is read by many people between its owner's edits.
     */
    async read(token: string): Promise<CacheableRead<SharedView>> {
      const r = sharedReader()
      const { db } = r
      const link = await linkByToken(token, r)
      if (!link || link.revoked_at !== null) throw notFound('Share link')
      const shop = await deps.shops.get(link.shop_id)
      if (!shop) throw notFound('Share link')
      requirePlan(shop, 'starter')
      if (link.expires_at <= now())
        throw new AppError('SHARE_EXPIRED', 'This share link has expired', { expired_at: isoMillis(link.expires_at) })
      // A named list is hidden (not shared) while multi-wishlist is inactive.
      if (link.list_id !== DEFAULT_LIST_ID && !multiWishlistActive(shop)) throw notFound('Share link')
      const owner: Owner = { type: link.owner_type, id: link.owner_id }
      return {
        bodies: r.bodies,
        key: `share\u0000${token}`,
        version: () => wishlistsRepo.ownerVersion(db, shop.id, owner),
        load: async () => {
          const listRow = await wishlistsRepo.list(db, shop.id, owner, link.list_id)
          if (link.list_id !== DEFAULT_LIST_ID && !listRow) throw notFound('Share link')
          const rows = await wishlistsRepo.all(db, shop.id, owner, link.list_id)
          const view: SharedView = {
            name: listRow?.name ?? DEFAULT_LIST_NAME,
            items: rows.map((r) => {
              const v = itemView(r)
              return {
                productId: v.productId,
                variantId: v.variantId,
                addedAt: v.addedAt,
                quantity: v.quantity,
                note: v.note,
                priority: v.priority,
                purchasedAt: v.purchasedAt,
              }
            }),
            count: rows.length,
            created_at: isoMillis(link.created_at),
            expires_at: isoMillis(link.expires_at),
          }
          return view
        },
      }
    },
  }
}

export type ShareService = ReturnType<typeof createShareService>
