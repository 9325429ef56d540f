/**
 * Kysely's SQLite dialect with two changes: group commit (db/group-commit.ts;
 * `SQLITE_GROUP_COMMIT=false` keeps Kysely's own driver) and LIMIT/OFFSET compiled as `+?`.
 * SQLite plans with a bare `LIMIT ?`'s value and so prepares the statement again on every
 * bind (docs/performance.md, "Where the data-access machinery pays"); `+?` is the same number,
 * planned once.
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
 * Leaves the handing over of the connection to the group-commit driver: under Kysely's own
 * mutex (held until the driver's release returns, i.e. after the batch's COMMIT) every
 * transaction would wait for the one before it to commit, and each would commit alone.
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
