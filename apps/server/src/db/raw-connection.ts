/**
 * One plain connection to either backend, for the commands that read or write whole tables
 * (db/transfer.ts): the service's Storage goes through Kysely, its statement cache and group
 * commit, made for many small requests; a move streams every row of every table, so it talks
 * to the drivers directly: node:sqlite's statements, pg with a server-side cursor.
 */
import pg from 'pg'
import Cursor from 'pg-cursor'
import type { StatementSync, SQLInputValue } from 'node:sqlite'
import type { DatabaseTarget } from '../config.js'
import { pgTypes } from './connect.js'
import { openSqliteFile } from './sqlite-file.js'
import type { Backend } from './types.js'

export type Row = Record<string, unknown>

export interface RawConnection {
  readonly backend: Backend
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>
  run(sql: string, params?: readonly unknown[]): Promise<void>
  /** A query's rows, `size` at a time, read as they are consumed. */
  batches(sql: string, size: number): AsyncGenerator<Row[]>
  close(): Promise<void>
}

function sqliteConnection(file: string): RawConnection {
  const sqlite = openSqliteFile(file)
  const statements = new Map<string, StatementSync>()
  const prepare = (text: string) => {
    let stmt = statements.get(text)
    if (stmt === undefined) {
      stmt = sqlite.db.prepare(text)
      // Bulk inserts come in two or three shapes per table; anything else is run once.
      if (statements.size < 64) statements.set(text, stmt)
    }
    return stmt
  }
  const args = (params: readonly unknown[]) => params as SQLInputValue[]
  return {
    backend: 'sqlite',
    all: async (text, params = []) => prepare(text).all(...args(params)) as Row[],
    run: async (text, params = []) => void prepare(text).run(...args(params)),
    async *batches(text, size) {
      let batch: Row[] = []
      for (const row of sqlite.db.prepare(text).iterate()) {
        batch.push(row as Row)
        if (batch.length === size) {
          yield batch
          batch = []
        }
      }
      if (batch.length) yield batch
    },
    close: async () => sqlite.close(),
  }
}

async function postgresConnection(url: string, schema: string | undefined): Promise<RawConnection> {
  const client = new pg.Client({ connectionString: url, types: pgTypes, ...(schema ? { options: `-c search_path=${schema}` } : {}) })
  await client.connect()
  return {
    backend: 'postgres',
    all: async (text, params = []) => (await client.query<Row>(text, params as unknown[])).rows,
    run: async (text, params = []) => void (await client.query(text, params as unknown[])),
    async *batches(text, size) {
      const cursor = client.query(new Cursor<Row>(text))
      try {
        for (;;) {
          const rows = await cursor.read(size)
          if (rows.length === 0) return
          yield rows
        }
      } finally {
        await cursor.close()
      }
    },
    close: () => client.end(),
  }
}

export async function openRawConnection(target: DatabaseTarget): Promise<RawConnection> {
  return target.kind === 'sqlite' ? sqliteConnection(target.file) : postgresConnection(target.directUrl ?? target.url, target.schema)
}
