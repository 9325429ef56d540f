/**
 * The transactional outbox: every change that docs/api.md lists as a webhook event calls
 * `enqueueWebhookEvents` in its own transaction; the webhook worker turns each row into one
 * delivery per subscribed endpoint and deletes it. Endpoints receive only events that happen
 * while they are subscribed, so an event no active endpoint takes is not written (the
 * subscriptions are read in the change's transaction; on PostgreSQL an endpoint created while
 * the change is in flight may miss it). A shop without webhooks writes no outbox rows
 * (add+remove on SQLite +38% req/s; docs/architecture.md, "Events").
 */
import { sql, type Transaction } from 'kysely'
import { backendOf } from '../../db/dialect.js'
import { precompiled, rowsStatement } from '../../db/precompiled.js'
import type { Database } from '../../db/schema.js'
import { newOrderedId } from '../../lib/ids.js'
import { now } from '../../lib/time.js'

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

const insertRows = rowsStatement('outbox', ['shop_id', 'id', 'event', 'payload', 'occurred_at', 'created_at', 'dispatched'])

/** The event lists of the shop's active endpoints (JSON arrays, as stored). */
const subscriptions = precompiled(1, (db, shopId: string) => db.selectFrom('webhook_endpoints').select('events').where('shop_id', '=', shopId).where('disabled_at', 'is', null))

/**
 * One outbox row, written only when an active endpoint of the shop lists its event: its
 * `events` (a JSON array of names) holds the quoted name (`quoted`), which no other name's
 * quoted form contains.
 */
const insertIfSubscribed = precompiled(
  7,
  (db, shopId: string, id: string, event: string, payload: string, occurredAt: number, createdAt: number, quoted: string) =>
    db
      .insertInto('outbox')
      .columns(['shop_id', 'id', 'event', 'payload', 'occurred_at', 'created_at', 'dispatched'])
      .expression(
        db
          .selectNoFrom((eb) => [
            eb.val(shopId).as('shop_id'),
            eb.val(id).as('id'),
            eb.val(event).as('event'),
            eb.val(payload).as('payload'),
            eb.cast<number>(eb.val(occurredAt), 'bigint').as('occurred_at'),
            eb.cast<number>(eb.val(createdAt), 'bigint').as('created_at'),
            eb.lit(0).as('dispatched'),
          ])
          .where((eb) =>
            eb.exists(
              eb
                .selectFrom('webhook_endpoints')
                .select(sql.lit(1).as('one'))
                .where('shop_id', '=', shopId)
                .where('disabled_at', 'is', null)
                .where(backendOf(db) === 'postgres' ? sql<boolean>`strpos(events, ${quoted}) > 0` : sql<boolean>`instr(events, ${quoted}) > 0`),
            ),
          ),
      ),
)

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
  const [only] = events
  if (taken === undefined && events.length === 1 && only) {
    // One event (a single add or remove): the subscription check is part of the insert.
    const at = createdAt ?? now()
    await insertIfSubscribed(trx, shopId, newOrderedId('msg'), only.event, JSON.stringify(only.data), only.occurredAt ?? at, at, `"${only.event}"`)
    return
  }
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
