/**
 * Kysely's SQLite dialect with two changes, both measured on the bench's add+remove and
 * page reads: group commit (db/group-commit.ts; `SQLITE_GROUP_COMMIT=false` leaves Kysely's
 * own driver, one COMMIT per transaction) and LIMIT/OFFSET values that do not make SQLite
 * prepare the statement again on every run.
 *
 * SQLite (3.51 in Node 22, 3.53 in Node 24) plans with the LIMIT's value when it is a bare
 * parameter, and so marks the statement to be prepared anew whenever that parameter is
 * bound, which Kysely's `limit ?` is on every run: about 7 µs a query (a one-row lookup went
 * from 4 to 12 µs). Written `+?`, the value is the same number and the plan is made once;
 * our queries have one right index each, so the value-dependent plan bought nothing.
 */
import {
  type DialectAdapter,
  type Driver,
  type LimitNode,
  type OffsetNode,
  type QueryCompiler,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDatabase,
  SqliteQueryCompiler,
} from 'kysely'
import { GroupCommitSqliteDriver } from './group-commit.js'
import type { SqliteFile } from './sqlite-file.js'

class StableLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit +')
    this.visitNode(node.limit)
  }

  protected override visitOffset(node: OffsetNode): void {
    this.append('offset +')
    this.visitNode(node.offset)
  }
}

/**
 * Kysely holds its own mutex around a connection of a dialect without multiple connections,
 * from acquire until the driver's release has returned. The group-commit driver hands the
 * connection over itself, and its release returns only once the batch has committed: under
 * Kysely's mutex every transaction would wait for the one before it to commit, and each
 * would commit alone. So this adapter tells Kysely to leave the handing over to the driver.
 */
class GroupCommitSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true
  }
}

export class WishlistSqliteDialect extends SqliteDialect {
  readonly #sqlite: SqliteFile
  readonly #database: SqliteDatabase
  readonly #groupCommit: boolean

  constructor(sqlite: SqliteFile, database: SqliteDatabase, groupCommit: boolean) {
    super({ database })
    this.#sqlite = sqlite
    this.#database = database
    this.#groupCommit = groupCommit
  }

  override createDriver(): Driver {
    return this.#groupCommit ? new GroupCommitSqliteDriver(this.#sqlite, this.#database) : super.createDriver()
  }

  override createAdapter(): DialectAdapter {
    return this.#groupCommit ? new GroupCommitSqliteAdapter() : super.createAdapter()
  }

  override createQueryCompiler(): QueryCompiler {
    return new StableLimitCompiler()
  }
}
