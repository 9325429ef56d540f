import { createHash } from 'node:crypto'
import { dirname } from 'node:path'
import { Kysely, PostgresDialect, type SqliteDatabase, type SqliteStatement } from 'kysely'
import { LRUCache } from 'lru-cache'
import pg from 'pg'
import { type DatabaseTarget, DEFAULT_PG_POOL_MAX, DEFAULT_REPLICA_MAX_LAG_MS } from '../config.js'
import { ensurePrivateDir } from '../lib/private-files.js'
import { openSqliteFile, type SqliteFile } from './sqlite-file.js'
import { WishlistSqliteDialect } from './sqlite-dialect.js'
import { precompiledSql, writingSql } from './precompiled.js'
import { primaryReads, type Reads, replicaReads } from './replica.js'
import type { Database } from './schema.js'
import type { Backend, Db } from './types.js'

export interface Storage {
  db: Db
  backend: Backend
  /**
   * A value that changes whenever the database may have changed: a write statement of this
   * process (counted before it runs) or a commit by another connection (SQLite: `PRAGMA
   * data_version`; PostgreSQL: a notification, see changeFeed). Equal values mean nothing was
   * written in between, so what was read at the first is still true at the second.
   * Undefined while that cannot be known (PostgreSQL without its LISTEN connection).
   */
  changeStamp?: () => string | undefined
  /**
   * Runs `fn` over a connection that may keep session state (migrations: their lock and
   * bookkeeping). PostgreSQL with DATABASE_DIRECT_URL: a connection of its own there, closed
   * afterwards; otherwise the service's own `db`.
   */
  session?<T>(fn: (db: Db) => Promise<T>): Promise<T>
  /**
   * Where the reads that may lag go (db/replica.ts): the read replica (DATABASE_REPLICA_URL)
   * while it keeps up, else `db`. Without a replica (and on SQLite), always `db`.
   */
  reads: Reads
  /** A cheap round trip used by /readyz. */
  ping(): Promise<void>
  destroy(): Promise<void>
}

// int8 (bigint: epoch-ms timestamps, COUNT(*)) as a JS number: every value we store is
// far below 2^53. Set on the pool's own type map so no other pg user is affected.
export const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v)
    return pg.types.getTypeParser(oid, format as 'text')
  },
}

/**
 * Kysely's SQLite driver calls `prepare()` for every query, and SQLite then parses and plans
 * the SQL again: measurable on every request (docs/performance.md, "Where the data-access machinery pays").
 * Statements are reusable and our queries run synchronously one at a time (no `stream()`),
 * so the same text gets the same prepared statement. Bounded (an LRU): bulk inserts produce
 * many distinct texts, so long ones are not kept.
 *
 * The statements are handed out in the shape Kysely's SQLite driver expects (parameters as
 * one array, `reader` for statements that return rows), over `node:sqlite`'s.
 */
export function cachingPrepare(sqlite: SqliteFile, maxEntries = 500, maxSqlLength = 4000): SqliteDatabase & { writes(): number } {
  const statements = new LRUCache<string, SqliteStatement>({ max: maxEntries })
  let writes = 0
  return {
    close: () => sqlite.close(),
    // Kysely's driver prepares every statement right before running it, so this sees each
    // write (and BEGIN/COMMIT) before it happens.
    prepare(sql: string) {
      let stmt = statements.get(sql)
      if (stmt === undefined) {
        stmt = sqlite.statement(sql)
        if (sql.length <= maxSqlLength) statements.set(sql, stmt)
      }
      if (!stmt.reader) writes++
      return stmt
    },
    writes: () => writes,
  }
}

/**
 * The SQLite change stamp: this process's write count and `PRAGMA data_version`, which
 * changes when another connection (a second instance, the CLI, a script) commits.
 *
 * The pragma opens and closes a read transaction, paid by every GET page served from the
 * cache (read on every check, a third more of the GET page's CPU: docs/performance.md, "Where
 * the data-access machinery pays"). It is read once per
 * event-loop turn instead: requests handled before the loop's next check phase (one batch of
 * socket reads, the callbacks and promises they start) share one read. A request whose bytes
 * reached the socket after another connection's commit belongs to a later batch (the poll
 * that handed over this one had already returned), so it re-reads and sees the commit.
 * This process's own writes are counted before they run, so they show at once.
 */
function otherConnectionsStamp(sqlite: SqliteFile, writes: () => number): () => string {
  const dataVersion = sqlite.db.prepare('PRAGMA data_version')
  let version: unknown
  let stamp = ''
  let stampWrites = -1
  const forget = () => {
    version = undefined
  }
  return () => {
    if (version === undefined) {
      version = dataVersion.get()?.data_version
      stampWrites = -1
      setImmediate(forget)
    }
    const w = writes()
    if (w !== stampWrites) {
      stamp = `${w}:${String(version)}`
      stampWrites = w
    }
    return stamp
  }
}

