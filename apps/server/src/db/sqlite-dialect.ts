/**
 * Kysely's SQLite dialect with two changes, both measured on the bench's add+remove and
 * page reads: group commit (db/group-commit.ts) and LIMIT/OFFSET values that do not make
 * SQLite prepare the statement again on every run.
 *
 * SQLite (3.53, as bundled by better-sqlite3) plans with the LIMIT's value when it is a bare
 * parameter, and so marks the statement to be prepared anew whenever that parameter is
 * bound, which Kysely's `limit ?` is on every run: about 7 µs a query (a one-row lookup went
 * from 4 to 12 µs). Written `+?`, the value is the same number and the plan is made once;
 * our queries have one right index each, so the value-dependent plan bought nothing.
 */
import type SQLite from 'better-sqlite3'
import { type Driver, type LimitNode, type OffsetNode, type QueryCompiler, SqliteDialect, type SqliteDatabase, SqliteQueryCompiler } from 'kysely'
import { GroupCommitSqliteDriver } from './group-commit.js'

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

export class WishlistSqliteDialect extends SqliteDialect {
  readonly #sqlite: SQLite.Database
  readonly #database: SqliteDatabase

  constructor(sqlite: SQLite.Database, database: SqliteDatabase) {
    super({ database })
    this.#sqlite = sqlite
    this.#database = database
  }

  override createDriver(): Driver {
    return new GroupCommitSqliteDriver(this.#sqlite, this.#database)
  }

  override createQueryCompiler(): QueryCompiler {
    return new StableLimitCompiler()
  }
}
