/**
 * What a migrated database holds, read from the database itself (SQLite's catalog pragmas,
 * PostgreSQL's pg_catalog) rather than from a list in the code: the move, the backup summary
 * and the restore checks follow every migration, present and future, without an edit.
 */
import type { RawConnection, Row } from './raw-connection.js'

/** How a column's values are compared and converted between the backends. */
export type ValueKind = 'integer' | 'real' | 'numeric' | 'text' | 'boolean' | 'json' | 'bytes' | 'timestamp'

export interface ColumnInfo {
  name: string
  /** The declared type (SQLite) or `format_type` (PostgreSQL), e.g. `bigint`, `character varying(255)`. */
  type: string
  kind: ValueKind
  /** An auto-increment id (SQLite AUTOINCREMENT, PostgreSQL identity or serial): its counter is carried over. */
  autoId: boolean
}

export interface TableInfo {
  name: string
  columns: ColumnInfo[]
  primaryKey: string[]
  /** Tables this one references (foreign keys): copied before it. */
  references: string[]
}

/** The migrator's own tables: what they say is read through appliedMigrations, never copied. */
export const MIGRATION_TABLES: readonly string[] = ['kysely_migration', 'kysely_migration_lock']

/** The value kind of a declared type, by the same affinity rules on both backends. */
export function kindOfType(type: string): ValueKind {
  const t = type.toLowerCase()
  if (t.startsWith('timestamp') || t === 'date') return 'timestamp'
  if (t.startsWith('bool')) return 'boolean'
  if (t.startsWith('json')) return 'json'
  if (t === 'bytea' || t.includes('blob') || t === '') return 'bytes'
  if (t.includes('int') && !t.startsWith('interval')) return 'integer'
  if (t.includes('real') || t.includes('floa') || t.includes('doub')) return 'real'
  if (t.startsWith('numeric') || t.startsWith('decimal')) return 'numeric'
  return 'text'
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

async function sqliteTables(conn: RawConnection): Promise<TableInfo[]> {
  const tables = await conn.all(
    `select name, sql from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name`,
  )
  const out: TableInfo[] = []
  for (const t of tables) {
    const name = String(t.name)
    const autoincrement = /\bautoincrement\b/i.test(String(t.sql ?? ''))
    const cols = await conn.all('select name, type, pk, hidden from pragma_table_xinfo(?) order by cid', [name])
    const stored = cols.filter((c) => Number(c.hidden) === 0)
    const pkCols = stored.filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk))
    const refs = await conn.all('select distinct "table" as ref from pragma_foreign_key_list(?)', [name])
    out.push({
      name,
      columns: stored.map((c) => ({
        name: String(c.name),
        type: String(c.type ?? ''),
        kind: kindOfType(String(c.type ?? '')),
        autoId: autoincrement && pkCols.length === 1 && Number(c.pk) === 1,
      })),
      primaryKey: pkCols.map((c) => String(c.name)),
      references: refs.map((r) => String(r.ref)).filter((r) => r !== name),
    })
  }
  return out
}

async function postgresTables(conn: RawConnection): Promise<TableInfo[]> {
  const tables =
    await conn.all(`select c.oid::bigint as oid, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') order by c.relname`)
  const columns = await conn.all(`select c.relname as table_name, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
      a.attidentity <> '' or pg_get_serial_sequence(quote_ident(c.relname), a.attname) is not null as auto_id
    from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    order by c.relname, a.attnum`)
  const keys = await conn.all(`select c.relname as table_name, a.attname as name
    from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
    cross join lateral unnest(i.indkey) with ordinality as k(attnum, ord)
    join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
    where i.indisprimary and n.nspname = current_schema() order by c.relname, k.ord`)
  const refs = await conn.all(`select distinct c.relname as table_name, r.relname as ref
    from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_class r on r.oid = k.confrelid join pg_namespace n on n.oid = c.relnamespace
    where k.contype = 'f' and n.nspname = current_schema()`)
  const of = (rows: Row[], table: string) => rows.filter((r) => r.table_name === table)
  return tables.map((t) => {
    const name = String(t.name)
    return {
      name,
      columns: of(columns, name).map((c) => ({
        name: String(c.name),
        type: String(c.type),
        kind: kindOfType(String(c.type)),
        autoId: c.auto_id === true,
      })),
      primaryKey: of(keys, name).map((k) => String(k.name)),
      references: of(refs, name)
        .map((r) => String(r.ref))
        .filter((r) => r !== name),
    }
  })
}

/** Every table of the connection's database (PostgreSQL: its current schema), by name. */
export async function describeTables(conn: RawConnection): Promise<TableInfo[]> {
  const tables = conn.backend === 'sqlite' ? await sqliteTables(conn) : await postgresTables(conn)
  return tables.sort(byName)
}

/** The data tables: every table but the migrator's. */
export const dataTables = (tables: readonly TableInfo[]): TableInfo[] => tables.filter((t) => !MIGRATION_TABLES.includes(t.name))

/** The migrations the database has applied, oldest first; undefined when it has never been migrated by this service. */
export async function appliedMigrations(conn: RawConnection, tables: readonly TableInfo[]): Promise<string[] | undefined> {
  if (!tables.some((t) => t.name === 'kysely_migration')) return undefined
  return (await conn.all('select name from kysely_migration order by name')).map((r) => String(r.name))
}

/**
 * The tables in an order that copies every referenced table before the tables referencing it
 * (ties by name). `shops` comes first: every other row belongs to a shop, whether or not a
 * foreign key says so.
 */
export function dependencyOrder(tables: readonly TableInfo[]): TableInfo[] {
  const byTable = new Map(tables.map((t) => [t.name, t]))
  const done = new Set<string>()
  const out: TableInfo[] = []
  const visit = (t: TableInfo, path: Set<string>) => {
    if (done.has(t.name) || path.has(t.name)) return
    path.add(t.name)
    for (const ref of [...t.references].sort()) {
      const r = byTable.get(ref)
      if (r) visit(r, path)
    }
    path.delete(t.name)
    done.add(t.name)
    out.push(t)
  }
  const shops = byTable.get('shops')
  if (shops) visit(shops, new Set())
  for (const t of [...tables].sort(byName)) visit(t, new Set())
  return out
}
