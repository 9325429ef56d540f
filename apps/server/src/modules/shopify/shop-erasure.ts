/**
 * `shop/redact`: every row of a shop, in every table, deleted in one transaction, the shop
 * itself last. The tables are read from the database (every table that has a `shop_id`
 * column), so a table added later is erased too without a change here.
 */
import { sql, type Transaction } from 'kysely'
import type { Backend, Db } from '../../db/connect.js'
import type { Database } from '../../db/schema.js'

/** The tables of the connection's own schema that carry a `shop_id` column, by name. */
export async function shopScopedTables(executor: Db | Transaction<Database>, backend: Backend): Promise<string[]> {
  const { rows } =
    backend === 'postgres'
      ? await sql<{ name: string }>`select table_name as name from information_schema.columns
          where table_schema = current_schema() and column_name = 'shop_id' order by table_name`.execute(executor)
      : await sql<{ name: string }>`select m.name as name from sqlite_master m join pragma_table_info(m.name) c
          where m.type = 'table' and c.name = 'shop_id' order by m.name`.execute(executor)
  return rows.map((r) => r.name)
}

/** Deletes the shop and everything it owns; returns the rows deleted per table (the shop under `shops`). */
export async function eraseShop(db: Db, backend: Backend, shopId: string): Promise<Record<string, number>> {
  return db.transaction().execute(async (trx) => {
    const counts: Record<string, number> = {}
    for (const table of await shopScopedTables(trx, backend)) {
      const res = await sql`delete from ${sql.table(table)} where shop_id = ${shopId}`.execute(trx)
      counts[table] = Number(res.numAffectedRows ?? 0n)
    }
    const shop = await trx.deleteFrom('shops').where('id', '=', shopId).executeTakeFirst()
    counts.shops = Number(shop.numDeletedRows)
    return counts
  })
}
