import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Analytics read models beside the append-only `analytics_events` log (docs/api.md, "Analytics").
 * All are maintained by the facts applier (since migration 0007, from `analytics_inbox`); see
 * modules/analytics/facts.ts and docs/architecture.md ("Analytics") for why each is exact.
 * Days are UTC epoch days: floor(epoch ms / 86,400,000).
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('analytics_daily')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('adds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('removes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('shoppers', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_seen', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('converted', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('analytics_daily_pk', ['shop_id', 'day'])
    .execute()

  await db.schema
    .createTable('analytics_shopper_days')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_shopper_days_pk', ['shop_id', 'day', 'owner_type', 'owner_id'])
    .execute()

  await db.schema
    .createTable('analytics_shoppers')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('last_day', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_shoppers_pk', ['shop_id', 'owner_type', 'owner_id'])
    .execute()

  await db.schema
    .createTable('analytics_holdings')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_holdings_pk', ['shop_id', 'owner_type', 'owner_id', 'product_id'])
    .execute()

  await db.schema
    .createTable('analytics_product_holders')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('holders', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_product_holders_pk', ['shop_id', 'product_id'])
    .execute()
  // Top-N reads the first `limit` entries of this index and stops.
  await db.schema
    .createIndex('analytics_product_holders_top')
    .on('analytics_product_holders')
    .columns(['shop_id', 'holders desc', 'product_id'])
    .execute()

  await db.schema
    .createTable('analytics_pending_adds')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_pending_adds_pk', ['shop_id', 'owner_type', 'owner_id', 'product_id', 'added_at'])
    .execute()
}
