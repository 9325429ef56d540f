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
   * Undefined while that cannot be known (PostgreSQL without its LISTEN connection) or is not
   * enough (PostgreSQL while other serving instances listen: changeFeed).
   */
  changeStamp?: () => string | undefined
  /**
   * PostgreSQL: opens the change feed and resolves once every other serving instance on the
   * database has acknowledged this one (from then on they check versions on every cached
   * read, see changeFeed), or after a few seconds without an answer. A serving instance awaits
   * it before it takes requests (server.ts).
   */
  join?(): Promise<void>
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
 *   then never taken as current once that commit has returned.
 * Behind a transaction pooler the statement timeout cannot be a startup parameter (PgBouncer
 * refuses it) nor a session SET (it would stay on a server connection other clients get): it
 * rides with each transaction's BEGIN as `SET LOCAL`, in the same message (one round trip).
 */
function preparingPool(pool: pg.Pool, onWrite: () => void, transactionPooler: boolean) {
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
              const result = run() as Promise<unknown>
              result.then(onWrite, onWrite)
              return result
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
function postgresPool(url: string, target: PostgresTarget, onWrite: () => void): { db: Db; pool: pg.Pool } {
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
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, onWrite, transactionPooler) }) })
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
  const { db, pool } = postgresPool(url, target, () => writes++)
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
    join: async () => feed?.join(),
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
const RETRY_MAX_MS = 10_000
/** How often a change feed counts the other instances' feeds on its schema (pg_stat_activity). */
const FEED_COUNT_MS = 1_000
/** The longest `join` waits for the other instances to acknowledge a new one. */
const JOIN_WAIT_MS = 5_000
const OWNER_VERSIONS = 'wishlist_owner_versions'
/** A feed that connects and finds others says so here (payload: its schema) ... */
const JOIN_CHANNEL = 'wishlist_change_feed_join'
/** ... and each other feed on the schema answers here once it checks versions (payload: `<joiner's pid>:<schema>`). */
const ACK_CHANNEL = 'wishlist_change_feed_ack'

/**
 * PostgreSQL's change stamp: this process's write statements plus the notifications that
 * migration 0006's trigger sends when a transaction that moved an owner version commits
 * (from any instance or process on the database). It is only defined while the LISTEN
 * connection is up: before the first connect and after a loss it is undefined, so every
 * read checks the version in the database, and every (re)connect starts a new epoch, so
 * nothing confirmed before a gap in the notifications is trusted after it.
 *
 * A notification reaches each listener on its own schedule: on a loaded machine another
 * instance's listener can run after a client that was just answered a write has sent its
 * next read there. So the stamp is trusted only while this is the one serving instance: the
 * feed counts the other feeds on its schema (their application_name in pg_stat_activity, at
 * every connect and then every FEED_COUNT_MS) and, while there is any, the stamp is
 * undefined and every cached read checks the owner's version (one round trip; the body still
 * comes from the cache). A feed that connects counts first, then announces itself
 * (JOIN_CHANNEL); each other feed switches to checking before it acknowledges (ACK_CHANNEL),
 * and `join` resolves once all it counted have, so an instance that awaits it before serving
 * is never read stale by the others. When the others are gone, a new epoch starts.
 *
 * Opened on the first call (stamp or join): a serving instance joins at its start
 * (server.ts), one-shot CLI commands never do, so they never listen.
 */
