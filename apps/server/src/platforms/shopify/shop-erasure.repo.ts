/**
 * `shop/redact`: every row of a shop, in every table, deleted in one transaction, the shop
 * itself last. The tables are read from the database (every table that has a `shop_id`
 * column), so a table added later is erased too without a change here.
 */
import { sql } from 'kysely'
import { backendOf, tablesWithColumn } from '../../db/dialect.js'
import type { Db } from '../../db/types.js'

export const shopErasureRepo = {
  /** The tables of the connection's own schema that carry a `shop_id` column, by name. */
  scopedTables(db: Db): Promise<string[]> {
    return tablesWithColumn(db, backendOf(db), 'shop_id')
  },

  /** Deletes the shop and everything it owns; returns the rows deleted per table (the shop under `shops`). */
  erase(db: Db, shopId: string): Promise<Record<string, number>> {
    return db.transaction().execute(async (trx) => {
      const counts: Record<string, number> = {}
      for (const table of await shopErasureRepo.scopedTables(trx)) {
        const res = await sql`delete from ${sql.table(table)} where shop_id = ${shopId}`.execute(trx)
        counts[table] = Number(res.numAffectedRows ?? 0n)
      }
      const shop = await trx.deleteFrom('shops').where('id', '=', shopId).executeTakeFirst()
      counts.shops = Number(shop.numDeletedRows)
      return counts
    })
  },
}
