import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Settled deliveries by the time they were last changed, for the webhook worker's
 * retention (WEBHOOK_DELIVERY_RETENTION_DAYS): a partial index, so the pending deliveries
 * the worker claims and settles many times a second never write to it until they settle.
 * Queries use it only when they spell the same condition with the literal.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_settled')
    .on('webhook_deliveries')
    .column('updated_at')
    .where(sql.ref('status'), '<>', sql.lit('pending'))
    .execute()
}