function changeFeed(url: string, schema: string | undefined) {
  let client: pg.Client | undefined
  let started = false
  let connected = false
  let closed = false
  let epoch = 0
  let notes = 0
  let retry: NodeJS.Timeout | undefined
  let counting: NodeJS.Timeout | undefined
  let backoff = RETRY_MIN_MS
  /** The backend pids of the other feeds on this schema: from the last count, plus joins heard since. */
  let others = new Set<number>()
  /** For each count out, the joins heard meanwhile: its answer may predate them. */
  const meanwhile = new Set<Set<number>>()
  /** The feeds this one's announcement still waits to hear from (undefined: none is out). */
  let unacknowledged: Set<number> | undefined
  let joinDone: () => void = () => {}
  const joined = new Promise<void>((resolve) => {
    joinDone = resolve
  })

  const setOthers = (next: Set<number>) => {
    // Back to one instance: nothing confirmed before (while the stamp was not used) is trusted.
    if (others.size > 0 && next.size === 0) epoch++
    others = next
    // A feed gone before it answered has nothing left to acknowledge.
    for (const pid of unacknowledged ?? []) if (!others.has(pid)) acknowledged(pid)
  }
  const acknowledged = (pid: number) => {
    if (unacknowledged === undefined) return
    unacknowledged.delete(pid)
    if (unacknowledged.size > 0) return
    unacknowledged = undefined
    joinDone()
  }

  function lost(c: pg.Client) {
    if (client !== c) return
    client = undefined
    connected = false
    clearTimeout(counting)
    // A join cannot be acknowledged without the connection: the start goes on (the stamp stays undefined meanwhile).
    unacknowledged = undefined
    joinDone()
    c.end().catch(() => {})
    if (closed) return
    retry = setTimeout(() => void connect(), backoff)
    retry.unref()
    backoff = Math.min(backoff * 2, RETRY_MAX_MS)
  }

  /** The other feeds on this schema: same database, same application_name (as PostgreSQL keeps it), another backend. */
  async function count(c: pg.Client): Promise<void> {
    const joins = new Set<number>()
    meanwhile.add(joins)
    try {
      const { rows } = await c.query<{ pid: number }>(
        `select pid from pg_stat_activity
          where datname = current_database() and application_name = current_setting('application_name') and pid <> pg_backend_pid()`,
      )
      if (client === c) setOthers(new Set([...rows.map((r) => r.pid), ...joins]))
    } finally {
      meanwhile.delete(joins)
    }
  }

  const countAgain = (c: pg.Client) => {
    counting = setTimeout(() => {
      count(c).then(
        () => {
          if (client === c) countAgain(c)
        },
        () => lost(c),
      )
    }, FEED_COUNT_MS)
    counting.unref()
  }

  async function connect() {
    const c = new pg.Client({
      connectionString: url,
      application_name: schema ? `wishlist change feed ${schema}` : 'wishlist change feed',
      ...searchPath(schema),
    })
    client = c
    let own: string | undefined
    let pid: number | undefined
    c.on('error', () => lost(c))
    c.on('end', () => lost(c))
    c.on('notification', (msg) => {
      if (msg.channel === OWNER_VERSIONS) {
        if (msg.payload !== own) return
        notes++
      } else if (msg.channel === JOIN_CHANNEL) {
        if (msg.payload !== own || msg.processId === pid) return
        // Checking versions from now on (the stamp is undefined while `others` is not empty), then saying so.
        others.add(msg.processId)
        for (const joins of meanwhile) joins.add(msg.processId)
        c.query('select pg_notify($1, $2)', [ACK_CHANNEL, `${msg.processId}:${own}`]).catch(() => lost(c))
      } else if (msg.channel === ACK_CHANNEL && msg.payload === `${pid}:${own}`) acknowledged(msg.processId)
    })
    try {
      await c.connect()
      const me = (await c.query<{ schema: string; pid: number }>('select current_schema() as schema, pg_backend_pid() as pid')).rows[0]
      own = me?.schema
      pid = me?.pid
      await c.query(`LISTEN ${OWNER_VERSIONS}; LISTEN ${JOIN_CHANNEL}; LISTEN ${ACK_CHANNEL}`)
      // Listening before counting: a feed that connects after this count finds this one in its own.
      await count(c)
      if (client !== c) return
      if (others.size > 0) {
        unacknowledged = new Set(others)
        await c.query('select pg_notify($1, $2)', [JOIN_CHANNEL, own])
      } else joinDone()
      if (client !== c) return
      epoch++
      connected = true
      backoff = RETRY_MIN_MS
      countAgain(c)
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
      if (!connected || others.size > 0) return undefined
      if (last.epoch !== epoch || last.notes !== notes || last.writes !== writes)
        last = { epoch, notes, writes, stamp: `${epoch}:${notes}:${writes}` }
      return last.stamp
    },
    join(): Promise<void> {
      start()
      setTimeout(joinDone, JOIN_WAIT_MS).unref()
      return joined
    },
    async close() {
      closed = true
      clearTimeout(retry)
      clearTimeout(counting)
      joinDone()
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
