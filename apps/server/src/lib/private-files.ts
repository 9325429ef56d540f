/**
 * The data folder and the files the service keeps in it (docs/operations.md, "Files and
 * permissions"): the SQLite database and its `-wal`/`-shm`, the lock file, backups and
 * restores in progress, the generated keys (`jwt-secret`, …) and `demo-credentials.json`.
 * They hold webhook secrets, keys and shoppers' data, so they are readable by the service's
 * own user only: files `0600`, folders the service creates `0700`, whatever the umask.
 *
 * SQLite creates a database's `-wal`, `-shm` and `-journal` with the mode of the database
 * file itself (its unix VFS copies it each time it creates one: on every start, as the last
 * connection to close removes them), so a database file created `0600` before SQLite opens it
 * keeps its companions private for good; no process-wide umask change is needed.
 *
 * An existing folder is never changed: it may be a working directory or a shared mount the
 * service does not own. `looseFolderWarning` names one that other users can enter, for the
 * server to log at start.
 */
import { chmodSync, closeSync, constants, existsSync, fchmodSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

export const PRIVATE_FILE_MODE = 0o600
export const PRIVATE_DIR_MODE = 0o700

const codeOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code

/**
 * Creates `dir` and its missing parents `0700` (exactly, whatever the umask). A folder that
 * already exists is left as it is.
 */
export function ensurePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  if (first === undefined) return
  // The umask may have taken bits off: every folder made here gets exactly 0700.
  for (let d = resolve(dir); ; d = dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE)
    if (d === resolve(first) || d === dirname(d)) break
  }
}

/**
 * Takes the group's and others' bits off an existing file (one an older version wrote
 * `0644`, or copied in by hand). A missing file is fine; one owned by another user (EPERM)
 * is left as it is.
 */
export function restrictFile(file: string): void {
  let mode: number
  try {
    mode = statSync(file).mode & 0o777
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return
    throw err
  }
  if ((mode & 0o077) === 0) return
  try {
    chmodSync(file, mode & 0o700)
  } catch (err) {
    if (codeOf(err) !== 'EPERM' && codeOf(err) !== 'ENOENT') throw err
  }
}

/**
 * Makes sure `file` exists and is private: created empty `0600` when missing (SQLite takes an
 * empty file as a new database), restricted (`restrictFile`) when it exists. Its folder must
 * exist.
 */
export function ensurePrivateFile(file: string): void {
  let fd: number
  try {
    fd = openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, PRIVATE_FILE_MODE)
  } catch (err) {
    if (codeOf(err) !== 'EEXIST') throw err
    restrictFile(file)
    return
  }
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE)
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes `data` to `file`, `0600` (an existing file is replaced and made `0600` too).
 * `exclusive`: only if the file does not exist yet (EEXIST otherwise). Its folder must exist.
 */
export function writePrivateFile(file: string, data: string, opts: { exclusive?: boolean } = {}): void {
  const fd = openSync(file, opts.exclusive === true ? 'wx' : 'w', PRIVATE_FILE_MODE)
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE)
    const bytes = Buffer.from(data, 'utf8')
    let written = 0
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written)
  } finally {
    closeSync(fd)
  }
}

/**
 * A secret kept in the file `name` beside the SQLite database (`jwt-secret`, and any key
 * generated the same way): read when the file exists (restricted to `0600` if it was not),
 * else `generate()`d and written `0600`, its folder created `0700` if missing. Two processes
 * starting together on a fresh folder agree on the first one written.
 */
export function secretBesideDatabase(databaseFile: string, name: string, generate: () => string): string {
  const file = resolve(dirname(databaseFile), name)
  if (!existsSync(file)) {
    ensurePrivateDir(dirname(file))
    const secret = generate()
    try {
      writePrivateFile(file, `${secret}\n`, { exclusive: true })
      return secret
    } catch (err) {
      if (codeOf(err) !== 'EEXIST') throw err
    }
  }
  restrictFile(file)
  const secret = readFileSync(file, 'utf8').trim()
  if (secret === '') throw new Error(`${file} is empty: delete it to have a new key generated, or put the key back in it`)
  return secret
}

/**
 * A warning for the data folder when users other than the service's can enter or list it
 * (group or other bits set): the files in it are `0600`, but their names and sizes show.
 * Undefined when the folder is private or missing.
 */
export function looseFolderWarning(dir: string): { folder: string; mode: string; message: string } | undefined {
  let mode: number
  try {
    mode = statSync(dir).mode & 0o777
  } catch {
    return undefined
  }
  if ((mode & 0o077) === 0) return undefined
  const octal = mode.toString(8).padStart(4, '0')
  return {
    folder: dir,
    mode: octal,
    message: `the data folder ${dir} is ${octal}: other users can list it (its files are 0600); run chmod 700 on it`,
  }
}
