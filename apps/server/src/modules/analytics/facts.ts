/**
 * Analytics facts (DECISIONS §8): append-only, written in the same transaction as the
 * wishlist change they describe. Wishlist operations, merge, import, list deletion and the
 * events intake (cart adds) all record through this one function, so whatever the
 * analytics module maintains beside the log (daily rollups, distinct-shopper sets) is
 * updated here, inside that same transaction.
 */
import type { Transaction } from 'kysely'
import type { AnalyticsFactType, Database, OwnerType } from '../../db/schema.js'

export interface AnalyticsFact {
  type: AnalyticsFactType
  ownerType: OwnerType
  ownerId: string
  productId: string
  occurredAt: number
}

export async function recordFacts(trx: Transaction<Database>, shopId: string, facts: AnalyticsFact[]): Promise<void> {
  if (facts.length === 0) return
  // Chunked: SQLite allows at most 32,766 bound parameters per statement.
  for (let i = 0; i < facts.length; i += 500) {
    await trx
      .insertInto('analytics_events')
      .values(
        facts.slice(i, i + 500).map((f) => ({
          shop_id: shopId,
          type: f.type,
          owner_type: f.ownerType,
          owner_id: f.ownerId,
          product_id: f.productId,
          occurred_at: f.occurredAt,
        })),
      )
      .execute()
  }
}
