/**
 * The SQLite file, through Node's built-in `node:sqlite` rather than better-sqlite3: it reads
 * rows for less CPU, writes as fast, and builds no native code at install (docs/performance.md,
 * "The SQLite driver"). On Node 22 it is flagged experimental, a warning `loadNodeSqlite`
 * keeps off the CLI's output; the API used here is the same on 22 and 24.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite'
import type { SqliteStatement } from 'kysely'
import { ensurePrivateFile, restrictFile } from '../lib/private-files.js'

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

const { DatabaseSync: Database, backup } = loadNodeSqlite()

/**
 * A bare connection (no pragmas) for the maintenance commands: backups, restores and the
 * server lock (db/sqlite-maintenance.ts, db/server-lock.ts).
 */
export function openPlainSqlite(file: string, opts: { readOnly?: boolean } = {}): DatabaseSync {
  return new Database(file, { readOnly: opts.readOnly === true })
}

/**
 * SQLite's online backup of `source` into the file `to`: a consistent copy of what the
 * connection sees (the WAL's committed frames included), taken in one step, so a writer
 * committing meanwhile never makes it start over.
 */
export async function backupSqlite(source: DatabaseSync, to: string): Promise<void> {
  // `rate`: pages per step; every page in one step.
  await backup(source, to, { rate: 2 ** 31 - 1 })
}

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
 * The result code of a `node:sqlite` error (its `errcode`) by name; an extended code not
 * listed goes by its primary code. Undefined for any other error.
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

/**
 * The database file `0600` before SQLite opens it: SQLite gives its `-wal` and `-shm` the
 * database file's mode whenever it creates them (on every start: the last connection to close
 * removes them), so they stay private whatever the umask (lib/private-files.ts).
 * A file from an older version loses its group and other bits, and so do a `-wal`/`-shm` it
 * left behind.
 */
function makePrivate(file: string): void {
  if (file === ':memory:' || file === '' || file.startsWith('file:')) return
  try {
    ensurePrivateFile(file)
    restrictFile(`${file}-wal`)
    restrictFile(`${file}-shm`)
  } catch {
    // A read-only mount, a folder we may not write: SQLite's open then does what it can, or says why.
  }
}

export function openSqliteFile(file: string): SqliteFile {
  makePrivate(file)
  const db = new Database(file)
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // SQLite's default page cache is 2 MB; 16 MB holds the hot indexes of a large shop.
  db.exec('PRAGMA cache_size = -16000')
  // A savepoint's sub-journal (group commit) spills to a temporary file past 64 KiB, one
  // pwrite per page: an add reaches that.
  db.exec('PRAGMA temp_store = MEMORY')
  // The checkpoint runs inside the COMMIT that crosses it and blocks the event loop: a shorter
  // WAL between checkpoints trades a few writes per second for a tighter add+remove tail
  // (docs/performance.md, "Where the data-access machinery pays").
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
