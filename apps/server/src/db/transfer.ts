/**
 * `wishlist move`: everything in one database copied into another, SQLite → PostgreSQL or
 * PostgreSQL → SQLite by the same code (docs/operations.md, "Backups and moving up").
 *
 * The tables and their columns come from the migrated databases themselves
 * (db/introspection.ts), so a new migration's tables and columns move without an edit here.
 * Each table is read in its canonical order (primary key; text compared byte by byte on both
 * backends) from one snapshot of the source, written in multi-row statements, one
 * transaction per table, and checksummed on the way in; then the target is read back in the
 * same order and its checksum and row count compared.
 */
import { existsSync, rmSync } from 'node:fs'
import type { DatabaseTarget } from '../config.js'
import { openStorage } from './connect.js'
import {
  appliedMigrations,
  type ColumnInfo,
  dataTables,
  dependencyOrder,
  describeTables,
  type TableInfo,
  type ValueKind,
} from './introspection.js'
import { KNOWN_MIGRATIONS, migrateToLatest } from './migrate.js'
import { openRawConnection, type RawConnection, type Row } from './raw-connection.js'
import { RefusalError } from './refusal.js'
import { type ColumnForm, passesAsIs, TableChecksum, valueFor } from './row-checksum.js'
import { type HeldLock, holdExclusively } from './server-lock.js'
import type { Backend } from './types.js'

/**
 * Columns each database keeps itself: not copied (they take their default) and not compared.
 * `wishlist_owners.version` is the page cache's key, moved by triggers (migration 0006) with
 * values of each backend's own kind (random on SQLite, transaction ids on PostgreSQL): a
 * copied value could come round again there. Any value is right as long as every write
 * from then on changes it, and the caches of the new deployment start empty.
 */
const KEPT_BY_TRIGGERS: Readonly<Record<string, readonly string[]>> = { wishlist_owners: ['version'] }

export interface TableFigure {
  rows: number
  checksum: string
}

export interface MoveReport {
  tables: Record<string, TableFigure>
  seconds: number
  /** One line per table whose copy differs from its source; empty when the move is exact. */
  differences: string[]
}

export interface MoveOptions {
  source: DatabaseTarget
  target: DatabaseTarget
  /** Empty a non-empty target first (a move interrupted half-way). */
  force?: boolean
  /** Rows read and written per statement. */
  batchRows?: number
  /** Called once a table is committed on the target (progress; tests interrupt a move here). */
  afterTable?: (table: string, rows: number) => void | Promise<void>
}

const asHex = (v: unknown) =>
  (v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : Buffer.from(String(v))).toString('hex')

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

export const describeTarget = (t: DatabaseTarget): string =>
  t.kind === 'sqlite' ? `sqlite:${t.file}` : `PostgreSQL ${redactUrl(t.url)}${t.schema ? ` (schema ${t.schema})` : ''}`

function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres://…'
  }
}

function sameDatabase(a: DatabaseTarget, b: DatabaseTarget): boolean {
  if (a.kind === 'sqlite' && b.kind === 'sqlite') return a.file === b.file
  if (a.kind === 'postgres' && b.kind === 'postgres') return a.url === b.url && a.schema === b.schema
  return false
}

/** Refuses a database this code cannot read: never migrated by this service, or migrated past it. */
function checkSchema(what: string, applied: string[] | undefined, hasShops: boolean): void {
  if (applied === undefined || !hasShops)
    throw new RefusalError(`${what} is not a wishlist database (no migrations table or shops table); check the URL`)
  const unknown = applied.filter((m) => !KNOWN_MIGRATIONS.includes(m))
  if (unknown.length) {
    throw new RefusalError(
      `${what} has schema ${unknown[unknown.length - 1]}, newer than this version of wishlist (${KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.length - 1]}); upgrade wishlist, then run the command again`,
    )
  }
}

async function migrate(target: DatabaseTarget): Promise<void> {
  const storage = openStorage(target.kind === 'sqlite' ? { ...target, groupCommit: false } : { ...target, poolMax: 1 })
  try {
    await migrateToLatest(storage)
  } finally {
    await storage.destroy()
  }
}

/** The column's kind for the move: the more specific of its two declarations (e.g. `jsonb` on PostgreSQL over `text` on SQLite). */
function movedKind(a: ValueKind, b: ValueKind): ValueKind {
  if (a === b) return a
  if (a === 'text' || a === 'integer') return b
  return a
}

