/**
 * The only place where SQLite and PostgreSQL differ. Everything else (returning,
 * onConflict upserts, limit/offset, transactions) is portable through Kysely.
 */
import {
  CompiledQuery,
  type CreateTableBuilder,
  type Expression,
  type Kysely,
  type QueryExecutor,
  type RawBuilder,
  type Selectable,
  SqliteAdapter,
  sql,
  type Transaction,
} from 'kysely'
import type { Database } from './schema.js'
import { sqliteResultCode } from './sqlite-file.js'
import type { Backend, Db } from './types.js'

/** An auto-increment integer primary key named `id` (a global sequence on PostgreSQL). */
export function withAutoId<T extends string>(builder: CreateTableBuilder<T, never>, backend: Backend): CreateTableBuilder<T, 'id'> {
  return backend === 'postgres'
    ? builder.addColumn('id', 'bigint', (c) => c.generatedAlwaysAsIdentity().primaryKey())
    : builder.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
}

/**
 * Whether every statement is a network round trip worth saving (PostgreSQL), so a wishlist
 * write runs as one call of its function (migration 0027) and an uncached page as one
 * statement; SQLite runs in process, where a round trip costs nothing, and keeps the
 * transactions of several statements.
 */
export const statementsAreRoundTrips = (db: { getExecutor(): QueryExecutor }): boolean => backendOf(db) === 'postgres'

/** Row locks (FOR UPDATE) on PostgreSQL; on SQLite, with one connection, a transaction is exclusive already. */
const supportsRowLocks = (backend: Backend): boolean => backend === 'postgres'

/** The connection's own schema (PostgreSQL's `search_path`); undefined on SQLite, which has none. */
export async function currentSchema(db: Kysely<Database>): Promise<string | undefined> {
  if (backendOf(db) !== 'postgres') return undefined
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db)
  return rows[0]?.schema
}

/** The tables of the connection's own schema that have `column`, by name. */
export async function tablesWithColumn(
  executor: Kysely<Database> | Transaction<Database>,
  backend: Backend,
  column: string,
): Promise<string[]> {
  const { rows } =
    backend === 'postgres'
      ? await sql<{ name: string }>`select table_name as name from information_schema.columns
          where table_schema = current_schema() and column_name = ${column} order by table_name`.execute(executor)
      : await sql<{ name: string }>`select m.name as name from sqlite_master m join pragma_table_info(m.name) c
          where m.type = 'table' and c.name = ${column} order by m.name`.execute(executor)
  return rows.map((r) => r.name)
}

/**
 * The backend behind a Kysely instance or transaction, for code that receives only a
 * transaction (e.g. `recordFacts`) and must take a row lock on PostgreSQL.
 */
export const backendOf = (db: { getExecutor(): QueryExecutor }): Backend =>
  db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres'

/**
 * One multi-row INSERT as a precompiled query, for bulk loads (seeding). SQLite:
 * `values (?,…),…`; PostgreSQL: one array parameter per column through `unnest` (`bigint[]`
 * for numbers, else `text[]`, cast by the insert), as a huge VALUES list is slow to parse.
 */
export function bulkInsertQuery(backend: Backend, table: string, columns: readonly string[], rows: readonly unknown[][]): CompiledQuery {
  const target = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(',')})`
  if (backend === 'postgres') {
    const arrays = columns.map((_, i) => rows.map((r) => r[i] ?? null))
    const types = arrays.map((a) =>
      a.some((v) => v !== null) && a.every((v) => v === null || typeof v === 'number') ? 'bigint[]' : 'text[]',
    )
    return CompiledQuery.raw(`${target} select * from unnest(${types.map((t, i) => `$${i + 1}::${t}`).join(',')})`, arrays)
  }
  const params: unknown[] = []
  const tuples: string[] = []
  for (const row of rows) {
    for (const v of row) params.push(v)
    tuples.push(`(${row.map(() => '?').join(',')})`)
  }
  return CompiledQuery.raw(`${target} values ${tuples.join(',')}`, params)
}

/** Rows per statement of a bulk load: SQLite binds at most 32,766 parameters per statement. */
export const bulkInsertChunk = (backend: Backend, columns: number): number =>
  backend === 'postgres' ? 20_000 : Math.max(1, Math.min(4_000, Math.floor(30_000 / columns)))

/** The shop's row locked until the transaction `trx` ends (`share`: against its writers only), serialising work per shop. */
export async function lockShopRow(trx: Db, shopId: string, mode: 'update' | 'share'): Promise<void> {
  if (!supportsRowLocks(backendOf(trx))) return
  const q = trx.selectFrom('shops').select('id').where('id', '=', shopId)
  await (mode === 'update' ? q.forUpdate() : q.forShare()).execute()
}

/** Makes the transaction `trx` the only holder of `key` (PostgreSQL advisory lock; `wait: false` returns false if taken). */
export async function advisoryXactLock(trx: Db, key: string, wait: boolean): Promise<boolean> {
  if (backendOf(trx) !== 'postgres') return true
  if (wait) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx)
    return true
  }
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`.execute(trx)
  return rows[0]?.locked === true
}

/**
 * A query's rows in batches of `size`, as keyset pages (`page(after)`: the rows after the
 * last one of the previous page) on both backends: each page is one short query, so no
 * connection is held between pages, however slowly the consumer reads (a server-side cursor
 * would hold one of the pool's connections, a stream SQLite's only one, for the whole
 * read). `run` wraps each page's query (the export gate's connection share).
 */
