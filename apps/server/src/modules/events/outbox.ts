/**
 * The transactional outbox: every change that docs/api.md lists as a webhook event calls
 * `enqueueWebhookEvents` in its own transaction; the webhook worker turns each row into one
 * delivery per subscribed endpoint and deletes it. Endpoints receive only events that happen
 * while they are subscribed, so an event no active endpoint takes is not written (the
 * subscriptions are read in the change's transaction; on PostgreSQL an endpoint created while
 * the change is in flight may miss it). A shop without webhooks writes no outbox rows
 * (docs/architecture.md, "Events"; its gain: docs/performance.md, "Changes for writes").
 */
import type { Transaction } from 'kysely'
import type { Database } from '../../db/schema.js'
import { newOrderedId } from '../../lib/ids.js'
import { now } from '../../lib/time.js'
import { outboxRepo } from './outbox.repo.js'

export const WEBHOOK_EVENTS = [
  'wishlist.item.added',
  'wishlist.item.removed',
  'wishlist.item.purchased',
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

/** The events some active endpoint of the shop takes, read in the caller's transaction. */
export async function subscribedEvents(trx: Transaction<Database>, shopId: string): Promise<Set<string>> {
  return new Set((await outboxRepo.subscriptions(trx, shopId)).flatMap((events) => JSON.parse(events) as string[]))
}

/**
 * Writes the events that some active endpoint of the shop subscribes to, in the caller's
 * transaction; `taken` is `subscribedEvents` when the caller has read it in that transaction.
 * `createdAt`: when the change was committed, for events written later (product-fan-out.ts).
 */
export async function enqueueWebhookEvents(
  trx: Transaction<Database>,
  shopId: string,
  events: OutboxEvent[],
  taken?: Set<string>,
  createdAt?: number,
): Promise<void> {
  if (events.length === 0) return
  const [only] = events
  if (taken === undefined && events.length === 1 && only) {
    // One event (a single add or remove): the subscription check is part of the insert.
    const at = createdAt ?? now()
    await outboxRepo.insertIfSubscribed(trx, shopId, {
      id: newOrderedId('msg'),
      event: only.event,
      payload: JSON.stringify(only.data),
      occurred_at: only.occurredAt ?? at,
      created_at: at,
    })
    return
  }
  taken ??= await subscribedEvents(trx, shopId)
  const wanted = events.filter((e) => taken.has(e.event))
  if (wanted.length === 0) return
  const at = createdAt ?? now()
  await outboxRepo.insert(
    trx,
    shopId,
    wanted.map((e) => ({
      id: newOrderedId('msg'),
      event: e.event,
      payload: JSON.stringify(e.data),
      occurred_at: e.occurredAt ?? at,
      created_at: at,
    })),
  )
}
