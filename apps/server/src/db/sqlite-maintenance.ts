/**
 * `wishlist backup` and `wishlist restore` on the SQLite file (docs/operations.md, "Backups
 * and moving up").
 *
 * A backup is SQLite's online backup of a live connection: a consistent copy of every
 * committed transaction, the write-ahead log's included, taken while the server keeps
 * serving; it is written beside its destination, turned into a single self-contained file
 * (rollback journal, no `-wal`), checked with `integrity_check` and only then renamed into
 * place. A restore checks the file it is given on a copy beside the database, applies the
 * pending migrations to that copy and renames it over the database; the database's own
 * `-wal` and `-shm` files go first, so no old log is ever replayed onto the new file.
 */
import { closeSync, createReadStream, createWriteStream, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import type { DatabaseSync } from 'node:sqlite'
import { dirname, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { DatabaseTarget } from '../config.js'
import { openStorage } from './connect.js'
import { KNOWN_MIGRATIONS, migrateToLatest } from './migrate.js'
import { ensurePrivateDir, ensurePrivateFile } from '../lib/private-files.js'
import { RefusalError } from './refusal.js'
import { holdExclusively } from './server-lock.js'
import { backupSqlite, openPlainSqlite } from './sqlite-file.js'

export interface BackupSummary {
  file: string
  bytes: number
  tables: Record<string, number>
  schemaVersion: string
}

export interface RestoreSummary extends BackupSummary {
  from: string
  /** Migrations applied to the restored data (a backup from an older version). */
  migrated: string[]
}

const companions = (file: string) => [`${file}-wal`, `${file}-shm`, `${file}-journal`]
const removeWithCompanions = (file: string) => {
  for (const f of [file, ...companions(file)]) rmSync(f, { force: true })
}

/** Flushes a file (or a folder's entries, after a rename) to disk. */
function syncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

const isFolder = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

const latest = () => KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.length - 1]!

/** What `integrity_check` says of the file: 'ok', or its first complaints. */
function integrity(db: DatabaseSync): string {
  const rows = db.prepare('PRAGMA integrity_check(5)').all()
  // A message may span lines ("*** in database main ***\nPage 3: …"): one line each, for a one-line refusal.
  const lines = rows.map((r) => String(Object.values(r)[0]).replace(/\s+/g, ' ').trim())
  return lines.length === 1 && lines[0] === 'ok' ? 'ok' : lines.join('; ')
}

interface Contents {
  tables: Record<string, number>
  applied: string[] | undefined
}

function contents(db: DatabaseSync): Contents {
  const names = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`)
    .all()
    .map((r) => String(r.name))
  const tables: Record<string, number> = {}
  for (const name of names) {
    if (name.startsWith('kysely_migration')) continue
    tables[name] = Number(db.prepare(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`).get()?.n ?? 0)
  }
  const applied = names.includes('kysely_migration')
    ? db
        .prepare('SELECT name FROM kysely_migration ORDER BY name')
        .all()
        .map((r) => String(r.name))
    : undefined
  return { tables, applied }
}

function sqliteFileOf(target: DatabaseTarget, command: 'backup' | 'restore'): string {
  if (target.kind === 'postgres') {
    throw new RefusalError(
      command === 'backup'
        ? 'wishlist backup copies the SQLite file; on PostgreSQL use its own tools: pg_dump for a logical backup, or a base backup (pg_basebackup) with WAL archiving for point-in-time recovery'
        : 'wishlist restore replaces the SQLite file; on PostgreSQL restore with pg_restore (from a pg_dump) or from a base backup',
    )
  }
  if (target.file === ':memory:')
    throw new RefusalError(
      `an in-memory database cannot be ${command === 'backup' ? 'backed up' : 'restored'}; set DATABASE_URL to the database file (sqlite:PATH)`,
    )
  return target.file
}