function openSqlite(file: string, groupCommit: boolean): Storage {
  // The data folder, 0700 when made here (lib/private-files.ts); the file itself: openSqliteFile.
  if (file !== ':memory:') ensurePrivateDir(dirname(file))
  const sqlite = openSqliteFile(file)
  const database = cachingPrepare(sqlite)
  const db = new Kysely<Database>({ dialect: new WishlistSqliteDialect(sqlite, database, groupCommit) })
  const ping = sqlite.db.prepare('select 1')
  return {
    db,
    backend: 'sqlite',
    reads: primaryReads(db),
    changeStamp: otherConnectionsStamp(sqlite, database.writes),
    async ping() {
      ping.get()
    },
    destroy: () => db.destroy(),
  }
}

type QueryArgs = Parameters<pg.PoolClient['query']>

/** A statement that hangs (lock wait, network partition) becomes an error after this, not a stuck request. */
const STATEMENT_TIMEOUT_MS = 15_000

const TRANSACTION_START = /^\s*(begin|start\s+transaction)\b/i
const TRANSACTION_COMMIT = /^\s*(commit|end)\b/i
const TRANSACTION_ROLLBACK = /^\s*(rollback|abort)\b/i
/** The notice migration 0038's trigger raises on the connection whose transaction will notify the change feed. */
const OWNER_VERSION_NOTICE = 'wishlist_owner_versions'

/** What the pool asks of the change feed: where it stands, and a wait until it has heard past that. */
interface FeedWait {
  /** The count of notifications heard so far; undefined while the feed is not listening. */
  mark(): number | undefined
  /** Resolves once a notification past `mark` was heard, the feed was lost, or FEED_WAIT_MS passed. */
  heardPast(mark: number): Promise<void>
}

/**
 * The pool as Kysely sees it, with two additions:
 * - in session mode the precompiled hot queries (db/precompiled.ts) go as named prepared
 *   statements: pg prepares a name once per connection and then only binds and executes it,
 *   so PostgreSQL skips parsing and planning on every call after the first. Every other
 *   query goes unnamed, so ad-hoc texts never pile up. Behind a transaction pooler
 *   (`transaction`) every query goes unnamed: consecutive transactions of one client land
 *   on different server connections, where a name prepared on one is missing (or another
 *   client's) on the next. The templates are still compiled once, on our side;
 * - every statement but a SELECT that only reads (BEGIN and COMMIT included) calls `onWrite` when sent and
 *   again when answered, for the change stamp: a page read while a commit was in flight is
 *   then never taken as current once that commit has returned;
 * - a transaction that moved an owner version (the trigger's notice said so: migration 0038)
 *   is answered, at its COMMIT or as its one autocommitted statement, only once this
 *   instance's change feed has heard a notification sent after the commit was sent (at most
 *   FEED_WAIT_MS): PostgreSQL wakes every listener at that commit, so when a write is
 *   answered the other instances are being told too. It narrows, and does not close, the
 *   window in which another instance serves the page from before the write: that
 *   instance's listener may still be scheduled after the client's next read on a loaded
 *   machine (test/http/pgbouncer.test.ts counts such first reads).
 * Behind a transaction pooler the statement timeout cannot be a startup parameter (PgBouncer
 * refuses it) nor a session SET (it would stay on a server connection other clients get): it
 * rides with each transaction's BEGIN as `SET LOCAL`, in the same message (one round trip).
 */
