/**
 * The transactional outbox. Every state change that docs/api.md lists as a webhook event calls
 * `enqueueWebhookEvents` with the transaction that makes the change, so an event exists
 * exactly when its change was committed. The webhook worker turns each row into one
 * delivery per subscribed endpoint and then deletes it.
 *
 * An endpoint receives the events that happen while it is subscribed (webhook-worker.ts),
 * so an event that no active endpoint of the shop takes when it happens can never be
 * delivered: it is not written. The subscriptions are read in the same transaction as the
 * change, so an endpoint that exists when the change commits on SQLite (one writer at a
 * time) is seen; on PostgreSQL an endpoint whose creation commits while the change is in
 * flight may miss that one event, as it may miss any event written just before it.
 * A shop without webhooks (the bench's, for one) writes no outbox rows at all, and the
 * worker has nothing to fan out: bench, add+remove on SQLite, alternating single-process
 * runs: 8,370 / 8,063 / 7,383 req/s against 6,029 / 5,822 / 5,814 (CPU 112–127 against
 * 153–161 µs per request). A shop whose webhooks take the event pays one SELECT more.
 */
import type { Transaction } from 'kysely'
import { precompiled, rowsStatement } from '../../db/precompiled.js'
import type { Database } from '../../db/schema.js'
import { newOrderedId } from '../../lib/ids.js'
import { now } from '../../lib/time.js'

export const WEBHOOK_EVENTS = [
  'wishlist.item.added',
  'wishlist.item.removed',
  'wishlist.shared',
  'wishlist.product.back_in_stock',
  'wishlist.product.price_dropped',
  'wishlist.product.low_stock',
  'review.requested',
] as const

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number]

export interface OutboxEvent {
  event: WebhookEventName
  /** The payload's `data` object (docs/api.md, "Webhooks"). */
  data: Record<string, unknown>
  occurredAt?: number
}

const insertRows = rowsStatement('outbox', ['shop_id', 'id', 'event', 'payload', 'occurred_at', 'created_at', 'dispatched'])

/** The event lists of the shop's active endpoints (JSON arrays, as stored). */
const subscriptions = precompiled(1, (db, shopId: string) => db.selectFrom('webhook_endpoints').select('events').where('shop_id', '=', shopId).where('disabled_at', 'is', null))

/** The events some active endpoint of the shop takes, read in the caller's transaction. */
export async function subscribedEvents(trx: Transaction<Database>, shopId: string): Promise<Set<string>> {
  return new Set((await subscriptions(trx, shopId)).flatMap((e) => JSON.parse(e.events) as string[]))
}

/**
 * Writes the events that some active endpoint of the shop subscribes to, in the caller's
 * transaction; `taken` is `subscribedEvents` when the caller has read it in that transaction.
 * `createdAt`: when the change was committed, for events written later (product-fan-out.ts).
 */
export async function enqueueWebhookEvents(trx: Transaction<Database>, shopId: string, events: OutboxEvent[], taken?: Set<string>, createdAt?: number): Promise<void> {
  if (events.length === 0) return
  taken ??= await subscribedEvents(trx, shopId)
  const wanted = events.filter((e) => taken.has(e.event))
  if (wanted.length === 0) return
  const at = createdAt ?? now()
  await insertRows(
    trx,
    wanted.map((e) => ({
      shop_id: shopId,
      id: newOrderedId('msg'),
      event: e.event,
      payload: JSON.stringify(e.data),
      occurred_at: e.occurredAt ?? at,
      created_at: at,
      dispatched: 0,
    })),
  )
}
