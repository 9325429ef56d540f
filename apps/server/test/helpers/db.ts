import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { DatabaseTarget } from '../../src/config.js'

export const BACKEND = (process.env.DB ?? 'sqlite') as 'sqlite' | 'postgres'
export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface TestDatabase {
  target: DatabaseTarget
  /** A DATABASE_URL that reaches the same database (for CLI and child-process tests). */
  url: string
  drop(): Promise<void>
}

/**
 * A fresh database per test file: `:memory:` SQLite, or a new schema in the test
 * PostgreSQL database (search_path pinned to it), dropped afterwards. `backend` overrides
 * the project's (DB) for tests that use both.
 */
export async function freshDatabase(opts: { sqliteFile?: string; backend?: 'sqlite' | 'postgres' } = {}): Promise<TestDatabase> {
  if ((opts.backend ?? BACKEND) === 'sqlite') {
    const file = opts.sqliteFile ?? ':memory:'
    // SQLITE_GROUP_COMMIT=false (the sqlite-autocommit project): one COMMIT per transaction.
    const groupCommit = process.env.SQLITE_GROUP_COMMIT !== 'false'
    return { target: { kind: 'sqlite', file, ...(groupCommit ? {} : { groupCommit }) }, url: `sqlite:${file}`, drop: async () => {} }
  }
  if (process.env.TEST_PGBOUNCER_URL) return throughPgBouncer(process.env.TEST_PGBOUNCER_URL)
  const schema = `t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const sep = PG_URL.includes('?') ? '&' : '?'
  return {
    target: { kind: 'postgres', url: PG_URL, schema },
    url: `${PG_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
    },
  }
}

/** PG_URL with another database name. */
export function pgUrlOf(database: string): string {
  const url = new URL(PG_URL)
  url.pathname = `/${database}`
  return url.toString()
}

/**
 * TEST_PGBOUNCER_URL (postgres://…@127.0.0.1:<port>, a PgBouncer in transaction mode whose `*`
 * entry reaches the test server's databases by name, test/helpers/pgbouncer.ts): a database of
 * its own per test file instead of a schema (a schema's search_path is a startup parameter
 * PgBouncer refuses), used as the service is behind PgBouncer (PG_POOL_MODE=transaction,
 * DATABASE_DIRECT_URL straight to it). `url`, for child processes, is the direct one.
 */
async function throughPgBouncer(bouncer: string): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const pooled = new URL(bouncer)
  pooled.pathname = `/${name}`
  return {
    target: { kind: 'postgres', url: pooled.toString(), poolMode: 'transaction', directUrl: pgUrlOf(name) },
    url: pgUrlOf(name),
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    },
  }
}
