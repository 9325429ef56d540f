import { sql, type Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Attribution per notification channel (docs/api.md, "Conversions"; docs/notifications.md,
 * "Attribution"): `analytics_daily` gains, per channel, the wishlist-influenced lines of the
 * day's orders whose customer a notification of the product had been sent to through that
 * channel within the shop's attribution window (modules/analytics/conversions.ts). Days
 * before this migration count none.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  for (const column of ['channel_klaviyo', 'channel_flow'])
    await sql`alter table analytics_daily add column ${sql.raw(column)} integer not null default 0`.execute(db)
}
