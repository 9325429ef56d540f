/**
 * Bounded fan-out of product signals: one events request may change thousands of variants of
 * products thousands of people hold, so it must not write the outbox rows itself (it once
 * wrote hundreds of MB while every other request waited for its transaction).
 * - A request coalesces its signals to one per (product, variant, signal), first `before`,
 *   last `after` (`coalesce`), and queues them as ONE row per product in its own transaction
 *   (`queueProductSignals`), without looking the holders up.
 * - The webhook worker writes them to the outbox, FAN_OUT_BATCH per transaction
 *   (`writeQueuedSignals`), with the holders as they are then (an erased customer is gone),
 *   and in the same transactions makes the holders' notifications (notifications/notify.ts,
 *   NOTIFY_BATCH holders per transaction) when the shop has a notification channel.
 */
import type { Transaction } from 'kysely'
import type { Db } from '../../db/types.js'
import { lockShopRow } from '../../db/dialect.js'
import type { Database } from '../../db/schema.js'
import { newOrderedId } from '../../lib/ids.js'
import { wishlistsRepo } from '../wishlists/wishlists.repo.js'
import { notifyQueuedSignals } from '../notifications/notify.js'
import { now } from '../../lib/time.js'
import { enqueueWebhookEvents } from './outbox.js'
import { outboxRepo } from './outbox.repo.js'
import { normalizePrice, type ProductSignal, type VariantChange, type VariantState } from './product-signals.js'

/** customerIds listed in a product event's data; `truncated` says more exist. */
export const MAX_CUSTOMER_IDS = 1_000
/** Signals written to the outbox per worker transaction: with 1,000 customer ids each, about 2 MB. */
export const FAN_OUT_BATCH = 50

// Normalised again: a price stored by an older version may have lost its decimals ("39").
const view = (v: VariantState) => ({ price: normalizePrice(v.price), inventoryQuantity: v.inventory_quantity })

export interface QueuedSignal {
  event: ProductSignal
  variantId: string
  before: ReturnType<typeof view>
  after: ReturnType<typeof view>
}

/** One request's signals of one product, keyed by variant and signal. */
export interface ProductFanOut {
  handle: string | null
  signals: Map<string, QueuedSignal>
}

/** Adds one update's signals to the request's: a repeated (variant, signal) keeps its first `before`. */
export function coalesce(pending: Map<string, ProductFanOut>, productId: string, handle: string | null, changes: VariantChange[]): void {
  let fanOut = pending.get(productId)
  if (fanOut === undefined) pending.set(productId, (fanOut = { handle, signals: new Map() }))
  fanOut.handle = handle
  for (const c of changes) {
    const key = `${c.variantId} ${c.event}`
    const first = fanOut.signals.get(key)
    fanOut.signals.set(key, { event: c.event, variantId: c.variantId, before: first?.before ?? view(c.before), after: view(c.after) })
  }
}

/** Queues the request's signals, one row per product that some list holds, in the request's transaction. */
export async function queueProductSignals(
  trx: Transaction<Database>,
  shopId: string,
  pending: Map<string, ProductFanOut>,
  at: number,
): Promise<void> {
  for (const [productId, { handle, signals }] of pending) {
    if (signals.size === 0 || !(await wishlistsRepo.isHeld(trx, shopId, productId))) continue
    await outboxRepo.queueFanOut(trx, shopId, {
      id: newOrderedId('msg'),
      product_id: productId,
      handle,
      signals: JSON.stringify([...signals.values()]),
      occurred_at: at,
      created_at: at,
    })
  }
}

/** Whether any fan-out is queued: a plain read, so an idle worker writes nothing. */
export function hasQueuedSignals(db: Db): Promise<boolean> {
  return outboxRepo.anyFanOut(db)
}

/**
 * Writes the next `limit` signals of the oldest queued fan-out to the outbox, in one
 * transaction (PostgreSQL: a fan-out another worker is writing is skipped). Returns how many
 * signals it took off the queue (0: nothing queued).
 */
export async function writeQueuedSignals(db: Db, limit = FAN_OUT_BATCH): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const fanOut = await outboxRepo.claimOldestFanOut(trx)
    if (fanOut === undefined) return 0
    const { shop_id: shopId, product_id: productId, handle } = fanOut
    const signals = JSON.parse(fanOut.signals) as QueuedSignal[]
    const batch = signals.slice(fanOut.written, fanOut.written + limit)
    // PostgreSQL: an erasure of one of the shop's customers (webhooks/customer-erasure.ts)
    // holds the shop's row until it commits; the holders are read after it.
    await lockShopRow(trx, shopId, 'share')
    const holders =
      batch.length === 0
        ? { wishlistCount: 0, customerIds: [], truncated: false }
        : await wishlistsRepo.holders(trx, shopId, productId, MAX_CUSTOMER_IDS)
    if (holders.wishlistCount > 0) {
      const events = batch.map((s) => ({
        event: s.event,
        occurredAt: fanOut.occurred_at,
        data: {
          productId,
          variantId: s.variantId,
          ...(handle === null ? {} : { handle }),
          before: s.before,
          after: s.after,
          wishlistCount: holders.wishlistCount,
          customerIds: holders.customerIds,
          truncated: holders.truncated,
        },
      }))
      // Written as of the change: an endpoint created since then does not get them (webhook-worker.ts).
      await enqueueWebhookEvents(trx, shopId, events, undefined, fanOut.created_at)
    }
    // No holder left: nothing more to write.
    const written = holders.wishlistCount === 0 ? signals.length : fanOut.written + batch.length
    // The holders' notifications, a bounded number per transaction (nothing for a shop without channels).
    const notified = Number(fanOut.notified ?? 0)
    const progress =
      notified >= signals.length
        ? { notified, notifyAfter: null }
        : await notifyQueuedSignals(
            trx,
            { shopId, productId, handle, signals },
            { notified, notifyAfter: fanOut.notify_after ?? null },
            now(),
          )
    if (written >= signals.length && progress.notified >= signals.length) await outboxRepo.deleteFanOut(trx, shopId, fanOut.id)
    else
      await outboxRepo.setFanOutProgress(trx, shopId, fanOut.id, {
        written,
        notified: progress.notified,
        notify_after: progress.notifyAfter,
      })
    return Math.max(batch.length, 1)
  })
}
