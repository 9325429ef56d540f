/**
 * Privacy requests: the `customers/data_request` webhooks Shopify sends, recorded for the
 * merchant to answer with the customer's export (docs/api.md, "Webhooks from Shopify").
 */
import type { Selectable } from 'kysely'
import type { PrivacyRequestsTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { newOrderedId } from '../../lib/ids.js'
import { now } from '../../lib/time.js'

/** Privacy requests listed at most (newest first). */
export const MAX_PRIVACY_REQUESTS = 1000

type PrivacyRequestRow = Selectable<PrivacyRequestsTable>

export const privacyRequestsRepo = {
  async record(db: Db, shopId: string, customerId: string, email: string | undefined): Promise<void> {
    await db
      .insertInto('privacy_requests')
      .values({ shop_id: shopId, id: newOrderedId('pr'), customer_id: customerId, email: email ?? null, received_at: now() })
      .execute()
  },

  newestFirst(db: Db, shopId: string): Promise<PrivacyRequestRow[]> {
    return db
      .selectFrom('privacy_requests')
      .selectAll()
      .where('shop_id', '=', shopId)
      .orderBy('received_at', 'desc')
      .orderBy('id', 'desc')
      .limit(MAX_PRIVACY_REQUESTS)
      .execute()
  },

  byId(db: Db, shopId: string, id: string): Promise<PrivacyRequestRow | undefined> {
    return db.selectFrom('privacy_requests').selectAll().where('shop_id', '=', shopId).where('id', '=', id).executeTakeFirst()
  },
}
