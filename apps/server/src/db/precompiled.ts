/**
 * Hot queries compiled once: Kysely builds and compiles an operation tree on every call
 * (docs/performance.md, "Where the data-access machinery pays"). A precompiled query runs its
 * builder once with placeholder parameters and afterwards only fills the parameter slots, so
 * the database sees the same SQL text every time. Every parameter the builder reads must end
 * up as a bound parameter (checked).
 */
import { type CompiledQuery, type Compilable, type Insertable, type InsertQueryBuilder, type InsertResult, sql } from 'kysely'
import type { Backend, Db } from './types.js'
import { backendOf, jsonRows, rowsJson } from './dialect.js'
import type { Database } from './schema.js'

/**
 * A template's bound parameters, slot by slot: `keys[i]` names the parameter that fills slot
 * i (`fields[i]` its field, for an object parameter such as an owner), or, when undefined,
 * `values[i]` is a value of the template itself.
 */
interface Template<Row> {
  compiled: CompiledQuery<Row>
  keys: (string | undefined)[]
  fields: (string | undefined)[]
  values: unknown[]
}

/**
 * SQL texts of compiled templates. PostgreSQL runs these as named prepared statements (a
 * handful, one each per connection: db/connect.ts), so the server parses and plans them
 * once per connection instead of on every call.
 */
export const precompiledSql = new Set<string>()

/**
 * SQL texts of compiled templates that write although they are a SELECT (a call of a
 * function that writes: migration 0027), for the change stamp, which takes every other SELECT
 * for a read (db/connect.ts).
 */
export const writingSql = new Set<string>()

const MARK = '\u0000'

/**
 * The placeholder of a named parameter: an object Kysely binds as a value (its identity is the
 * slot), whose fields are placeholder strings (`owner.id`). Kysely probes a value for being an
 * expression (`toOperationNode`), so field reads of a parameter bound whole are not fields.
 */
function placeholderOf(key: string) {
  const fields = new Map<string, string>()
  const whole: object = new Proxy(
    { [Symbol.toPrimitive]: () => `${MARK}${key}${MARK}` },
    {
      get(target, field) {
        if (typeof field !== 'string') return Reflect.get(target, field)
        let text = fields.get(field)
        if (text === undefined) fields.set(field, (text = `${MARK}${key}.${field}${MARK}`))
        return text
      },
    },
  )
  return { whole, fields }
}

function compileTemplate<P extends object, Row>(db: Db, build: (db: Db, p: P) => Compilable<Row>, writes: boolean): Template<Row> {
  const read = new Map<string, ReturnType<typeof placeholderOf>>()
  const named = new Proxy(
    {},
    {
      get(_, key) {
        if (typeof key !== 'string') return undefined
        let placeholder = read.get(key)
        if (placeholder === undefined) read.set(key, (placeholder = placeholderOf(key)))
        return placeholder.whole
      },
    },
  )
  const compiled = build(db, named as P).compile()
  const slotOf = new Map<unknown, { key: string; field?: string }>()
  for (const [key, { whole, fields }] of read) {
    slotOf.set(whole, { key })
    for (const [field, text] of fields) slotOf.set(text, { key, field })
  }
  const template: Template<Row> = { compiled, keys: [], fields: [], values: [] }
  const bound = new Set<string>()
  for (const value of compiled.parameters) {
    const slot = slotOf.get(value)
    template.keys.push(slot?.key)
    template.fields.push(slot?.field)
    template.values.push(slot === undefined ? value : undefined)
    if (slot !== undefined) bound.add(slot.field === undefined ? slot.key : `${slot.key}.${slot.field}`)
  }
  if (compiled.sql.includes(MARK)) throw new Error('precompiled query: a parameter was inlined into the SQL')
  for (const [key, { fields }] of read) {
    if (bound.has(key)) continue
    const unbound = (fields.size === 0 ? [key] : [...fields.keys()].map((f) => `${key}.${f}`)).find((path) => !bound.has(path))
    if (unbound !== undefined) throw new Error(`precompiled query: ${unbound} is not a bound parameter`)
  }
  precompiledSql.add(compiled.sql)
  if (writes) writingSql.add(compiled.sql)
  return template
}

/**
 * A function running the query `build` makes from its named parameters `p` (an object; one
 * level of fields, such as an owner's type and id, is filled too). It compiles on the first
 * call per backend, so `build` may differ by backend (`backendOf(db)`). `writes`: a SELECT
 * that writes (it calls a function that does).
 */
export function precompiled<P extends object, Row>(
  build: (db: Db, p: P) => Compilable<Row>,
  opts: { writes?: boolean } = {},
): (db: Db, p: P) => Promise<Row[]> {
  const templates: Partial<Record<Backend, Template<Row>>> = {}
  return async (db, p) => {
    const { compiled, keys, fields, values } = (templates[backendOf(db)] ??= compileTemplate(db, build, opts.writes === true))
    const named = p as Record<string, unknown>
    const n = keys.length
    // Sized once: a growing array would be allocated again as it grows.
    const parameters = new Array<unknown>(n)
    for (let i = 0; i < n; i++) {
      const key = keys[i]
      const field = fields[i]
      parameters[i] = key === undefined ? values[i] : field === undefined ? named[key] : (named[key] as Record<string, unknown>)[field]
    }
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows
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
  // The row itself is the one-row template's named parameters.
  const one = precompiled((db, row: Row) => tail(db.insertInto(table).values(Object.fromEntries(columns.map((c) => [c, row[c]])) as Row)))
  // SQLite needs the WHERE to tell an upsert's ON CONFLICT from a join's ON.
  const many = precompiled((db, p: { json: string }) =>
    tail(
      db
        .insertInto(table)
        .columns(columns)
        .expression(
          sql`select ${sql.join(columns.map((c) => sql.ref(`rows.${c}`)))} from ${jsonRows(db, table, columns, p.json)} where true`,
        ),
    ),
  )
  return async (db: Db, rows: readonly Row[]): Promise<Out[]> => {
    // Both templates take the listed columns only: a row with other keys is a caller's mistake.
    for (const row of rows)
      if (Object.keys(row).length !== columns.length) throw new Error(`rowsStatement: a row has keys outside ${columns.join(', ')}`)
    const [only] = rows
    if (rows.length === 0) return []
    if (rows.length === 1 && only) return one(db, only)
    return many(db, { json: rowsJson(db, rows, columns as readonly (keyof Row & string)[]) })
  }
}
