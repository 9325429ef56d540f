/**
 * Which list a request acts on (docs/api.md, "Wishlists", lists): `wishlist_id` omitted or `default` works on
 * every plan; any other id needs multi-wishlist (403 PLAN_UPGRADE_REQUIRED below growth,
 * FEATURE_DISABLED with the setting off) and must name one of the owner's lists (404).
 */
import type { Db } from '../../db/types.js'
import { notFound } from '../../lib/errors.js'
import type { Owner } from '../auth/auth.types.js'
import { requireMultiWishlist } from '../shops/plans.js'
import type { Shop } from '../shops/shops.types.js'
import { wishlistsRepo } from './wishlists.repo.js'
import { DEFAULT_LIST_ID } from './wishlists.schemas.js'

export function resolveListId(shop: Shop, raw: string | undefined): string {
  if (raw === undefined || raw === DEFAULT_LIST_ID) return DEFAULT_LIST_ID
  requireMultiWishlist(shop)
  return raw
}

/** The default list exists for every owner without a row; any other must have one. */
export async function assertListExists(db: Db, shopId: string, owner: Owner, listId: string): Promise<void> {
  if (listId === DEFAULT_LIST_ID) return
  if (!(await wishlistsRepo.list(db, shopId, owner, listId))) throw notFound('Wishlist')
}
