/**
 * The only place where SQLite and PostgreSQL differ. Everything else (returning,
 * onConflict upserts, limit/offset, transactions) is portable through Kysely.
 */
import { CompiledQuery, type CreateTableBuilder, type Kysely, type QueryExecutor, SqliteAdapter, sql } from 'kysely'
import type { Backend } from './types.js'
import { sqliteResultCode } from './sqlite-file.js'

/** An auto-increment integer primary key named `id` (a global sequence on PostgreSQL). */
export function withAutoId<T extends string>(
  builder: CreateTableBuilder<T, never>,
  backend: Backend,
): CreateTableBuilder<T, 'id'> {
  return backend === 'postgres'
    ? builder.addColumn('id', 'bigint', (c) => c.generatedAlwaysAsIdentity().primaryKey())
    : builder.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
}

/** Case-insensitive comparison key, identical on both backends for the characters we index. */
export const lowerSql = (column: string) => sql`lower(${sql.ref(column)})`

/**
 * Row locks: PostgreSQL takes them with FOR UPDATE; SQLite has a single writer, and
 * Kysely's SQLite driver serialises every query on one connection, so a transaction is
 * already exclusive there.
 */
const supportsRowLocks = (backend: Backend): boolean => backend === 'postgres'

export async function tableExists(db: Kysely<unknown>, name: string): Promise<boolean> {
  const tables = await db.introspection.getTables()
  return tables.some((t) => t.name === name)
}

/**
 * The backend behind a Kysely instance or transaction, for code that receives only a
 * transaction (e.g. `recordFacts`) and must take a row lock on PostgreSQL.
 */
export const backendOf = (db: { getExecutor(): QueryExecutor }): Backend =>
  db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres'

/**
 * One multi-row INSERT as a precompiled query, for bulk loads (seeding) where building a
 * query tree per value would cost more than the database work. SQLite: `values (?,…),…`.
 * PostgreSQL: one array parameter per column through `unnest` (a huge VALUES list is slow
 * to parse); a column of numbers is `bigint[]`, anything else `text[]`, and the insert's
 * assignment casts convert to the column types.
 */
export function bulkInsertQuery(backend: Backend, table: string, columns: readonly string[], rows: readonly unknown[][]): CompiledQuery {
  const target = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(',')})`
  if (backend === 'postgres') {
    const arrays = columns.map((_, i) => rows.map((r) => r[i] ?? null))
    const types = arrays.map((a) => (a.some((v) => v !== null) && a.every((v) => v === null || typeof v === 'number') ? 'bigint[]' : 'text[]'))
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

/** The selected rows locked until the transaction ends (FOR UPDATE) where the backend has row locks. */
export function lockedForUpdate<QB extends { forUpdate(): QB }>(qb: QB, backend: Backend): QB {
  return supportsRowLocks(backend) ? qb.forUpdate() : qb
}

/**
 * A work-queue claim: on PostgreSQL the selected rows are locked and rows another worker
 * holds are skipped (`FOR UPDATE SKIP LOCKED`), so concurrent workers never claim the
 * same row. SQLite has one writer; the claim runs as one UPDATE statement there.
 */
export function lockSkippingLocked<QB extends { forUpdate(): QB; skipLocked(): QB }>(qb: QB, backend: Backend): QB {
  return supportsRowLocks(backend) ? qb.forUpdate().skipLocked() : qb
}

/** A unique or primary-key violation, on either backend. */
export function isUniqueViolation(err: unknown): boolean {
  if ((err as { code?: unknown } | null)?.code === '23505') return true
  const code = sqliteResultCode(err)
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}
