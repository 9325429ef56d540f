import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Webhook endpoints, one delivery per (outbox message, subscribed endpoint), and the log
 * of every attempt. Keys start with shop_id (Citus-ready); the worker's due-delivery index
 * is deliberately not shop-first: the worker serves every shop.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .addColumn('disabled_reason', 'text')
    .addPrimaryKeyConstraint('webhook_endpoints_pk', ['shop_id', 'id'])
    .execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('locked_until', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['shop_id', 'id'])
    .execute()
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute()
  await db.schema
    .createIndex('webhook_deliveries_by_webhook')
    .on('webhook_deliveries')
    .columns(['shop_id', 'webhook_id', 'created_at'])
    .execute()

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_body', 'text')
    // One row per (delivery, attempt number): a second worker sending the same attempt
    // would be a constraint violation, not a silent duplicate.
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['shop_id', 'delivery_id', 'attempt'])
    .execute()
}
