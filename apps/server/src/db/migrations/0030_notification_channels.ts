import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The merchant's notification channels (docs/notifications.md): one row per shop and channel
 * (`klaviyo`). `secret` is the channel's credential (Klaviyo's private key) sealed with
 * AES-256-GCM (lib/token-cipher.ts, the key of SHOPIFY_TOKEN_KEY; never stored
 * in clear), `secret_last4` the last four characters the dashboard shows; `checked_at`,
 * `check_state` (`valid`, `invalid`, `unreachable`) and `check_error` record the last check
 * of the credential against the channel.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('notification_channels')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('secret_last4', 'text', (c) => c.notNull())
    .addColumn('connected_at', 'bigint', (c) => c.notNull())
    .addColumn('checked_at', 'bigint', (c) => c.notNull())
    .addColumn('check_state', 'text', (c) => c.notNull())
    .addColumn('check_error', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_channels_pk', ['shop_id', 'channel'])
    .execute()
}
