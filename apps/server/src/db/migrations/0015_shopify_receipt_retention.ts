import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Shopify webhook receipts by the time they were taken, for their retention
 * (platforms/shopify/webhook-receipts.repo.ts): the delivery worker's hourly housekeeping
 * finds the old ones without reading the whole table.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createIndex('shopify_webhook_receipts_received')
    .ifNotExists()
    .on('shopify_webhook_receipts')
    .column('received_at')
    .execute()
}
