import type { Db } from '../../src/db/types.js'
import type { AnalyticsFactType, OwnerType } from '../../src/db/schema.js'
import { type AnalyticsFact, applyPendingFacts, recordFacts } from '../../src/modules/analytics/facts.js'

export interface Step {
  type: AnalyticsFactType
  owner: { type: OwnerType; id: string }
  productId: string
  at: number
  /** For add/remove: the list whose wishlist_items row is inserted or deleted. */
  list?: string
}

/**
 * Plays the wishlist module: in one transaction, writes wishlist_items for each add/remove
 * step and records its fact through recordFacts (as the wishlist module does). The facts
 * stay pending until an analytics read or `applyPendingFacts` applies them.
 */
export async function applySteps(db: Db, shopId: string, steps: Step[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const facts: AnalyticsFact[] = []
    for (const s of steps) {
      const list = s.list ?? 'default'
      const key = { shop_id: shopId, owner_type: s.owner.type, owner_id: s.owner.id, list_id: list, product_id: s.productId }
      if (s.type === 'add') {
        await trx
          .insertInto('wishlist_items')
          .values({ ...key, variant_id: null, handle: null, metadata: null, added_at: s.at })
          .execute()
      } else if (s.type === 'remove') {
        await trx
          .deleteFrom('wishlist_items')
          .where('shop_id', '=', shopId)
          .where('owner_type', '=', s.owner.type)
          .where('owner_id', '=', s.owner.id)
          .where('list_id', '=', list)
          .where('product_id', '=', s.productId)
          .execute()
      }
      facts.push({ type: s.type, ownerType: s.owner.type, ownerId: s.owner.id, productId: s.productId, occurredAt: s.at })
    }
    await recordFacts(trx, shopId, facts)
  })
}

/** A shop's analytics log as analytics reads see it (its pending facts applied first), filtered by shop. */
export async function loggedFacts(db: Db, shopId: string) {
  await applyPendingFacts(db, shopId)
  return db.selectFrom('analytics_events').where('shop_id', '=', shopId)
}
