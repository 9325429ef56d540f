import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * What Shopify Flow last said of a shop's use of each wishlist trigger (modules/notifications/flow.ts,
 * docs/shopify.md "Shopify Flow"): its trigger lifecycle callback tells whether the shop has an
 * enabled workflow that starts with the trigger (`has_enabled_flow`, 0/1), at `status_at`
 * (the callback's own `timestamp`, ms: an older callback never replaces a newer one). The
 * trigger is named by its extension handle. No row: Flow never said, and the trigger is not fired.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('shopify_flow_triggers')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('handle', 'text', (c) => c.notNull())
    .addColumn('has_enabled_flow', 'integer', (c) => c.notNull())
    .addColumn('status_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('shopify_flow_triggers_pk', ['shop_id', 'handle'])
    .execute()
}
