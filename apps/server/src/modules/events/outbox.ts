/**
 * The transactional outbox. Every state change that SPEC lists as a webhook event calls
 * `enqueueWebhookEvent` with the transaction that makes the change, so an event exists
 * exactly when its change was committed. The webhook worker turns each row into one
 * delivery per subscribed endpoint and then deletes it.
 */
import type { Insertable, Transaction } from 'kysely'
import { rowsStatement } from '../../db/precompiled.js'
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
] as const

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number]

export interface OutboxEvent {
  event: WebhookEventName
  /** The payload's `data` object (SPEC: Events). */
  data: Record<string, unknown>
  occurredAt?: number
}

const insertRows = rowsStatement(['shop_id', 'id', 'event', 'payload', 'occurred_at', 'created_at', 'dispatched'], (db, rows: Insertable<Database['outbox']>[]) =>
  db.insertInto('outbox').values(rows),
)

export async function enqueueWebhookEvents(trx: Transaction<Database>, shopId: string, events: OutboxEvent[]): Promise<void> {
  if (events.length === 0) return
  const at = now()
  await insertRows(
    trx,
    events.map((e) => ({
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