function preparingPool(pool: pg.Pool, onWrite: () => void, transactionPooler: boolean, feed: FeedWait | undefined) {
  const wrapped = new WeakMap<pg.PoolClient, pg.PoolClient>()
  const names = new Map<string, string>()
  const nameOf = (sql: string) => {
    let name = names.get(sql)
    if (name === undefined) names.set(sql, (name = `pc_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`))
    return name
  }
  const begin = (query: (...args: unknown[]) => unknown, text: string) =>
    (query(`${text}; set local statement_timeout = ${STATEMENT_TIMEOUT_MS}`) as Promise<pg.QueryResult | pg.QueryResult[]>).then((r) =>
      Array.isArray(r) ? r[0] : r,
    )
  return {
    async connect() {
      const client = await pool.connect()
      let proxy = wrapped.get(client)
      if (proxy === undefined) {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown
        // Whether the transaction running on this connection moved an owner version (its notice).
        let inTransaction = false
        let noticed = false
        client.on('notice', (n) => {
          if (n.message === OWNER_VERSION_NOTICE) noticed = true
        })
        proxy = Object.create(client, {
          query: {
            value: (...args: QueryArgs) => {
              const [text, values] = args
              if (typeof text !== 'string') return query(...args) // a cursor: reads only
              const run = transactionPooler
                ? TRANSACTION_START.test(text) && (values === undefined || (values as unknown[]).length === 0)
                  ? () => begin(query, text)
                  : () => query(...args)
                : precompiledSql.has(text)
                  ? () => query({ name: nameOf(text), text, values })
                  : () => query(...args)
              if (/^\s*select\b/i.test(text) && !writingSql.has(text)) return run()
              onWrite()
              // Where a transaction's writes become visible: its COMMIT, or a statement outside any transaction.
              const starts = TRANSACTION_START.test(text)
              const commits = TRANSACTION_COMMIT.test(text)
              const rollsBack = TRANSACTION_ROLLBACK.test(text)
              const commitPoint = commits || (!inTransaction && !starts && !rollsBack)
              if (starts || rollsBack || (commitPoint && !commits)) noticed = false
              inTransaction = starts || (inTransaction && !commits && !rollsBack)
              const mark = commitPoint ? feed?.mark() : undefined
              const result = run() as Promise<unknown>
              result.then(onWrite, onWrite)
              if (!commitPoint) return result
              return result.then(
                async (answer) => {
                  const notifies = noticed
                  noticed = false
                  if (notifies && mark !== undefined) await feed?.heardPast(mark)
                  return answer
                },
                (err: unknown) => {
                  noticed = false
                  throw err
                },
              )
            },
          },
          release: { value: (err?: Error | boolean) => client.release(err) },
        }) as pg.PoolClient
        wrapped.set(client, proxy)
      }
      return proxy
    },
    end: () => pool.end(),
    // What Kysely needs to open a side connection that cancels a running query.
    Client: pg.Client,
    options: pool.options,
  }
}

type PostgresTarget = Extract<DatabaseTarget, { kind: 'postgres' }>

const searchPath = (schema: string | undefined) => (schema ? { options: `-c search_path=${schema}` } : {})

/**
 * The service's pool over `url` (DATABASE_URL, or DATABASE_REPLICA_URL: what sits behind
 * either is PG_POOL_MODE's), as a Kysely instance, and the pg pool for plain round trips.
 */
function postgresPool(url: string, target: PostgresTarget, onWrite: () => void, feed?: FeedWait): { db: Db; pool: pg.Pool } {
  const { schema } = target
  const transactionPooler = target.poolMode === 'transaction'
  // A schema of its own is a startup parameter (search_path), which a transaction pooler refuses.
  if (transactionPooler && schema)
    throw new Error('a schema pinned by search_path cannot go through a transaction pooler: give the database its own database instead')
  const pool = new pg.Pool({
    connectionString: url,
    max: target.poolMax ?? DEFAULT_PG_POOL_MAX,
    connectionTimeoutMillis: 5_000,
    // Behind a transaction pooler: per transaction instead (preparingPool).
    ...(transactionPooler ? {} : { statement_timeout: STATEMENT_TIMEOUT_MS }),
    types: pgTypes,
    ...searchPath(schema),
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
  // No cursor: nothing streams rows from the server (the exports read in keyset pages, db/dialect.ts `inBatches`).
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, onWrite, transactionPooler, feed) }) })
  return { db, pool }
}

function openPostgres(target: PostgresTarget): Storage {
  const { url, schema, directUrl } = target
  const transactionPooler = target.poolMode === 'transaction'
  let writes = 0
  // LISTEN holds a session: over DATABASE_DIRECT_URL when set, never through a transaction
  // pooler (without a direct URL there the stamp stays unknown and every read checks the
  // database; config.ts refuses that combination while the page cache is on).
  const feedUrl = directUrl ?? (transactionPooler ? undefined : url)
  const feed = feedUrl === undefined ? undefined : changeFeed(feedUrl, schema)
  const { db, pool } = postgresPool(url, target, () => writes++, feed)
  // The replica's pool: nothing is written there, so no write moves the change stamp.
  const replica = target.replicaUrl === undefined ? undefined : postgresPool(target.replicaUrl, target, () => {})
  const reads =
    replica === undefined
      ? primaryReads(db)
      : replicaReads({ primary: db, replica: replica.db, maxLagMs: target.replicaMaxLagMs ?? DEFAULT_REPLICA_MAX_LAG_MS })
  return {
    db,
    backend: 'postgres',
    reads,
    changeStamp: () => feed?.stamp(writes),
    async session<T>(fn: (db: Db) => Promise<T>): Promise<T> {
      if (directUrl === undefined) return fn(db)
      const pool = new pg.Pool({
        connectionString: directUrl,
        max: 1,
        connectionTimeoutMillis: 5_000,
        types: pgTypes,
        ...searchPath(schema),
      })
      // The timeout as a session SET, queued ahead of the first query, not a startup
      // parameter: a session-mode PgBouncer refuses that one with its default settings.
      pool.on('connect', (client) => void client.query(`set statement_timeout = ${STATEMENT_TIMEOUT_MS}`).catch(() => {}))
      const direct = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
      try {
        return await fn(direct)
      } finally {
        await direct.destroy()
      }
    },
    async ping() {
      await pool.query('select 1')
    },
    async destroy() {
      await feed?.close()
      await reads.close()
      await replica?.db.destroy()
      await db.destroy()
    },
  }
}

