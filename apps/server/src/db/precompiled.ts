/**
 * Hot reads compiled once. Kysely builds an operation tree and compiles it to SQL on every
 * call (bench profile of the GET page: several percent of the request's CPU across
 * `visitNode`, `freeze`, expression builders). A precompiled query runs its builder once,
 * with placeholder arguments, records which parameter slot holds which argument, and
 * afterwards only fills the slots: the same SQL text, so the database (and the SQLite
 * statement cache in connect.ts) sees the same statement every time.
 *
 * Only for queries whose shape does not depend on the argument values: every argument
 * must end up as a bound parameter (checked when compiling).
 */
import type { CompiledQuery, Compilable, Kysely } from 'kysely'
import type { Backend } from './connect.js'
import { backendOf } from './dialect.js'
import { executeInTransaction } from './group-commit.js'
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
 * Returns a function running the query built by `build` with the given arguments. The
 * first call on each backend compiles (with the executor it receives: a Kysely instance or
 * a transaction), so a template may live at module level and `build` may differ by backend
 * (`backendOf(db)`, e.g. a row lock on PostgreSQL only); `arity` is the number of arguments
 * after `db`.
 */
export function precompiled<Args extends unknown[], Row>(arity: number, build: (db: Kysely<Database>, ...args: Args) => Compilable<Row>) {
  const templates: Partial<Record<Backend, Template<Row>>> = {}
  return async (db: Kysely<Database>, ...args: Args): Promise<Row[]> => {
    const backend = backendOf(db)
    const { compiled, slots } = (templates[backend] ??= compileTemplate(db, build, arity))
    const query = { ...compiled, parameters: slots.map((s) => ('arg' in s ? args[s.arg] : s.value)) }
    const { rows } = await (backend === 'sqlite' && db.isTransaction ? executeInTransaction<Row>(db.getExecutor(), query) : db.executeQuery<Row>(query))
    return rows
  }
}

/**
 * A statement over rows (INSERT … VALUES, with ON CONFLICT or RETURNING as `build` adds).
 * One row, the case of every single add or remove, runs a template compiled once; more
 * rows (import, merge) are built per call, `chunk` rows per statement (SQLite binds at most
 * 32,766 parameters). `columns` lists every key of a row, in the template's order.
 */
export function rowsStatement<Row extends object, Out>(columns: readonly (keyof Row & string)[], build: (db: Kysely<Database>, rows: Row[]) => Compilable<Out>, chunk = 500) {
  const one = precompiled(columns.length, (db, ...values: unknown[]) => build(db, [Object.fromEntries(columns.map((c, i) => [c, values[i]])) as Row]))
  return async (db: Kysely<Database>, rows: readonly Row[]): Promise<Out[]> => {
    const [only] = rows
    if (rows.length === 1 && only) {
      if (Object.keys(only).length !== columns.length) throw new Error(`rowsStatement: a row has keys outside ${columns.join(', ')}`)
      return one(db, ...columns.map((c) => only[c]))
    }
    const out: Out[] = []
    for (let i = 0; i < rows.length; i += chunk) {
      const result = await db.executeQuery(build(db, rows.slice(i, i + chunk)).compile())
      out.push(...result.rows)
    }
    return out
  }
}
