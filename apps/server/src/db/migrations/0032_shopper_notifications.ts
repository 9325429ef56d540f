import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Shopper notifications through the merchant's channels (docs/notifications.md).
 *
 * - `notification_contacts`: the e-mail the shop knows for an owner (a customer, or a guest who
 *   gave it), where it came from (`order`: an order of theirs; `merchant`: the merchant's own
 *   customer record; `shopper`: typed in the widget, with the consent text they saw in
 *   `consent_text`) and when.
 * - `notification_opt_outs`: owners who stopped every notification (the signed opt-out link);
 *   kept apart from the contact so an opt-out holds whatever e-mail comes later.
 * - `notifications`: one row per notification an owner was due (a signal of a product they
 *   hold): `queued` (handed to the channels as deliveries) or `suppressed` with its `reason`
 *   (`cooldown`, `daily_cap`, `opted_out`): the frequency rules count these rows. `payload` is
 *   the message's JSON (product, prices, URL, image) as of the signal.
 * - `notification_deliveries`: one per notification and channel the shop had then
 *   (`klaviyo`, `flow`): `pending` until the worker sends it (leased like webhook deliveries),
 *   then `sent`, `failed` (the channel refused the message itself) or `skipped` (the channel
 *   takes no such message: a Flow trigger no workflow uses, an owner who opted out since).
 * - `notification_cursors`: how far the worker has read the shop's wishlist adds, per kind of
 *   notification made from them (`item_added`, `reminder`): `added_at` and the item's key.
 * - `notification_erasures`: profile deletions to ask of a channel (Klaviyo) for an erased
 *   shopper, retried like deliveries until the channel took them.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('notification_contacts')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('consent_text', 'text')
    .addColumn('consented_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_contacts_pk', ['shop_id', 'owner_type', 'owner_id'])
    .execute()

  await db.schema
    .createTable('notification_opt_outs')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('opted_out_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_opt_outs_pk', ['shop_id', 'owner_type', 'owner_id'])
    .execute()

  await db.schema
    .createTable('notifications')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('signal', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('variant_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notifications_pk', ['shop_id', 'id'])
    .execute()
  // The frequency rules: an owner's recent notifications (per day; per product and signal).
  await db.schema
    .createIndex('notifications_owner_idx')
    .on('notifications')
    .columns(['shop_id', 'owner_type', 'owner_id', 'created_at'])
    .execute()
  // The Channels page's counts per signal, and the retention purge.
  await db.schema.createIndex('notifications_shop_signal_idx').on('notifications').columns(['shop_id', 'signal', 'created_at']).execute()

  await db.schema
    .createTable('notification_deliveries')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('notification_id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addPrimaryKeyConstraint('notification_deliveries_pk', ['shop_id', 'id'])
    .execute()
  await db.schema
    .createIndex('notification_deliveries_due_idx')
    .on('notification_deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute()
  await db.schema
    .createIndex('notification_deliveries_notification_idx')
    .on('notification_deliveries')
    .columns(['shop_id', 'notification_id'])
    .execute()
  // Attribution and the Channels page: a shop's sent deliveries by time.
  await db.schema
    .createIndex('notification_deliveries_shop_idx')
    .on('notification_deliveries')
    .columns(['shop_id', 'state', 'sent_at'])
    .execute()

  await db.schema
    .createTable('notification_cursors')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('added_at', 'bigint', (c) => c.notNull())
    .addColumn('item_key', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_cursors_pk', ['shop_id', 'kind'])
    .execute()

  await db.schema
    .createTable('notification_erasures')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('external_id', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_erasures_pk', ['shop_id', 'id'])
    .execute()
  await db.schema.createIndex('notification_erasures_due_idx').on('notification_erasures').columns(['next_attempt_at']).execute()
}
