/**
 * The receipts of Shopify's webhooks (`shopify_webhook_receipts`): one per processed topic
 * and event id of a shop, so that a redelivery changes nothing (docs/api.md, "Webhooks from
 * Shopify"). They are kept RECEIPT_RETENTION_MS, far longer than Shopify goes on sending
 * one event (docs/shopify.md, "Webhook receipts"); the delivery worker's hourly
 * housekeeping deletes older ones (`purgeReceipts` of modules/webhooks/webhook-worker.ts).
 */
import type { Backend, Db } from '../../db/types.js'
import { lockSkippingLocked } from '../../db/dialect.js'
import { DAY_MS, now } from '../../lib/time.js'

/** How long a receipt is kept: 7 days. */
export const RECEIPT_RETENTION_MS = 7 * DAY_MS

const receivedBefore = (db: Db, cutoff: number) => db.selectFrom('shopify_webhook_receipts').select(['shop_id', 'topic', 'event_id']).where('received_at', '<', cutoff)

/** Claims (topic, event id) for this delivery; false when it was processed before. */
export async function claimReceipt(db: Db, shopId: string, topic: string, eventId: string): Promise<boolean> {
  const res = await db
    .insertInto('shopify_webhook_receipts')
    .values({ shop_id: shopId, topic, event_id: eventId, received_at: now() })
    .onConflict((oc) => oc.columns(['shop_id', 'topic', 'event_id']).doNothing())
    .executeTakeFirst()
  return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0
}

/** Gives a claim back: the delivery was not processed, and Shopify's retry must find it unclaimed. */
export async function releaseReceipt(db: Db, shopId: string, topic: string, eventId: string): Promise<void> {
  await db.deleteFrom('shopify_webhook_receipts').where('shop_id', '=', shopId).where('topic', '=', topic).where('event_id', '=', eventId).execute()
}

/** Whether any receipt was taken before `cutoff` (a read, so an idle worker writes nothing). */
export async function hasReceiptsBefore(db: Db, cutoff: number): Promise<boolean> {
  return (await receivedBefore(db, cutoff).limit(1).executeTakeFirst()) !== undefined
}

/**
 * Deletes up to `limit` receipts taken before `cutoff`, oldest first, in one statement;
 * returns how many. Rows another worker is deleting are skipped (PostgreSQL).
 */
export async function purgeReceiptsBefore(db: Db, backend: Backend, cutoff: number, limit: number): Promise<number> {
  const oldest = lockSkippingLocked(receivedBefore(db, cutoff).orderBy('received_at').limit(limit), backend)
  const gone = await db
    .deleteFrom('shopify_webhook_receipts')
    .where((eb) => eb(eb.refTuple('shop_id', 'topic', 'event_id'), 'in', oldest.$asTuple('shop_id', 'topic', 'event_id')))
    .executeTakeFirst()
  return Number(gone.numDeletedRows)
}