interface TablePlan {
  name: string
  columns: { name: string; kind: ValueKind; targetType: string; source: ColumnForm; target: ColumnForm }[]
  orderBy: (backend: Backend) => string
  autoId: ColumnInfo | undefined
}

function planTables(source: TableInfo[], target: TableInfo[], sourceBackend: Backend, targetBackend: Backend): TablePlan[] {
  const targetByName = new Map(target.map((t) => [t.name, t]))
  const onlySource = source.filter((t) => !targetByName.has(t.name)).map((t) => t.name)
  const onlyTarget = target.filter((t) => !source.some((s) => s.name === t.name)).map((t) => t.name)
  if (onlySource.length || onlyTarget.length) {
    throw new RefusalError(
      `the two databases have different tables (${[...onlySource.map((t) => `${t} only in the source`), ...onlyTarget.map((t) => `${t} only in the target`)].join(', ')}); move between databases of this service only`,
    )
  }
  return dependencyOrder(source).map((s) => {
    const t = targetByName.get(s.name)!
    const kept = KEPT_BY_TRIGGERS[s.name] ?? []
    const sourceCols = s.columns.filter((c) => !kept.includes(c.name))
    const targetCols = t.columns.filter((c) => !kept.includes(c.name))
    const missing = [
      ...sourceCols.filter((c) => !targetCols.some((x) => x.name === c.name)),
      ...targetCols.filter((c) => !sourceCols.some((x) => x.name === c.name)),
    ]
    if (missing.length)
      throw new RefusalError(
        `table ${s.name} has different columns in the two databases (${missing.map((c) => c.name).join(', ')}); move between databases of this service only`,
      )
    const columns = sourceCols.map((c) => {
      const tc = targetCols.find((x) => x.name === c.name)!
      const kind = movedKind(c.kind, tc.kind)
      const form = (backend: Backend, declared: ValueKind): ColumnForm => ({
        name: c.name,
        kind,
        parsedJson: backend === 'postgres' && declared === 'json',
      })
      return { name: c.name, kind, targetType: tc.type, source: form(sourceBackend, c.kind), target: form(targetBackend, tc.kind) }
    })
    // Tables without a primary key (none today) are ordered by every column.
    const key = s.primaryKey.length ? s.primaryKey : columns.map((c) => c.name)
    const kindOf = (name: string) => columns.find((c) => c.name === name)?.kind ?? 'text'
    return {
      name: s.name,
      columns,
      // PostgreSQL compares text by the database's collation; "C" compares bytes, as SQLite does.
      orderBy: (backend: Backend) =>
        key.map((k) => (backend === 'postgres' && kindOf(k) === 'text' ? `${quote(k)} collate "C"` : quote(k))).join(', '),
      autoId: t.columns.find((c) => c.autoId) ?? s.columns.find((c) => c.autoId),
    }
  })
}

const selectSql = (plan: TablePlan, backend: Backend) =>
  `select ${plan.columns.map((c) => quote(c.name)).join(', ')} from ${quote(plan.name)} order by ${plan.orderBy(backend)}`

/** The largest rows-per-statement on SQLite: at most 32,766 bound parameters a statement. */
const sqliteRowsPerStatement = (columns: number) => Math.max(1, Math.min(2_000, Math.floor(32_000 / columns)))