export async function backupDatabase(target: DatabaseTarget, to: string): Promise<BackupSummary> {
  const file = sqliteFileOf(target, 'backup')
  const dest = resolve(to)
  if (!existsSync(file)) throw new RefusalError(`there is no database at ${file} to back up; check DATABASE_URL`)
  if (dest === file || companions(file).includes(dest))
    throw new RefusalError('--to names the database itself; give the backup a file of its own')
  // No folder is made: a mistyped path must not leave a tree of folders behind.
  if (!isFolder(dirname(dest)))
    throw new RefusalError(`the folder ${dirname(dest)} does not exist; create it (mkdir -m 700) or give --to a file in an existing folder`)
  const partial = `${dest}.partial`
  removeWithCompanions(partial)
  const source = openPlainSqlite(file)
  try {
    source.exec('PRAGMA busy_timeout = 5000')
    const applied = contents(source).applied
    if (applied === undefined) throw new RefusalError(`${file} is not a wishlist database (it has no migrations table); check DATABASE_URL`)
    // Shoppers' data and webhook secrets: 0600 from the first byte (its -journal takes the same mode).
    ensurePrivateFile(partial)
    await backupSqlite(source, partial)
  } catch (err) {
    removeWithCompanions(partial)
    throw err
  } finally {
    source.close()
  }
  let summary: Omit<BackupSummary, 'bytes'>
  const copy = openPlainSqlite(partial)
  try {
    // One self-contained file: no -wal to keep beside it.
    copy.exec('PRAGMA journal_mode = DELETE')
    const check = integrity(copy)
    if (check !== 'ok')
      throw new Error(
        `the backup copy of ${file} fails integrity_check (${check}): the database itself may be damaged; run PRAGMA integrity_check on it`,
      )
    const { tables, applied } = contents(copy)
    summary = { file: dest, tables, schemaVersion: applied?.at(-1) ?? '' }
  } catch (err) {
    copy.close()
    removeWithCompanions(partial)
    throw err
  }
  copy.close()
  syncPath(partial)
  renameSync(partial, dest)
  syncPath(dirname(dest))
  return { file: summary.file, bytes: statSync(dest).size, tables: summary.tables, schemaVersion: summary.schemaVersion }
}

export async function restoreDatabase(target: DatabaseTarget, from: string): Promise<RestoreSummary> {
  const file = sqliteFileOf(target, 'restore')
  const backup = resolve(from)
  if (!existsSync(backup)) throw new RefusalError(`there is no backup at ${backup}; give --from the file wishlist backup wrote`)
  if (backup === file) throw new RefusalError('--from names the database itself; give it a backup file')
  if (existsSync(`${backup}-wal`) && statSync(`${backup}-wal`).size > 0) {
    throw new RefusalError(
      `${backup} has a write-ahead log beside it (${backup}-wal): it is a live database, not a backup; back it up with wishlist backup and restore that file`,
    )
  }
  const lock = holdExclusively(file, 'wishlist restore')
  const incoming = `${file}.restoring`
  try {
    ensurePrivateDir(dirname(file))
    removeWithCompanions(incoming)
    // Checked and migrated as a copy beside the database: the backup file is never written.
    // Made 0600 first, then filled: a copy would take the backup's own mode, and the database is this file.
    ensurePrivateFile(incoming)
    await pipeline(createReadStream(backup), createWriteStream(incoming, { flags: 'r+' }))
    let copy: DatabaseSync | undefined
    try {
      copy = openPlainSqlite(incoming)
      const check = integrity(copy)
      if (check !== 'ok') throw new RefusalError(`${backup} is corrupt (integrity_check: ${check}); restore another backup`)
      const { applied, tables } = contents(copy)
      if (applied === undefined || !applied.length || !('shops' in tables)) {
        throw new RefusalError(
          `${backup} is not a wishlist database (no migrations table or shops table); give --from a file wishlist backup wrote`,
        )
      }
      const newer = applied.filter((m) => !KNOWN_MIGRATIONS.includes(m))
      if (newer.length)
        throw new RefusalError(
          `${backup} has schema ${newer.at(-1)}, newer than this version of wishlist (${latest()}); upgrade wishlist, then restore`,
        )
    } catch (err) {
      // A file that is not SQLite at all (or truncated past its header) fails at the first read.
      if (err instanceof RefusalError) throw err
      throw new RefusalError(
        `${backup} is corrupt or not a SQLite database (${err instanceof Error ? err.message : String(err)}); restore another backup`,
      )
    } finally {
      copy?.close()
    }

    const storage = openStorage({ kind: 'sqlite', file: incoming, groupCommit: false })
    let migrated: string[]
    try {
      migrated = await migrateToLatest(storage)
    } finally {
      await storage.destroy()
    }
    let summary: Contents
    const done = openPlainSqlite(incoming)
    try {
      done.exec('PRAGMA journal_mode = DELETE')
      summary = contents(done)
    } finally {
      done.close()
    }
    syncPath(incoming)
    // The replaced database's log and index go before the rename: a -wal left beside the new
    // file would be replayed onto it.
    for (const f of companions(file)) rmSync(f, { force: true })
    renameSync(incoming, file)
    syncPath(dirname(file))
    return {
      file,
      from: backup,
      bytes: statSync(file).size,
      tables: summary.tables,
      schemaVersion: summary.applied?.at(-1) ?? '',
      migrated,
    }
  } catch (err) {
    removeWithCompanions(incoming)
    throw err
  } finally {
    lock.release()
  }
}
