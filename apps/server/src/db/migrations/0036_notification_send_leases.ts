import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Who sends on a Klaviyo key (docs/notifications.md, "Klaviyo's rate limits"):
 * `notification_send_leases` holds one row per key that a notification worker sent on, named
 * by the key's hash (`name`, the worker's limiter key: never the key), with the worker that
 * holds it (`holder`) and until when (`expires_at`). Only the holder sends on the key, so the
 * one limiter that counts its requests is the holder's, however many instances run; another
 * worker takes the row once it has expired (the holder stopped, or crashed and left it).
 * `shop_id` is always '': a key may be connected by several shops, so its lease is no one
 * shop's, but every table is keyed by `shop_id` first like the others.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('notification_send_leases')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_send_leases_pk', ['shop_id', 'name'])
    .execute()
}