/** Writes one batch of rows into the target in multi-row statements. */
function batchWriter(target: RawConnection, plan: TablePlan, hasIdentity: boolean): (rows: readonly Row[]) => Promise<void> {
  const names = plan.columns.map((c) => c.name)
  const convert = plan.columns.map((c) =>
    passesAsIs(c.kind) ? undefined : (v: unknown) => valueFor(target.backend, c.kind, v, c.source, c.target),
  )
  const value = (row: Row, i: number) => {
    const v = row[names[i]!]
    const f = convert[i]
    return f ? f(v) : (v ?? null)
  }
  const into = `insert into ${quote(plan.name)} (${names.map(quote).join(', ')})`
  if (target.backend === 'postgres') {
    // One JSON parameter per batch, turned into rows of the table's own type by PostgreSQL:
    // V8 writes JSON far faster than pg writes array literals, and a long VALUES list is
    // slow to parse. Bytes go as bytea's hex text; dates as ISO text (JSON's own form).
    const text = `${into}${hasIdentity ? ' overriding system value' : ''} select ${names.map(quote).join(', ')} from json_populate_recordset(null::${quote(plan.name)}, $1::json)`
    const asJson = plan.columns.map((c) =>
      c.kind === 'bytes' ? (v: unknown) => (v === null || v === undefined ? null : `\\x${asHex(v)}`) : convert[plan.columns.indexOf(c)],
    )
    const plain = asJson.every((f) => f === undefined)
    return async (rows) => {
      const json = plain
        ? JSON.stringify(rows)
        : JSON.stringify(
            rows.map((row) => {
              const out: Row = {}
              for (let i = 0; i < names.length; i++) {
                const f = asJson[i]
                const v = row[names[i]!]
                out[names[i]!] = f ? f(v) : v
              }
              return out
            }),
          )
      await target.run(text, [json])
    }
  }
  const per = sqliteRowsPerStatement(names.length)
  const tuple = `(${names.map(() => '?').join(',')})`
  return async (rows) => {
    for (let start = 0; start < rows.length; start += per) {
      const slice = rows.slice(start, start + per)
      const params: unknown[] = []
      for (const row of slice) for (let i = 0; i < names.length; i++) params.push(value(row, i))
      await target.run(`${into} values ${Array(slice.length).fill(tuple).join(',')}`, params)
    }
  }
}

/** The highest id an auto-increment column has handed out (above max(id) when rows were deleted). */
async function idHighWater(conn: RawConnection, table: string, column: string): Promise<number> {
  const [max] = await conn.all(`select max(${quote(column)}) as n from ${quote(table)}`)
  let high = Number(max?.n ?? 0)
  if (conn.backend === 'sqlite') {
    const seq = await conn.all(`select name from sqlite_master where name = 'sqlite_sequence'`)
    if (seq.length) {
      const [row] = await conn.all('select seq from sqlite_sequence where name = ?', [table])
      high = Math.max(high, Number(row?.seq ?? 0))
    }
  } else {
    const [row] = await conn.all(`select pg_get_serial_sequence($1, $2) as seq`, [quote(table), column])
    if (row?.seq) {
      const [state] = await conn.all(`select last_value, is_called from ${String(row.seq)}`)
      if (state?.is_called) high = Math.max(high, Number(state.last_value))
    }
  }
  return high
}

/** The target's counter set so its next id follows the source's last: ids are never handed out twice. */
async function carryIdCounter(target: RawConnection, table: string, column: string, high: number): Promise<void> {
  if (target.backend === 'postgres') {
    const [row] = await target.all(`select pg_get_serial_sequence($1, $2) as seq`, [quote(table), column])
    if (!row?.seq) return
    await target.run(
      high > 0 ? 'select setval($1::regclass, $2, true)' : 'select setval($1::regclass, 1, false)',
      high > 0 ? [row.seq, high] : [row.seq],
    )
    return
  }
  if (high <= 0) return
  const [existing] = await target.all('select seq from sqlite_sequence where name = ?', [table])
  if (existing) await target.run('update sqlite_sequence set seq = ? where name = ?', [Math.max(high, Number(existing.seq)), table])
  else await target.run('insert into sqlite_sequence (name, seq) values (?, ?)', [table, high])
}

/**
 * What the target keeps beside a table's rows, set aside while they are copied and put back
 * before the copying transaction commits (so an interrupted copy leaves it as it was):
 * - its triggers: a copy brings the source's state, derived data included (rollups,
 *   counters, versions); a trigger deriving it again from the copied rows would count it
 *   twice (and costs a statement per row). PostgreSQL: DISABLE TRIGGER USER (the tables'
 *   owner runs the move, as it ran the migrations); SQLite, which cannot disable one: dropped
 *   and created again from their own SQL;
 * - its secondary indexes (not those of the primary key or a constraint): built once from
 *   the loaded rows instead of updated row by row, as pg_restore does.
 */
