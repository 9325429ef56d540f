import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Shopify app mode (docs/api.md, "Shopify app mode"): `shops.uninstalled_at` (set by
 * `app/uninstalled`; while set the storefront key and app proxy are refused and webhooks
 * wait), `shopify_webhook_receipts` (a redelivery changes nothing) and `privacy_requests`
 * (`customers/data_request` notifications).
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  // Idempotent: a database that has the table has had this migration (tests rerun later migrations).
  const present =
    backend === 'postgres'
      ? await sql<{ n: number }>`select 1 as n where to_regclass('privacy_requests') is not null`.execute(db)
      : await sql<{ n: number }>`select 1 as n from sqlite_master where type = 'table' and name = 'privacy_requests'`.execute(db)
  if (present.rows.length > 0) return

  await db.schema.alterTable('shops').addColumn('uninstalled_at', 'bigint').execute()

  await db.schema
    .createTable('shopify_webhook_receipts')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('shopify_webhook_receipts_pk', ['shop_id', 'topic', 'event_id'])
    .execute()

  await db.schema
    .createTable('privacy_requests')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('privacy_requests_pk', ['shop_id', 'id'])
    .execute()
  await db.schema.createIndex('privacy_requests_newest').on('privacy_requests').columns(['shop_id', 'received_at', 'id']).execute()
}
