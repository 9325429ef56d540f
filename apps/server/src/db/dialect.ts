/**
 * The only place where SQLite and PostgreSQL differ. Everything else (returning,
 * onConflict upserts, limit/offset, transactions) is portable through Kysely.
 */
import { type CreateTableBuilder, type Kysely, sql } from 'kysely'
import type { Backend } from './connect.js'

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
export const supportsRowLocks = (backend: Backend): boolean => backend === 'postgres'

export async function tableExists(db: Kysely<unknown>, name: string): Promise<boolean> {
  const tables = await db.introspection.getTables()
  return tables.some((t) => t.name === name)
}

/**
 * A work-queue claim: on PostgreSQL the selected rows are locked and rows another worker
 * holds are skipped (`FOR UPDATE SKIP LOCKED`), so concurrent workers never claim the
 * same row. SQLite has one writer; the claim runs as one UPDATE statement there.
 */
export function lockSkippingLocked<QB extends { forUpdate(): QB; skipLocked(): QB }>(qb: QB, backend: Backend): QB {
  return backend === 'postgres' ? qb.forUpdate().skipLocked() : qb
}