const RETRY_MIN_MS = 500
/** The longest a write waits for its own notification (db/connect.ts preparingPool): it comes in well under a millisecond. */
export const FEED_WAIT_MS = 100
const RETRY_MAX_MS = 10_000

/**
 * PostgreSQL's change stamp: this process's write statements plus the notifications that
 * migration 0006's trigger sends when a transaction that moved an owner version commits
 * (from any instance or process on the database). It is only defined while the LISTEN
 * connection is up: before the first connect and after a loss it is undefined, so every
 * read checks the version in the database, and every (re)connect starts a new epoch, so
 * nothing confirmed before a gap in the notifications is trusted after it.
 *
 * Another instance's commit is seen once its notification arrives (PostgreSQL sends it at
 * commit; on one network, well under a millisecond) rather than on the next statement.
 * Opened on the first call: a serving instance asks at its start (server.ts), one-shot CLI
 * commands never do, so they never listen.
 */
function changeFeed(url: string, schema: string | undefined) {
  let client: pg.Client | undefined
  let started = false
  let connected = false
  let closed = false
  let epoch = 0
  let notes = 0
  let retry: NodeJS.Timeout | undefined
  let backoff = RETRY_MIN_MS
  // Writes waiting to hear past their mark (FeedWait.heardPast), released by the next notification or a loss.
  let waiting: { mark: number; done: () => void }[] = []
  const release = (all: boolean) => {
    if (waiting.length === 0) return
    const still: typeof waiting = []
    for (const w of waiting) {
      if (all || notes > w.mark) w.done()
      else still.push(w)
    }
    waiting = still
  }

  function lost(c: pg.Client) {
    if (client !== c) return
    client = undefined
    connected = false
    release(true)
    c.end().catch(() => {})
    if (closed) return
    retry = setTimeout(() => void connect(), backoff)
    retry.unref()
    backoff = Math.min(backoff * 2, RETRY_MAX_MS)
  }

  async function connect() {
    const c = new pg.Client({
      connectionString: url,
      application_name: schema ? `wishlist change feed ${schema}` : 'wishlist change feed',
      ...searchPath(schema),
    })
    client = c
    let own: string | undefined
    c.on('error', () => lost(c))
    c.on('end', () => lost(c))
    c.on('notification', (msg) => {
      if (msg.payload !== own) return
      notes++
      release(false)
    })
    try {
      await c.connect()
      own = (await c.query<{ schema: string }>('select current_schema() as schema')).rows[0]?.schema
      await c.query('LISTEN wishlist_owner_versions')
      if (client !== c) return
      epoch++
      connected = true
      backoff = RETRY_MIN_MS
    } catch {
      lost(c)
    }
  }

  // The string of the last stamp, rebuilt only when one of its parts moved (every GET page
  // served from the cache compares one).
  let last = { epoch: -1, notes: -1, writes: -1, stamp: '' }
  const start = () => {
    if (started || closed) return
    started = true
    void connect()
  }
  return {
    stamp(writes: number): string | undefined {
      start()
      if (!connected) return undefined
      if (last.epoch !== epoch || last.notes !== notes || last.writes !== writes)
        last = { epoch, notes, writes, stamp: `${epoch}:${notes}:${writes}` }
      return last.stamp
    },
    // Not started by a write: one-shot CLI commands never listen (a serving instance has started it: server.ts).
    mark: (): number | undefined => (connected ? notes : undefined),
    heardPast(mark: number): Promise<void> {
      if (!connected || notes > mark) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiting = waiting.filter((w) => w.done !== done)
          resolve()
        }, FEED_WAIT_MS)
        const done = () => {
          clearTimeout(timer)
          resolve()
        }
        waiting.push({ mark, done })
      })
    },
    async close() {
      closed = true
      clearTimeout(retry)
      release(true)
      const c = client
      client = undefined
      connected = false
      await c?.end().catch(() => {})
    },
  }
}

export function openStorage(target: DatabaseTarget): Storage {
  return target.kind === 'sqlite' ? openSqlite(target.file, target.groupCommit ?? true) : openPostgres(target)
}
