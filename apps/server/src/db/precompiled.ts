/**
 * Hot queries compiled once: Kysely builds and compiles an operation tree on every call
 * (several percent of the GET page's CPU). A precompiled query runs its builder once with
 * placeholder arguments and afterwards only fills the parameter slots, so the database sees
 * the same SQL text every time. Every argument must end up as a bound parameter (checked).
 */
import { type CompiledQuery, type Compilable, type Insertable, type InsertQueryBuilder, type InsertResult, type Kysely, sql } from 'kysely'
import type { Backend } from './types.js'
import { backendOf, jsonRows, rowsJson } from './dialect.js'
import type { Database } from './schema.js'

type Slot = { arg: number } | { value: unknown }

interface Template<Row> {
  compiled: CompiledQuery<Row>
  slots: Slot[]
}

/**
 * SQL texts of compiled templates. PostgreSQL runs these as named prepared statements (a
 * handful, one each per connection: db/connect.ts), so the server parses and plans them
 * once per connection instead of on every call.
 */
export const precompiledSql = new Set<string>()

const placeholder = (i: number) => `\u0000precompiled-arg-${i}\u0000`

function compileTemplate<Args extends unknown[], Row>(db: Kysely<Database>, build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>, arity: number): Template<Row> {
  const placeholders = Array.from({ length: arity }, (_, i) => placeholder(i))
  const compiled = build(db, ...(placeholders as unknown as Args)).compile()
  const slots: Slot[] = compiled.parameters.map((p) => {
    const i = placeholders.indexOf(p as string)
    return i === -1 ? { value: p } : { arg: i }
  })
  for (let i = 0; i < arity; i++) {
    if (!slots.some((s) => 'arg' in s && s.arg === i)) throw new Error(`precompiled query: argument ${i} is not a bound parameter`)
  }
  if (compiled.sql.includes('\u0000')) throw new Error('precompiled query: an argument was inlined into the SQL')
  precompiledSql.add(compiled.sql)
  return { compiled, slots }
}

/**
 * A function running the query `build` makes from its `arity` arguments (after `db`). It
 * compiles on the first call per backend, so `build` may differ by backend (`backendOf(db)`).
 */
export function precompiled<Args extends unknown[], Row>(arity: number, build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>) {
  const templates: Partial<Record<Backend, Template<Row>>> = {}
  return async (db: Kysely<Database>, ...args: Args): Promise<Row[]> => {
    const backend = backendOf(db)
    const { compiled, slots } = (templates[backend] ??= compileTemplate(db, build, arity))
    const query = { ...compiled, parameters: slots.map((s) => ('arg' in s ? args[s.arg] : s.value)) }
    return (await db.executeQuery<Row>(query)).rows
  }
}

/**
 * An INSERT of rows into `table`, with ON CONFLICT or RETURNING as `tail` adds. One row, the
 * case of every single add or remove, runs a template of one VALUES row; more rows (the
 * analytics applier's batches, import, merge) run a template that takes them as one JSON
 * parameter (`jsonRows`). Both are compiled once. `columns` lists every key of a row.
 */
export function rowsStatement<T extends keyof Database & string, Out = never>(
  table: T,
  columns: readonly (keyof Insertable<Database[T]> & keyof Database[T] & string)[],
  tail: (q: InsertQueryBuilder<Database, T, InsertResult>) => Compilable<Out> = (q) => q as unknown as Compilable<Out>,
) {
  type Row = Insertable<Database[T]>
  const one = precompiled(columns.length, (db, ...values: unknown[]) => tail(db.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, values[i]])) as Row)))
  // SQLite needs the WHERE to tell an upsert's ON CONFLICT from a join's ON.
  const many = precompiled(1, (db, json: string) =>
    tail(db.insertInto(table).columns(columns).expression(sql`select ${sql.join(columns.map((c) => sql.ref(`rows.${c}`)))} from ${jsonRows(db, table, columns, json)} where true`)),
  )
  return async (db: Kysely<Database>, rows: readonly Row[]): Promise<Out[]> => {
    // Both templates take the listed columns only: a row with other keys is a caller's mistake.
    for (const row of rows) if (Object.keys(row).length !== columns.length) throw new Error(`rowsStatement: a row has keys outside ${columns.join(', ')}`)
    const [only] = rows
    if (rows.length === 0) return []
    if (rows.length === 1 && only) return one(db, ...columns.map((c) => only[c as keyof Row]))
    return many(db, rowsJson(db, rows, columns as readonly (keyof Row & string)[]))
  }
}