async function setAside(target: RawConnection, table: string): Promise<() => Promise<void>> {
  if (target.backend === 'postgres') {
    const indexes = await target.all(
      `select i.indexname as name, i.indexdef as sql from pg_indexes i where i.schemaname = current_schema() and i.tablename = $1
        and not exists (select 1 from pg_constraint c where c.conrelid = $2::regclass and c.conname = i.indexname)`,
      [table, quote(table)],
    )
    for (const i of indexes) await target.run(`drop index ${quote(String(i.name))}`)
    await target.run(`alter table ${quote(table)} disable trigger user`)
    return async () => {
      await target.run(`alter table ${quote(table)} enable trigger user`)
      for (const i of indexes) await target.run(String(i.sql))
    }
  }
  // Automatic indexes (primary keys, UNIQUE constraints) have no SQL and stay.
  const kept = await target.all(
    `select type, name, sql from sqlite_master where type in ('trigger', 'index') and tbl_name = ? and sql is not null`,
    [table],
  )
  for (const o of kept) await target.run(`drop ${o.type === 'index' ? 'index' : 'trigger'} ${quote(String(o.name))}`)
  return async () => {
    for (const o of kept) await target.run(String(o.sql))
  }
}

async function nonEmptyTables(conn: RawConnection, tables: readonly TableInfo[]): Promise<string[]> {
  const out: string[] = []
  for (const t of tables) if ((await conn.all(`select 1 as one from ${quote(t.name)} limit 1`)).length) out.push(t.name)
  return out
}

async function emptyTables(target: RawConnection, tables: readonly TableInfo[]): Promise<void> {
  if (tables.length === 0) return
  await target.run('begin')
  try {
    if (target.backend === 'postgres') await target.run(`truncate table ${tables.map((t) => quote(t.name)).join(', ')}`)
    else {
      for (const t of [...tables].reverse()) await target.run(`delete from ${quote(t.name)}`)
      if ((await target.all(`select name from sqlite_master where name = 'sqlite_sequence'`)).length)
        await target.run('delete from sqlite_sequence')
    }
    await target.run('commit')
  } catch (err) {
    await target.run('rollback')
    throw err
  }
}

async function readChecksum(conn: RawConnection, plan: TablePlan, side: 'source' | 'target', batchRows: number): Promise<TableFigure> {
  const sum = new TableChecksum(plan.columns.map((c) => c[side]))
  for await (const rows of conn.batches(selectSql(plan, conn.backend), batchRows)) sum.add(rows)
  return { rows: sum.rows, checksum: sum.digest() }
}

/**
 * Every data table's row count and checksum, as `move` computes them: for checking that a
 * database is what it was (a refused command wrote nothing) or that two databases hold the
 * same rows.
 */
export async function checksumDatabase(target: DatabaseTarget): Promise<Record<string, TableFigure>> {
  const conn = await openRawConnection(target)
  try {
    const tables = dataTables(await describeTables(conn))
    const out: Record<string, TableFigure> = {}
    for (const plan of planTables(tables, tables, conn.backend, conn.backend))
      out[plan.name] = await readChecksum(conn, plan, 'source', 5_000)
    return out
  } finally {
    await conn.close()
  }
}

/** Takes the maintenance lock of a SQLite side (db/server-lock.ts): no server may run on it during the move. */
function lockSide(t: DatabaseTarget): HeldLock | undefined {
  return t.kind === 'sqlite' ? holdExclusively(t.file, 'wishlist move') : undefined
}

