import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Making shopper notifications (docs/notifications.md, "How often (frequency)"):
 * - `shops` gains the frequency settings: `notification_cooldown_hours` (24: at most one
 *   notification per shopper, product and signal in that time), `notifications_per_day` (3:
 *   at most that many per shopper in any 24 hours) and `reminder_after_days` (7: the reminder
 *   of an add not bought).
 * - `outbox_fan_outs` gains how far the webhook worker has made notifications of a queued
 *   product fan-out's signals: `notified` (signals done) and `notify_after` (the last holder
 *   done of the next one, JSON `[owner_type, owner_id]`; null: none yet), so each of its
 *   transactions makes a bounded number of them, however many shoppers hold the product.
 * - `wishlist_items_added_idx` (shop, added_at): the worker reads a shop's adds in the order
 *   they were made (item added, reminders) from a cursor, never the whole table.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  const addColumn = (table: string, column: string, type: string) =>
    sql`alter table ${sql.table(table)} add column ${sql.raw(column)} ${sql.raw(type)}`.execute(db)
  await addColumn('shops', 'notification_cooldown_hours', 'integer not null default 24')
  await addColumn('shops', 'notifications_per_day', 'integer not null default 3')
  await addColumn('shops', 'reminder_after_days', 'integer not null default 7')
  await addColumn('outbox_fan_outs', 'notified', 'integer not null default 0')
  await addColumn('outbox_fan_outs', 'notify_after', 'text')
  await db.schema.createIndex('wishlist_items_added_idx').on('wishlist_items').columns(['shop_id', 'added_at']).execute()
}
