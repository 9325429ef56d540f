import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'
import { withAutoId } from '../dialect.js'

/**
 * `analytics_inbox`: the analytics facts that wishlist writes have committed and the
 * rollups have not taken in yet (modules/analytics/facts.ts). A write inserts its facts
 * here, in its own transaction; the applier moves them, a batch at a time, into the
 * `analytics_events` log and the rollups, and deletes them. Analytics reads apply what is
 * pending first, so their answers include every committed write.
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
