/**
 * The transactional outbox. Every state change that SPEC lists as a webhook event calls
 * `enqueueWebhookEvent` with the transaction that makes the change, so an event exists
 * exactly when its change was committed. The webhook worker turns each row into one
 * delivery per subscribed endpoint.
 */
import type { Insertable, Kysely, Transaction } from 'kysely'
import { precompiled } from '../../db/precompiled.js'
import type { Database } from '../../db/schema.js'
import { newId } from '../../lib/ids.js'
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

type OutboxRow = Insertable<Database['outbox']>
const insertRows = (db: Kysely<Database>, rows: OutboxRow[]) => db.insertInto('outbox').values(rows)
// A single event (every add and remove) as a statement compiled once (db/precompiled.ts).
const insertOne = precompiled(6, (db, shop_id: string, id: string, event: WebhookEventName, payload: string, occurred_at: number, created_at: number) =>
  insertRows(db, [{ shop_id, id, event, payload, occurred_at, created_at, dispatched: 0 }]),
)

export async function enqueueWebhookEvents(trx: Transaction<Database>, shopId: string, events: OutboxEvent[]): Promise<void> {
  const at = now()
  const rows = events.map((e) => ({
    shop_id: shopId,
    id: newId('msg', 16),
    event: e.event,
    payload: JSON.stringify(e.data),
    occurred_at: e.occurredAt ?? at,
    created_at: at,
    dispatched: 0,
  }))
  const [one] = rows
  if (rows.length === 1 && one) await insertOne(trx, one.shop_id, one.id, one.event, one.payload, one.occurred_at, one.created_at)
  else if (rows.length > 1) await insertRows(trx, rows).execute()
}
