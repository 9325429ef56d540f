import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from 'kysely'
import pg from 'pg'
import Cursor from 'pg-cursor'
import type { DatabaseTarget } from '../config.js'
import { precompiledSql } from './precompiled.js'
import type { Database } from './schema.js'

export type Db = Kysely<Database>
export type Backend = 'sqlite' | 'postgres'

export interface Storage {
  db: Db
  backend: Backend
  /**
   * SQLite only: a value that changes whenever the database may have changed: a write
   * statement of this process (counted when it is prepared, before it runs) or a commit by
   * another connection (`PRAGMA data_version`). Equal values mean nothing was written in
   * between, so what was read at the first is still true at the second.
   */
  changeStamp?: () => string
  /** A cheap round trip used by /readyz. */
  ping(): Promise<void>
  destroy(): Promise<void>
}

// int8 (bigint: epoch-ms timestamps, COUNT(*)) as a JS number: every value we store is
// far below 2^53. Set on the pool's own type map so no other pg user is affected.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v)
    return pg.types.getTypeParser(oid, format as 'text')
  },
}

/**
 * Kysely's SQLite driver calls `prepare()` for every query, and better-sqlite3 then parses
 * and plans the SQL again: measurable on every request (bench: about 5% of the GET page's
 * CPU). Statements are reusable and our queries run synchronously one at a time (no
 * `stream()`), so the same text gets the same prepared statement. Bounded: bulk inserts
 * produce many distinct texts, so long ones are not kept and the oldest entry goes first.
 */
export function cachingPrepare(sqlite: SQLite.Database, maxEntries = 500, maxSqlLength = 4000): SqliteDatabase & { writes(): number } {
  const statements = new Map<string, SQLite.Statement>()
  let writes = 0
  return {
    close: () => sqlite.close(),
    // Kysely's driver prepares every statement right before running it, so this sees each
    // write (and BEGIN/COMMIT) before it happens.
    prepare(sql: string) {
      let stmt = statements.get(sql)
      if (stmt === undefined) {
        stmt = sqlite.prepare(sql)
        if (sql.length <= maxSqlLength) {
          if (statements.size >= maxEntries) statements.delete(statements.keys().next().value as string)
          statements.set(sql, stmt)
        }
      }
      if (!stmt.reader) writes++
      return stmt
    },
    writes: () => writes,
  }
}

function openSqlite(file: string): Storage {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const database = cachingPrepare(sqlite)
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) })
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck()
  return {
    db,
    backend: 'sqlite',
    changeStamp: () => `${database.writes()}:${dataVersion.get() as number}`,
    async ping() {
      sqlite.prepare('select 1').get()
    },
    destroy: () => db.destroy(),
  }
}

type QueryArgs = Parameters<pg.PoolClient['query']>

/**
 * The pool as Kysely sees it, with the precompiled hot queries (db/precompiled.ts) sent as
 * named prepared statements: pg prepares a name once per connection and then only binds
 * and executes it, so PostgreSQL skips parsing and planning on every call after the first.
 * Every other query goes through unchanged (unnamed, so ad-hoc texts never pile up).
 */
function preparingPool(pool: pg.Pool) {
  const wrapped = new WeakMap<pg.PoolClient, pg.PoolClient>()
  const names = new Map<string, string>()
  const nameOf = (sql: string) => {
    let name = names.get(sql)
    if (name === undefined) names.set(sql, (name = `pc_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`))
    return name
  }
  return {
    async connect() {
      const client = await pool.connect()
      let proxy = wrapped.get(client)
      if (proxy === undefined) {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown
        proxy = Object.create(client, {
          query: {
            value: (...args: QueryArgs) => {
              const [text, values] = args
              if (typeof text === 'string' && precompiledSql.has(text)) return query({ name: nameOf(text), text, values })
              return query(...args)
            },
          },
          release: { value: (err?: Error | boolean) => client.release(err) },
        }) as pg.PoolClient
        wrapped.set(client, proxy)
      }
      return proxy
    },
    end: () => pool.end(),
  }
}

function openPostgres(url: string, schema: string | undefined): Storage {
  const pool = new pg.Pool({
    connectionString: url,
    max: Number(process.env.PG_POOL_MAX ?? 10),
    connectionTimeoutMillis: 5_000,
    // A statement that hangs (lock wait, network partition) becomes an error, not a stuck request.
    statement_timeout: 15_000,
    types: pgTypes,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  })
  // An idle client losing its connection (server restart) must not crash the process;
  // the pool replaces it and the next query reconnects.
  pool.on('error', () => {})
  // A client checked out of the pool (a request mid-transaction) has no pool listener: when
  // the server goes away (restart, crash, failover) pg emits 'error' on it, and without a
  // listener that is an uncaught exception that kills the process. The query in flight
  // already rejects with the same error (→ 503), and the pool discards the broken client
  // on release, so the listener only has to exist.
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  // `cursor`: Kysely's `.stream()` reads through a server-side cursor (the shop's CSV export).
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool), cursor: Cursor }) })
  return {
    db,
    backend: 'postgres',
    async ping() {
      await pool.query('select 1')
    },
    destroy: () => db.destroy(),
  }
}

export function openStorage(target: DatabaseTarget): Storage {
  return target.kind === 'sqlite' ? openSqlite(target.file) : openPostgres(target.url, target.schema)
}