export async function moveDatabase(opts: MoveOptions): Promise<MoveReport> {
  const started = performance.now()
  const { source, target } = opts
  const batchRows = opts.batchRows ?? 5_000
  if (sameDatabase(source, target))
    throw new RefusalError(`the source (DATABASE_URL) and --to are the same database; give --to another database`)
  for (const side of [source, target]) {
    if (side.kind === 'sqlite' && side.file === ':memory:')
      throw new RefusalError('an in-memory database cannot be moved from or to; give a file (sqlite:PATH)')
  }
  if (source.kind === 'sqlite' && !existsSync(source.file))
    throw new RefusalError(`there is no database at ${source.file} to move; check DATABASE_URL`)

  // A SQLite target that does not exist yet is created by opening it: removed again on a refusal.
  const newFile = target.kind === 'sqlite' && !existsSync(target.file) ? target.file : undefined
  const locks: HeldLock[] = []
  const conns: RawConnection[] = []
  let refused = false
  try {
    for (const side of [source, target]) {
      const lock = lockSide(side)
      if (lock) locks.push(lock)
    }
    const src = await openRawConnection(source)
    conns.push(src)
    const dst = await openRawConnection(target)
    conns.push(dst)

    // Every check before anything is written to either side.
    const srcTables = await describeTables(src)
    checkSchema(
      `the source ${describeTarget(source)}`,
      await appliedMigrations(src, srcTables),
      srcTables.some((t) => t.name === 'shops'),
    )
    const dstTables = await describeTables(dst)
    const dstApplied = await appliedMigrations(dst, dstTables)
    if (dstTables.length)
      checkSchema(
        `the target ${describeTarget(target)}`,
        dstApplied,
        dstTables.some((t) => t.name === 'shops'),
      )
    const foreign = dataTables(dstTables).filter((t) => !srcTables.some((s) => s.name === t.name))
    const occupied = await nonEmptyTables(dst, dataTables(dstTables))
    if (occupied.length && !opts.force) {
      throw new RefusalError(
        `the target ${describeTarget(target)} is not empty (${occupied.slice(0, 3).join(', ')}${occupied.length > 3 ? ', …' : ''} hold rows); move into an empty database, or add --force to empty it first (a move interrupted half-way)`,
      )
    }
    if (foreign.length && occupied.some((t) => foreign.some((f) => f.name === t))) {
      throw new RefusalError(
        `the target ${describeTarget(target)} holds tables this service does not know (${foreign.map((t) => t.name).join(', ')}); move into an empty database`,
      )
    }

    // Both sides at this code's schema, so their tables and columns match.
    await migrate(source)
    await migrate(target)
    const plans = planTables(dataTables(await describeTables(src)), dataTables(await describeTables(dst)), src.backend, dst.backend)
    if (opts.force) await emptyTables(dst, await describeTables(dst).then(dataTables))

    // One snapshot of the source for the whole read.
    await src.run(src.backend === 'postgres' ? 'begin isolation level repeatable read read only' : 'begin')
    const copied: Record<string, TableFigure> = {}
    for (const plan of plans) {
      const write = batchWriter(dst, plan, plan.autoId !== undefined)
      const sum = new TableChecksum(plan.columns.map((c) => c.source))
      await dst.run('begin')
      try {
        const putBack = await setAside(dst, plan.name)
        // The next batch is read (and checksummed) while the last one is written.
        let writing: Promise<void> | undefined
        for await (const rows of src.batches(selectSql(plan, src.backend), batchRows)) {
          sum.add(rows)
          await writing
          writing = write(rows)
          writing.catch(() => {}) // awaited above or below; never an unhandled rejection meanwhile
        }
        await writing
        await putBack()
        if (plan.autoId) await carryIdCounter(dst, plan.name, plan.autoId.name, await idHighWater(src, plan.name, plan.autoId.name))
        await dst.run('commit')
      } catch (err) {
        await dst.run('rollback').catch(() => {})
        throw err
      }
      copied[plan.name] = { rows: sum.rows, checksum: sum.digest() }
      await opts.afterTable?.(plan.name, sum.rows)
    }
    await src.run('commit')
    await dst.run(dst.backend === 'postgres' ? 'analyze' : 'pragma optimize')

    const tables: Record<string, TableFigure> = {}
    const differences: string[] = []
    for (const plan of plans) {
      const theirs = await readChecksum(dst, plan, 'target', batchRows)
      const ours = copied[plan.name]!
      tables[plan.name] = ours
      if (theirs.rows !== ours.rows) differences.push(`${plan.name}: ${ours.rows} rows in the source, ${theirs.rows} in the target`)
      else if (theirs.checksum !== ours.checksum)
        differences.push(
          `${plan.name}: the rows differ (checksum ${ours.checksum.slice(0, 12)}… in the source, ${theirs.checksum.slice(0, 12)}… in the target)`,
        )
    }
    return { tables, seconds: Math.round((performance.now() - started) / 10) / 100, differences }
  } catch (err) {
    refused = err instanceof RefusalError
    throw err
  } finally {
    for (const c of conns.reverse()) await c.close().catch(() => {})
    if (refused && newFile) for (const f of [newFile, `${newFile}-wal`, `${newFile}-shm`]) rmSync(f, { force: true })
    for (const l of locks.reverse()) l.release()
  }
}
