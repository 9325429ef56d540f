/**
 * Who holds a SQLite database: the servers serving it, or one maintenance command (restore,
 * move) that must have it to itself. The lock lives in a companion file, `<database>.lock`,
 * a small SQLite database in rollback-journal mode whose file locks SQLite takes and the
 * operating system releases when a process ends, however it ends (no stale lock after a
 * crash or `kill -9`):
 * - a server holds a read transaction on it (a shared lock) for as long as it runs, so
 *   several servers (and the other CLI commands, which take no lock) share the database;
 * - a maintenance command takes an exclusive transaction on it without waiting: it fails
 *   while any server runs, and while it holds it no server starts.
 * The database itself is never locked for this: its WAL readers and writers are untouched.
 */
import { dirname } from 'node:path'
import type { DatabaseSync } from 'node:sqlite'
import { ensurePrivateDir, ensurePrivateFile } from '../lib/private-files.js'
import { RefusalError } from './refusal.js'
import { openPlainSqlite, sqliteResultCode } from './sqlite-file.js'

export const lockFileOf = (databaseFile: string): string => `${databaseFile}.lock`

/** The database is held by someone else: a running server, or a restore or move. */
export class DatabaseInUseError extends RefusalError {}

export interface HeldLock {
  release(): void
}

/** How long a starting server waits for another server's brief setup of the lock file. */
const SERVER_WAIT_MS = 2000

function openLockFile(databaseFile: string, busyTimeoutMs: number): DatabaseSync {
  ensurePrivateDir(dirname(databaseFile))
  // 0600 like every file of the data folder (its -journal takes the same mode).
  ensurePrivateFile(lockFileOf(databaseFile))
  const db = openPlainSqlite(lockFileOf(databaseFile))
  try {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`)
    // A no-op (read only) once the table exists.
    db.exec('CREATE TABLE IF NOT EXISTS wishlist_lock (purpose TEXT)')
    return db
  } catch (err) {
    db.close()
    throw err
  }
}

const isBusy = (err: unknown) => sqliteResultCode(err) === 'SQLITE_BUSY'

/** The shared hold of a running server; throws DatabaseInUseError while a restore or move runs. */
export function holdAsServer(databaseFile: string): HeldLock {
  let db: DatabaseSync | undefined
  try {
    db = openLockFile(databaseFile, SERVER_WAIT_MS)
    db.exec('BEGIN')
    // The read takes the shared lock; the open transaction keeps it.
    db.prepare('SELECT count(*) FROM wishlist_lock').get()
  } catch (err) {
    db?.close()
    if (isBusy(err)) {
      throw new DatabaseInUseError(
        `${databaseFile} is held by a restore or move (its lock ${lockFileOf(databaseFile)} is taken); start the server once that command has finished`,
      )
    }
    throw err
  }
  const held = db
  return {
    release() {
      if (!held.isOpen) return
      held.exec('COMMIT')
      held.close()
    },
  }
}

/**
 * The exclusive hold of a maintenance command; throws DatabaseInUseError at once while a
 * server runs on the database (or another maintenance command holds it).
 */
export function holdExclusively(databaseFile: string, command: string): HeldLock {
  let db: DatabaseSync | undefined
  try {
    db = openLockFile(databaseFile, 0)
    db.exec('BEGIN EXCLUSIVE')
  } catch (err) {
    db?.close()
    if (isBusy(err)) {
      throw new DatabaseInUseError(
        `${databaseFile} is in use: a running server holds its lock ${lockFileOf(databaseFile)}; stop the server (or its container), then run ${command} again`,
      )
    }
    throw err
  }
  const held = db
  return {
    release() {
      if (!held.isOpen) return
      held.exec('ROLLBACK')
      held.close()
    },
  }
}
