import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'
import { withAutoId } from '../dialect.js'

/**
 * `analytics_inbox`: facts committed by wishlist writes and not yet applied to the log and
 * rollups, which the applier moves in batches (modules/analytics/facts.ts).
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  await withAutoId(db.schema.createTable('analytics_inbox'), backend)
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('analytics_inbox_by_shop').on('analytics_inbox').columns(['shop_id', 'id']).execute()
}
