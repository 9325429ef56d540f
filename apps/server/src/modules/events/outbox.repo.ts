/**
 * The outbox and its queue of product fan-outs (outbox.ts, product-fan-out.ts). Every query is
 * scoped by shop, except the webhook worker's reads of the fan-out queue, which take the
 * oldest queued fan-out of any shop.
 */
import { sql } from 'kysely'
import { backendOf, lockSkippingLocked, textContains } from '../../db/dialect.js'
import { precompiled, rowsStatement } from '../../db/precompiled.js'
import type { OutboxFanOutsTable, OutboxTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'

/** An outbox row as its writers give it (the shop apart; `dispatched` is always 0). */
export type OutboxRow = Omit<OutboxTable, 'shop_id' | 'dispatched'>

const insertRows = rowsStatement('outbox', ['shop_id', 'id', 'event', 'payload', 'occurred_at', 'created_at', 'dispatched'])

const subscriptions = precompiled((db, p: { shopId: string }) =>
  db.selectFrom('webhook_endpoints').select('events').where('shop_id', '=', p.shopId).where('disabled_at', 'is', null),
)

/**
 * One outbox row, written only when an active endpoint of the shop lists its event: its
 * `events` (a JSON array of names) holds the quoted name (`quoted`), which no other name's
 * quoted form contains.
 */
const insertIfSubscribed = precompiled((db, { shopId, row, quoted }: { shopId: string; row: OutboxRow; quoted: string }) =>
  db
    .insertInto('outbox')
    .columns(['shop_id', 'id', 'event', 'payload', 'occurred_at', 'created_at', 'dispatched'])
    .expression(
      db
        .selectNoFrom((eb) => [
          eb.val(shopId).as('shop_id'),
          eb.val(row.id).as('id'),
          eb.val(row.event).as('event'),
          eb.val(row.payload).as('payload'),
          eb.cast<number>(eb.val(row.occurred_at), 'bigint').as('occurred_at'),
          eb.cast<number>(eb.val(row.created_at), 'bigint').as('created_at'),
          eb.lit(0).as('dispatched'),
        ])
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('webhook_endpoints')
              .select(sql.lit(1).as('one'))
              .where('shop_id', '=', shopId)
              .where('disabled_at', 'is', null)
              .where(textContains(db, 'events', quoted)),
          ),
        ),
    ),
)

export const outboxRepo = {
  /** The event lists of the shop's active endpoints (JSON arrays, as stored). */
  async subscriptions(db: Db, shopId: string): Promise<string[]> {
    return (await subscriptions(db, { shopId })).map((e) => e.events)
  },

  /** Writes the row if an active endpoint of the shop takes its event: one statement either way. */
  async insertIfSubscribed(db: Db, shopId: string, row: OutboxRow): Promise<void> {
    await insertIfSubscribed(db, { shopId, row, quoted: `"${row.event}"` })
  },

  async insert(db: Db, shopId: string, rows: OutboxRow[]): Promise<void> {
    await insertRows(
      db,
      rows.map((r) => ({ shop_id: shopId, ...r, dispatched: 0 })),
    )
  },

  // ---- the fan-out queue ----

  async queueFanOut(
    db: Db,
    shopId: string,
    row: Omit<OutboxFanOutsTable, 'shop_id' | 'written' | 'notified' | 'notify_after'>,
  ): Promise<void> {
    await db
      .insertInto('outbox_fan_outs')
      .values({ shop_id: shopId, ...row, written: 0 })
      .execute()
  },

  /** Whether any fan-out of any shop is queued (the worker's idle check). */
  async anyFanOut(db: Db): Promise<boolean> {
    return (await db.selectFrom('outbox_fan_outs').select('id').limit(1).executeTakeFirst()) !== undefined
  },

  /** The oldest queued fan-out of any shop, locked for the worker (PostgreSQL: one another worker holds is skipped). */
  async claimOldestFanOut(db: Db) {
    return lockSkippingLocked(
      db.selectFrom('outbox_fan_outs').selectAll().orderBy('created_at').orderBy('id').limit(1),
      backendOf(db),
    ).executeTakeFirst()
  },

  /** How far the fan-out's signals are written to the outbox (`written`) and have made their notifications (`notified`, `notify_after`). */
  async setFanOutProgress(
    db: Db,
    shopId: string,
    id: string,
    progress: Pick<OutboxFanOutsTable, 'written'> & { notified: number; notify_after: string | null },
  ): Promise<void> {
    await db.updateTable('outbox_fan_outs').set(progress).where('shop_id', '=', shopId).where('id', '=', id).execute()
  },

  async deleteFanOut(db: Db, shopId: string, id: string): Promise<void> {
    await db.deleteFrom('outbox_fan_outs').where('shop_id', '=', shopId).where('id', '=', id).execute()
  },
}
