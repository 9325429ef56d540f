import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The shop's days-to-purchase histogram over its whole history (docs/architecture.md, "From
 * wish to purchase"): `analytics_purchase_lag_totals` holds, per shop and lag (tenths of a
 * day), how many items were bought that long after their add: the sum of every day's
 * `analytics_daily.purchase_lags`. `conversions?period=all` reads it instead of merging every
 * day's pairs, so its cost stays flat as orders accumulate; the order intake adds to it in
 * the transaction that adds to the days' rows. Filled here from the days' pairs, shop by shop.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('analytics_purchase_lag_totals')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('lag', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_purchase_lag_totals_pk', ['shop_id', 'lag'])
    .execute()
  const shops = await sql<{ shop_id: string }>`select distinct shop_id from analytics_daily
      where purchase_lags is not null order by shop_id`.execute(db)
  for (const { shop_id: shopId } of shops.rows) {
    const days = await sql<{ purchase_lags: string }>`select purchase_lags from analytics_daily
        where shop_id = ${shopId} and purchase_lags is not null`.execute(db)
    const totals = new Map<number, number>()
    for (const { purchase_lags: packed } of days.rows) {
      for (const pair of packed.split(',')) {
        const [lag, count] = pair.split(':').map(Number) as [number, number]
        if (Number.isInteger(lag) && Number.isInteger(count) && count > 0) totals.set(lag, (totals.get(lag) ?? 0) + count)
      }
    }
    const rows = [...totals].sort((a, b) => a[0] - b[0])
    for (let i = 0; i < rows.length; i += 500) {
      const values = rows.slice(i, i + 500).map(([lag, count]) => sql`(${shopId}, ${lag}, ${count})`)
      await sql`insert into analytics_purchase_lag_totals (shop_id, lag, count) values ${sql.join(values)}`.execute(db)
    }
  }
}
