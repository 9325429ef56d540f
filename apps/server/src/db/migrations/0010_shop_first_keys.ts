import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * docs/api.md, "Shops, plans and settings": every primary key starts with `shop_id`, so that the schema can be
 * distributed by shop on Citus (which enforces uniqueness per shard, so a distributed
 * table's keys must include the distribution column). Three tables took a lone auto id
 * as their key: `reviews` (the API's review `id` is an integer), the `analytics_events` log and the
 * `analytics_inbox` queue. On PostgreSQL their key becomes (shop_id, id); the id keeps its
 * identity sequence, and every query by id already names the shop. The inbox's
 * (shop_id, id) index is the key now, so one index less is written per fact.
 *
 * SQLite keeps `id INTEGER PRIMARY KEY`: an embedded database is never sharded, and
 * SQLite's AUTOINCREMENT exists only on a lone integer key (the rowid).
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  if (backend !== 'postgres') return
  for (const table of ['reviews', 'analytics_events', 'analytics_inbox']) {
    // Idempotent: a key already rebuilt is left as it is.
    const rebuilt = await sql<{ n: number }>`select 1 as n from pg_constraint where conrelid = ${table}::regclass and conname = ${`${table}_pk`}`.execute(db)
    if (rebuilt.rows.length > 0) continue
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_pkey`)}, add constraint ${sql.id(`${table}_pk`)} primary key (shop_id, id)`.execute(db)
  }
  await db.schema.dropIndex('analytics_inbox_by_shop').ifExists().execute()
}