export async function* inBatches<Row>(
  size: number,
  page: (after: Row | undefined) => { limit(n: number): { execute(): Promise<Row[]> } },
  run: (query: () => Promise<Row[]>) => Promise<Row[]> = (query) => query(),
): AsyncGenerator<Row[]> {
  for (let after: Row | undefined; ;) {
    const from = after
    const rows = await run(() => page(from).limit(size).execute())
    if (rows.length) yield rows
    if (rows.length < size) return
    after = rows[rows.length - 1]
  }
}

/** The selected rows locked until the transaction ends (FOR UPDATE) where the backend has row locks. */
export function lockedForUpdate<QB extends { forUpdate(): QB }>(qb: QB, backend: Backend): QB {
  return supportsRowLocks(backend) ? qb.forUpdate() : qb
}

/** A work-queue claim: `FOR UPDATE SKIP LOCKED` on PostgreSQL, so concurrent workers never claim the same row. */
export function lockSkippingLocked<QB extends { forUpdate(): QB; skipLocked(): QB }>(qb: QB, backend: Backend): QB {
  return supportsRowLocks(backend) ? qb.forUpdate().skipLocked() : qb
}

/** Whether the text column `column` contains `text`: `strpos` on PostgreSQL, `instr` on SQLite. */
export function textContains(db: Kysely<Database>, column: string, text: string): RawBuilder<boolean> {
  return backendOf(db) === 'postgres'
    ? sql<boolean>`strpos(${sql.ref(column)}, ${text}) > 0`
    : sql<boolean>`instr(${sql.ref(column)}, ${text}) > 0`
}

/** A unique or primary-key violation, on either backend. */
export function isUniqueViolation(err: unknown): boolean {
  if ((err as { code?: unknown } | null)?.code === '23505') return true
  const code = sqliteResultCode(err)
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/**
 * Rows passed as one JSON parameter (`rowsJson`), as a table `rows` of the given columns:
 * SQLite unpacks arrays with `json_each` (faster than objects), PostgreSQL objects with
 * `json_populate_recordset` against the row type of `table`. The statement text is the same
 * for any number of rows, so it is compiled and prepared once (a VALUES list is a new
 * statement for every n; docs/architecture.md, "Storage"; the figures: docs/performance.md,
 * "Changes for writes").
 */
export function jsonRows<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  columns: readonly (keyof Database[T] & string)[],
  json: string,
) {
  if (backendOf(db) === 'postgres')
    return sql<Selectable<Database[T]>>`json_populate_recordset(null::${sql.table(table)}, ${json}::json)`.as('rows')
  const fields = columns.map((c, i) => sql`value ->> ${sql.raw(String(i))} as ${sql.ref(c)}`)
  return sql<Selectable<Database[T]>>`(select ${sql.join(fields)} from json_each(${json}))`.as('rows')
}

/** The least of the values: PostgreSQL's `least`, SQLite's `min` of several arguments. */
export const least = (backend: Backend, ...values: Expression<unknown>[]): RawBuilder<number> =>
  sql<number>`${sql.raw(backend === 'postgres' ? 'least' : 'min')}(${sql.join(values)})`

/** The greatest of the values: PostgreSQL's `greatest`, SQLite's `max` of several arguments. */
export const greatest = (backend: Backend, ...values: Expression<unknown>[]): RawBuilder<number> =>
  sql<number>`${sql.raw(backend === 'postgres' ? 'greatest' : 'max')}(${sql.join(values)})`

/** The group's `value`s joined by `separator` (in `orderBy` order when given): PostgreSQL's `string_agg`, SQLite's `group_concat`. */
export function joinedText(
  backend: Backend,
  value: Expression<unknown>,
  separator: string,
  orderBy?: Expression<unknown>,
): RawBuilder<string | null> {
  const order = orderBy === undefined ? sql`` : sql` order by ${orderBy}`
  return sql<string | null>`${sql.raw(backend === 'postgres' ? 'string_agg' : 'group_concat')}(${value}, ${sql.lit(separator)}${order})`
}

/**
 * The pairs of a text `k:n,k:n` of integers, as a query of rows (`k`, `n`): PostgreSQL splits
 * it (`string_to_array`, `split_part`); SQLite reads it as the JSON object `{"k":n,"k":n}`.
 */
export const integerPairs = (backend: Backend, text: Expression<string | null>): RawBuilder<{ k: number; n: number }> =>
  backend === 'postgres'
    ? sql`select split_part(e, ':', 1)::integer as k, split_part(e, ':', 2)::integer as n from unnest(string_to_array(${text}, ',')) as p(e)`
    : sql`select cast(key as integer) as k, value as n from json_each('{"' || replace(replace(${text}, ':', '":'), ',', ',"') || '}')`

/** The JSON text `jsonRows` unpacks, on the backend of `db`. */
export const rowsJson = <Row extends object>(
  db: Kysely<Database>,
  rows: readonly Row[],
  columns: readonly (keyof Row & string)[],
): string =>
  JSON.stringify(
    backendOf(db) === 'postgres'
      ? rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])))
      : rows.map((r) => columns.map((c) => r[c])),
  )
