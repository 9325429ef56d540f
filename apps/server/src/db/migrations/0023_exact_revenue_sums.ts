import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Revenue sums in two integer parts (docs/api.md, "Conversions"; lib/money.ts, `splitAmount`):
 * `analytics_revenue_daily` and `analytics_product_revenue` gain `amount_high`, the multiples
 * of 10^12 minor units, and `amount` keeps the rest (below 10^12), so a sum never leaves
 * 64-bit integers, which a single column did past 9.2 × 10^18 minor units. Every stored sum
 * is split exactly. Rows an older version stored out of range become readable: a negative
 * sum 0, a float (SQLite, past 64 bits: what an older version wrote there) its integer part,
 * a sum past the ceiling (10^26 minor units) the ceiling. top-products?sort=revenue's index
 * orders by both parts.
 */
const BASE = '1000000000000'
const BASE_N = 1_000_000_000_000n
const HIGH_MAX_N = 99_999_999_999_999n

export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  for (const table of ['analytics_revenue_daily', 'analytics_product_revenue']) {
    const t = sql.table(table)
    await sql`alter table ${t} add column amount_high bigint not null default 0`.execute(db)
    if (backend === 'sqlite') {
      // Floats (and anything else but an integer) first, one by one: the float's integer
      // part exactly (BigInt), split. Integer division and % would stop at 2^63.
      const odd = await sql<{
        id: number
        amount: unknown
      }>`select rowid as id, amount from ${t} where typeof(amount) <> 'integer'`.execute(db)
      for (const row of odd.rows) {
        const value = typeof row.amount === 'number' && Number.isFinite(row.amount) && row.amount > 0 ? BigInt(Math.trunc(row.amount)) : 0n
        const high = value / BASE_N > HIGH_MAX_N ? HIGH_MAX_N : value / BASE_N
        const low = value / BASE_N > HIGH_MAX_N ? BASE_N - 1n : value % BASE_N
        await sql`update ${t} set amount = ${Number(low)}, amount_high = ${Number(high)} where rowid = ${row.id}`.execute(db)
      }
    }
    await sql`update ${t} set amount = 0 where amount < 0`.execute(db)
    await sql`update ${t} set amount_high = amount / ${sql.raw(BASE)}, amount = amount % ${sql.raw(BASE)} where amount >= ${sql.raw(BASE)}`.execute(
      db,
    )
  }
  await db.schema.dropIndex('analytics_product_revenue_top').execute()
  await db.schema
    .createIndex('analytics_product_revenue_top')
    .on('analytics_product_revenue')
    .columns(['shop_id', 'currency', 'amount_high desc', 'amount desc', 'product_id'])
    .execute()
}
