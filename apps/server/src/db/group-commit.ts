/**
 * SQLite with group commit: the transactions of one event-loop turn share one COMMIT (a
 * commit writes every page a transaction changed, ~20 for an add, and requests arriving
 * together change mostly the same pages: docs/performance.md, "Where the data-access machinery pays").
 * Users of the connection that find no batch open wait for the turn's check phase; the first
 * transaction opens the batch with BEGIN IMMEDIATE, each runs in a SAVEPOINT of its own and
 * lets go at its RELEASE; the batch commits when the connection is let go with nobody
 * waiting. No statement's result (reads included) reaches its caller before its batch has
 * committed; a failed COMMIT rejects every member. Rules and figures: docs/architecture.md,
 * "Storage". Modelled on Kysely's SQLite driver (one connection, a mutex); statements are
 * prepared through `database` (db/connect.ts: cached, and counted for the change stamp).
 */
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, SelectQueryNode, type SqliteDatabase } from 'kysely'
import { type SqliteFile, sqliteResultCode } from './sqlite-file.js'

const SAVEPOINT = 'wishlist_tx'
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`

interface Batch {
  /** Settles when the batch has committed (or failed to); every holder of the connection during it awaits this. */
  readonly done: Promise<void>
  resolve(): void
  reject(error: unknown): void
}

function newBatch(): Batch {
  let resolve!: () => void
  let reject!: (error: unknown) => void
  const done = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  // A batch nobody waited for must not become an unhandled rejection.
  done.catch(() => {})
  return { done, resolve, reject }
}

/** One holding of the connection; a transaction lets go at its RELEASE, before its batch commits. */
class Lease implements DatabaseConnection {
  /** Let go of already (a transaction after its RELEASE). */
  released = false
  /** Inside its transaction's savepoint. */
  inSavepoint = false

  constructor(
    readonly driver: GroupCommitSqliteDriver,
    readonly database: SqliteDatabase,
  ) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return Promise.resolve(this.run<R>(compiled))
  }

  run<R>(compiled: CompiledQuery): QueryResult<R> {
    const stmt = this.database.prepare(compiled.sql)
    const parameters = compiled.parameters as unknown[]
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] }
    const { changes, lastInsertRowid } = stmt.run(parameters)
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('SQLite streams SELECT queries only')
    // Rows come over many turns: commit what is open first rather than hold it that long.
    if (!this.inSavepoint) this.driver.commitNow()
    for (const row of this.database.prepare(compiled.sql).iterate(compiled.parameters as unknown[])) yield { rows: [row as R] }
  }
}

const asLease = (connection: DatabaseConnection) => connection as Lease

export class GroupCommitSqliteDriver implements Driver {
  readonly #sqlite: SqliteFile
  readonly #database: SqliteDatabase
  /** Whether a lease holds the connection; waiters are handed it in arrival order. */
  #held = false
  readonly #waiting: (() => void)[] = []
  #batch: Batch | undefined
  /** Opens at the next check phase; users of the connection that find no batch open wait for it. */
  #gate: Promise<void> | undefined
  /** The open batch outlived its check phase (its holder awaited something else): commit at the next let-go. */
  #overdue = false

  constructor(sqlite: SqliteFile, database: SqliteDatabase) {
    this.#sqlite = sqlite
    this.#database = database
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#batch === undefined) await (this.#gate ??= this.#checkPhase())
    if (this.#held) await new Promise<void>((handOver) => this.#waiting.push(handOver))
    this.#held = true
    return new Lease(this, this.#database)
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection)
    if (lease.released) return
    await this.#letGo(lease)
  }

  /**
   * Hands the connection on and waits for the batch this lease ran in (the one open now: a
   * batch never commits while the connection is held); rejects when that batch failed.
   */
  async #letGo(lease: Lease): Promise<void> {
    lease.released = true
    const batch = this.#batch
    if (this.#overdue) this.commitNow()
    const next = this.#waiting.shift()
    if (next) next()
    else {
      this.#held = false
      this.commitNow()
    }
    if (batch !== undefined) await batch.done
  }

  #checkPhase(): Promise<void> {
    return new Promise((open) =>
      setImmediate(() => {
        this.#gate = undefined
        open()
      }),
    )
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#batch === undefined) {
      await this.#beginImmediate()
      const batch = (this.#batch = newBatch())
      setImmediate(() => {
        if (this.#batch === batch) this.#overdue = true
      })
    }
    this.#run(`SAVEPOINT ${SAVEPOINT}`)
    asLease(connection).inSavepoint = true
  }

  /**
   * BEGIN IMMEDIATE, waiting for another connection's write lock with timers rather than
   * SQLite's sleeping busy handler: the holder may be a batch of this process that commits
   * only once the loop turns. Retried with growing pauses within `busy_timeout`.
   */
  async #beginImmediate(): Promise<void> {
    const deadline = Date.now() + this.#sqlite.busyTimeoutMs
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      // Through exec() each time: SQLite applies this pragma when it prepares the statement,
      // so a prepared one run again changes nothing (the lock-wait test fails).
      this.#sqlite.exec('PRAGMA busy_timeout = 0')
      try {
        this.#run('BEGIN IMMEDIATE')
        return
      } catch (error) {
        if (sqliteResultCode(error) !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error
      } finally {
        this.#sqlite.exec(`PRAGMA busy_timeout = ${this.#sqlite.busyTimeoutMs}`)
      }
      await new Promise((wake) => setTimeout(wake, pause))
    }
  }

  /** Releases the savepoint, lets go of the connection and resolves once the batch has committed. */
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection)
    this.#run(`RELEASE ${SAVEPOINT}`)
    lease.inSavepoint = false
    await this.#letGo(lease)
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = asLease(connection)
    if (!lease.inSavepoint) return // BEGIN or SAVEPOINT failed, or the batch's COMMIT did
    lease.inSavepoint = false
    if (this.#sqlite.inTransaction) {
      this.#run(`ROLLBACK TO ${SAVEPOINT}`)
      this.#run(`RELEASE ${SAVEPOINT}`)
      return
    }
    // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM…) make SQLite roll back the whole
    // transaction: the batch's other transactions are gone with it.
    this.#fail(new Error('SQLite rolled back the batch of transactions after an error in one of them'))
  }

  // Savepoints a transaction takes itself (Kysely's controlled transactions), nested in its own.
  async savepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.#run(`SAVEPOINT ${quoted(name)}`)
  }

  async rollbackToSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.#run(`ROLLBACK TO ${quoted(name)}`)
  }

  async releaseSavepoint(_connection: DatabaseConnection, name: string): Promise<void> {
    this.#run(`RELEASE ${quoted(name)}`)
  }

  async destroy(): Promise<void> {
    if (!this.#held) this.commitNow()
    this.#sqlite.close()
  }

  #run(sql: string): void {
    this.#database.prepare(sql).run([])
  }

  /** Commits the open batch; only while no lease is inside a savepoint. */
  commitNow(): void {
    this.#overdue = false
    const batch = this.#batch
    if (batch === undefined) return
    try {
      this.#run('COMMIT')
      this.#batch = undefined
      batch.resolve()
    } catch (error) {
      this.#fail(error)
    }
  }

  #fail(error: unknown): void {
    const batch = this.#batch
    this.#batch = undefined
    this.#overdue = false
    if (this.#sqlite.inTransaction) this.#run('ROLLBACK')
    batch?.reject(error)
  }
}
