import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The days-to-purchase histogram moves into the daily rollup row (docs/architecture.md,
 * "From wish to purchase"): `analytics_daily.purchase_lags` holds, for the items added that
 * day and since bought, `lag:count` pairs (tenths of a day) joined by commas, null when there
 * is none (modules/analytics/purchase-lags.ts). The conversions read then takes one row per
 * day of the period instead of one per (day, lag). Every count of `analytics_purchase_lags`
 * moves into its day's pairs (a day without a rollup row gains one, its counters 0); the
 * table is dropped.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  await sql`alter table analytics_daily add column purchase_lags text`.execute(db)
  const packed =
    backend === 'postgres' ? sql`string_agg(lag || ':' || count, ',' order by lag)` : sql`group_concat(lag || ':' || count, ',')`
  // SQLite needs the WHERE to tell the upsert's ON CONFLICT from a join's ON.
  await sql`insert into analytics_daily (shop_id, day, purchase_lags)
      select shop_id, day, ${packed} from analytics_purchase_lags where true group by shop_id, day
      on conflict (shop_id, day) do update set purchase_lags = excluded.purchase_lags`.execute(db)
  await sql`drop table analytics_purchase_lags`.execute(db)
}
