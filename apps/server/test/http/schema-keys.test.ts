/**
 * docs/api.md, "Shops, plans and settings": every primary key and unique index starts with `shop_id`, so the schema can
 * be distributed by shop on Citus. Read from the migrated database itself.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { BACKEND } from '../helpers/db.js'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

/** Global lookups (reference tables on Citus) and the migrator's own tables. */
const NOT_TENANT = new Set(['shops', 'kysely_migration', 'kysely_migration_lock'])
/** On SQLite only: a lone `id INTEGER PRIMARY KEY` (the rowid), the one key AUTOINCREMENT allows. */
const SQLITE_ROWID_KEYED = ['analytics_events', 'analytics_inbox', 'reviews']

interface Key {
  table: string
  index: string
  columns: string[]
}

async function keys(): Promise<Key[]> {
  const db = t.storage.db
  if (BACKEND === 'postgres') {
    const { rows } = await sql<{ table: string; index: string; columns: string[] }>`
      select t.relname as "table", c.relname as "index", array_agg(a.attname::text order by k.ord) as columns
      from pg_index i
      join pg_class t on t.oid = i.indrelid
      join pg_class c on c.oid = i.indexrelid
      join pg_namespace n on n.oid = t.relnamespace
      cross join lateral unnest(i.indkey) with ordinality as k(attnum, ord)
      join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
      where n.nspname = current_schema() and (i.indisprimary or i.indisunique)
      group by t.relname, c.relname`.execute(db)
    return rows
  }
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
  const out: Key[] = []
  for (const { name } of tables.rows) {
    const pk = await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${name}) where pk > 0 order by pk`.execute(db)
    if (pk.rows.length > 0) out.push({ table: name, index: 'primary key', columns: pk.rows.map((r) => r.name) })
    const unique = await sql<{ name: string }>`select name from pragma_index_list(${name}) where "unique" = 1 and origin <> 'pk'`.execute(
      db,
    )
    for (const u of unique.rows) {
      const cols = await sql<{ name: string }>`select name from pragma_index_info(${u.name}) order by seqno`.execute(db)
      out.push({ table: name, index: u.name, columns: cols.rows.map((r) => r.name) })
    }
  }
  return out
}

it('starts every primary key and unique index of a tenant table with shop_id', async () => {
  const all = (await keys()).filter((k) => !NOT_TENANT.has(k.table))
  expect(all.length).toBeGreaterThan(20)
  const offending = all.filter((k) => k.columns[0] !== 'shop_id')
  if (BACKEND === 'postgres') {
    expect(offending).toEqual([])
  } else {
    expect(offending.map((k) => `${k.table}(${k.columns.join(', ')})`).sort()).toEqual(SQLITE_ROWID_KEYED.map((table) => `${table}(id)`))
  }
})
