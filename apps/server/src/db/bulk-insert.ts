/**
 * Bulk loads (the analytics seed: a year of activity, millions of rows): rows inserted in
 * multi-row statements (`bulkInsertQuery`), as many per statement as the backend allows.
 */
import type { Insertable } from 'kysely'
import { backendOf, bulkInsertChunk, bulkInsertQuery } from './dialect.js'
import type { Database } from './schema.js'
import type { Db } from './types.js'

/** Inserts the rows into `table`; the columns are every key of any row (a key a row lacks is null there). */
export async function bulkInsert<T extends keyof Database & string>(db: Db, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  if (rows.length === 0) return
  // Every key of any row: a column taken from the first row alone would drop a key only
  // later rows have (an item's `purchased_at`), or give the other rows a value they lack.
  const keys = new Set<string>()
  for (const r of rows) for (const k in r) keys.add(k)
  const columns = [...keys]
  const backend = backendOf(db)
  const chunk = bulkInsertChunk(backend, columns.length)
  for (let i = 0; i < rows.length; i += chunk) {
    const slice = rows.slice(i, i + chunk).map((r) => columns.map((c) => (r as Record<string, unknown>)[c] ?? null))
    await db.executeQuery(bulkInsertQuery(backend, table, columns, slice))
  }
}
