/**
 * The SQLite file, through Node's built-in `node:sqlite`.
 *
 * Why not better-sqlite3: on the service's statements `node:sqlite` reads rows faster for the
 * same CPU and writes as fast (bench/sqlite-drivers.ts; figures in docs/performance.md,
 * "SQLite driver"), and it is part of Node, so installing the project builds or downloads no
 * native code. On Node 22 the module is still flagged experimental: it says so once on
 * stderr when loaded, which `loadNodeSqlite` keeps off every CLI command's output. The part
 * of its API used here (prepare, run/all/get/iterate, columns, exec, isTransaction) is the
 * same on 22 and 24, and CI runs the server suite on both.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite'
import type { SqliteStatement } from 'kysely'

/** Loads `node:sqlite` without the one experimental-feature warning Node 22 prints for it. */
function loadNodeSqlite(): typeof import('node:sqlite') {
  const emitWarning = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message
    if (/^SQLite is an experimental feature/.test(text)) return
    ;(emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
  try {
    return process.getBuiltinModule('node:sqlite')
  } finally {
    process.emitWarning = emitWarning
  }
}

const { DatabaseSync: Database } = loadNodeSqlite()

export interface SqliteFile {
  readonly db: DatabaseSync
  /** A prepared statement in the shape Kysely's SQLite driver runs (parameters as one array). */
  statement(sql: string): SqliteStatement
  exec(sql: string): void
  readonly inTransaction: boolean
  /** `busy_timeout` as opened: how long a statement waits for another connection's write lock. */
  readonly busyTimeoutMs: number
  close(): void
}

const BUSY_TIMEOUT_MS = 5000

/** SQLite's names for the result codes the service tells apart, by (extended) code. */
const RESULT_CODES: Record<number, string> = {
  5: 'SQLITE_BUSY',
  14: 'SQLITE_CANTOPEN',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
}

/**
 * The SQLite result code of a `node:sqlite` error by name (`SQLITE_BUSY`,
 * `SQLITE_CONSTRAINT_UNIQUE`…; an extended code not listed goes by its primary code), or
 * undefined for any other error. Node's errors all carry `code: 'ERR_SQLITE_ERROR'` and the
 * number in `errcode`.
 */
export function sqliteResultCode(error: unknown): string | undefined {
  const errcode = (error as { errcode?: unknown } | null)?.errcode
  if (typeof errcode !== 'number') return undefined
  return RESULT_CODES[errcode] ?? RESULT_CODES[errcode & 0xff]
}

function kyselyStatement(stmt: StatementSync): SqliteStatement {
  const args = (parameters: ReadonlyArray<unknown>) => parameters as SQLInputValue[]
  return {
    reader: stmt.columns().length > 0,
    all: (parameters) => stmt.all(...args(parameters)),
    run: (parameters) => stmt.run(...args(parameters)),
    iterate: (parameters) => stmt.iterate(...args(parameters)),
  }
}

export function openSqliteFile(file: string): SqliteFile {
  const db = new Database(file)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // SQLite's default page cache is 2 MB; 16 MB holds the hot indexes of a large shop.
  db.exec('PRAGMA cache_size = -16000')
  // Each transaction runs in a savepoint of its batch (db/group-commit.ts), and SQLite keeps
  // the pages it changes in a sub-journal that spills to a temporary file past 64 KiB: an
  // add reaches that, which cost a pwrite per page. Kept in memory instead.
  db.exec('PRAGMA temp_store = MEMORY')
  // A WAL checkpoint runs inside the COMMIT that crosses this many pages and copies every
  // page the WAL holds into the database file, blocking the event loop meanwhile: at
  // SQLite's default of 1000 pages about 7 ms under the bench's add+remove load, so the
  // requests of that batch wait for it. Checkpoint size sets the write tail (bench
  // add+remove, p99/p50: 250 pages 2.6-2.9x, 500 pages 3.0-3.2x, 1000 pages 3.5-4.3x,
  // 4000 pages 6.5-6.8x) against throughput (hot pages copied more often: 500 pages
  // about 5-10% fewer req/s than 1000, within the runs' noise).
  db.exec('PRAGMA wal_autocheckpoint = 500')
  return {
    db,
    statement: (sql) => kyselyStatement(db.prepare(sql)),
    exec: (sql) => db.exec(sql),
    get inTransaction() {
      return db.isTransaction
    },
    busyTimeoutMs: BUSY_TIMEOUT_MS,
    close: () => db.close(),
  }
}
