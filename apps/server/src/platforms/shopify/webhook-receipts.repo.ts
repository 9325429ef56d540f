/**
 * The receipts of Shopify's webhooks (`shopify_webhook_receipts`), so that a delivery
 * processed once changes nothing again (docs/shopify.md, "Webhooks that prove themselves").
 * A processed delivery is recorded twice: under its event id (`X-Shopify-Event-Id`, which
 * Shopify does not sign) and under the SHA-256 of its topic and raw body (which it does), so
 * a signed body resent under a new event id is still a duplicate. The body records sit under
 * the topic `body:<topic>`, a name no delivery's topic can have (topics are checked against
 * the known ones first).
 *
 * Kept RECEIPT_RETENTION_MS, far longer than Shopify goes on sending one event; the delivery
 * worker's hourly housekeeping deletes older ones (Shopify's platform adapter, platform.ts,
 * run by `purgePlatformRecords` of modules/webhooks/webhook-worker.ts), except those of
 * KEPT_WHILE_SHOP_TOPICS, kept as long as the shop's row exists (the shop's erasure deletes
 * them with it): a captured `app/uninstalled` or redact body stays a duplicate however late
 * it is replayed.
 */
import { createHash } from 'node:crypto'
import type { Db } from '../../db/types.js'
import { backendOf, lockSkippingLocked } from '../../db/dialect.js'
import { DAY_MS, now } from '../../lib/time.js'

/** How long a receipt is kept: 7 days. */
export const RECEIPT_RETENTION_MS = 7 * DAY_MS

/** Topics whose receipts are kept as long as the shop: replaying one of them would uninstall or erase. */
export const KEPT_WHILE_SHOP_TOPICS = ['app/uninstalled', 'shop/redact', 'customers/redact'] as const

const BODY_PREFIX = 'body:'
const KEPT = KEPT_WHILE_SHOP_TOPICS.flatMap((t) => [t, `${BODY_PREFIX}${t}`])

/** One receipt: (topic, key) of a shop. */
interface Receipt {
  topic: string
  key: string
}

/** The receipts a delivery is recorded under: its event id (when it has one) and its body's digest. */
export function receiptsOf(topic: string, rawBody: Buffer, eventId: string | undefined): Receipt[] {
  const digest = createHash('sha256').update(topic).update('\n').update(rawBody).digest('hex')
  const byBody = { topic: `${BODY_PREFIX}${topic}`, key: digest }
  return eventId === undefined ? [byBody] : [{ topic, key: eventId }, byBody]
}

/** The receipts that expire, taken before `cutoff`. */
const expiringBefore = (db: Db, cutoff: number) =>
  db
    .selectFrom('shopify_webhook_receipts')
    .select(['shop_id', 'topic', 'event_id'])
    .where('received_at', '<', cutoff)
    .where('topic', 'not in', KEPT)

/** Thrown inside the claim's transaction to roll it back. */
class AlreadyClaimed extends Error {}

export const webhookReceiptsRepo = {
  /**
   * Claims every receipt of a delivery, all or none; false when any of them was taken before
   * (the delivery, or its body under another event id, was processed). Concurrent claims of
   * one receipt: one wins (the primary key), the others see it taken.
   */
  async claim(db: Db, shopId: string, receipts: Receipt[]): Promise<boolean> {
    const at = now()
    try {
      await db.transaction().execute(async (trx) => {
        for (const r of receipts) {
          const res = await trx
            .insertInto('shopify_webhook_receipts')
            .values({ shop_id: shopId, topic: r.topic, event_id: r.key, received_at: at })
            .onConflict((oc) => oc.columns(['shop_id', 'topic', 'event_id']).doNothing())
            .executeTakeFirst()
          if (Number(res.numInsertedOrUpdatedRows ?? 0n) === 0) throw new AlreadyClaimed()
        }
      })
      return true
    } catch (err) {
      if (err instanceof AlreadyClaimed) return false
      throw err
    }
  },

  /** Gives the claims back: the delivery was not processed, and Shopify's retry must find it unclaimed. */
  async release(db: Db, shopId: string, receipts: Receipt[]): Promise<void> {
    for (const r of receipts) {
      await db
        .deleteFrom('shopify_webhook_receipts')
        .where('shop_id', '=', shopId)
        .where('topic', '=', r.topic)
        .where('event_id', '=', r.key)
        .execute()
    }
  },

  /** Whether any receipt that expires was taken before `cutoff`, of any shop (a read, so an idle worker writes nothing). */
  async anyExpiring(db: Db, cutoff: number): Promise<boolean> {
    return (await expiringBefore(db, cutoff).limit(1).executeTakeFirst()) !== undefined
  },

  /**
   * Deletes up to `limit` expiring receipts taken before `cutoff`, of any shop, oldest first,
   * in one statement; returns how many. Rows another worker is deleting are skipped (PostgreSQL).
   */
  async purgeExpiring(db: Db, cutoff: number, limit: number): Promise<number> {
    const oldest = lockSkippingLocked(expiringBefore(db, cutoff).orderBy('received_at').limit(limit), backendOf(db))
    const gone = await db
      .deleteFrom('shopify_webhook_receipts')
      .where((eb) => eb(eb.refTuple('shop_id', 'topic', 'event_id'), 'in', oldest.$asTuple('shop_id', 'topic', 'event_id')))
      .executeTakeFirst()
    return Number(gone.numDeletedRows)
  },
}
