import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Every primary key starts with `shop_id`, so the schema can be distributed by shop on Citus
 * (uniqueness is enforced per shard). On PostgreSQL `reviews`, `analytics_events` and
 * `analytics_inbox` are keyed (shop_id, id) instead of a lone id (which keeps its sequence),
 * and the inbox loses its now redundant index. SQLite, never sharded, keeps
 * `id INTEGER PRIMARY KEY`, the only key AUTOINCREMENT allows.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  if (backend !== 'postgres') return
  for (const table of ['reviews', 'analytics_events', 'analytics_inbox']) {
    // Idempotent: a key already rebuilt is left as it is.
    const rebuilt = await sql<{
      n: number
    }>`select 1 as n from pg_constraint where conrelid = ${table}::regclass and conname = ${`${table}_pk`}`.execute(db)
    if (rebuilt.rows.length > 0) continue
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_pkey`)}, add constraint ${sql.id(`${table}_pk`)} primary key (shop_id, id)`.execute(
      db,
    )
  }
  await db.schema.dropIndex('analytics_inbox_by_shop').ifExists().execute()
}
