import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * `outbox_fan_outs`: product signals committed by an events request, one row per product,
 * that the webhook worker writes to the outbox a batch per transaction (advancing
 * `written`) with the holders as they are then (modules/events/product-fan-out.ts).
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('outbox_fan_outs')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('handle', 'text')
    .addColumn('signals', 'text', (c) => c.notNull())
    .addColumn('written', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('outbox_fan_outs_pk', ['shop_id', 'id'])
    .execute()
  // The worker takes the oldest first, across shops.
  await db.schema.createIndex('outbox_fan_outs_by_age').on('outbox_fan_outs').columns(['created_at', 'id']).execute()
}
