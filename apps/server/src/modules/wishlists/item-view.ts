/** Wishlist items as the API shows them, and the webhook `data` that names their owner. */
import type { Static } from 'typebox'
import { isoMillis } from '../../lib/time.js'
import type { Owner } from '../auth/auth.types.js'
import type { ItemRow } from './wishlists.repo.js'
import type { WishlistItem } from './wishlists.schemas.js'

export type ItemView = Static<typeof WishlistItem>

export function itemView(row: ItemRow): ItemView {
  const view: ItemView = {
    productId: row.product_id,
    variantId: row.variant_id,
    addedAt: isoMillis(row.added_at),
    quantity: row.quantity,
    note: row.note,
    priority: row.priority,
    purchasedAt: row.purchased_at === null ? null : isoMillis(Number(row.purchased_at)),
  }
  if (row.handle !== null) view.handle = row.handle
  if (row.metadata !== null) view.metadata = JSON.parse(row.metadata) as Record<string, unknown>
  return view
}

/**
 * Who an event is about. The events name `customerId`; guests are not customers, so their events
 * carry `customerId: null` and `guestId` (a receiver can tell them apart without guessing).
 */
export function ownerData(owner: Owner): { customerId: string | null; guestId?: string } {
  return owner.type === 'customer' ? { customerId: owner.id } : { customerId: null, guestId: owner.id }
}
