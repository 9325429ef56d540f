/**
 * A private, throwaway PostgreSQL primary with a streaming standby (for the failover drill,
 * scripts/failover-drill.ts): two clusters on their own free ports and socket directory, never
 * the shared server on 5432. The standby is a `pg_basebackup -R` copy of the primary that
 * connects as `standby1`; with `synchronous: true` the primary names it in
 * `synchronous_standby_names` (and keeps `synchronous_commit = on`), so a commit is
 * acknowledged only once the standby has it on disk.
 *
 * The primary's replication settings are command-line options, not postgresql.conf lines:
 * the base backup copies postgresql.conf, and the standby, once promoted, must not wait for a
 * standby of its own that does not exist (it runs alone until one is attached).
 *
 * As root, initdb, pg_basebackup and postgres run as the `postgres` user (pg-cluster.ts).
 */
import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { asPostgres, binDir, freePort } from './pg-cluster.js'

const run = promisify(execFile)

export const STANDBY_NAME = 'standby1'

export interface PgNode {
  port: number
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string
  /** `immediate` is a crash (no checkpoint, sessions cut at once). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  /** The server log so far (for failure messages). */
  log(): string
  /** One statement's rows. */
  query<R extends pg.QueryResultRow>(statement: string, values?: unknown[], database?: string): Promise<R[]>
}

export interface ReplicatedPair {
  primary: PgNode
  standby: PgNode & {
    /** `pg_ctl promote -w`: returns once the standby accepts writes. */
    promote(): Promise<void>
  }
  /** Stops both servers if they run and deletes their directories. */
  destroy(): Promise<void>
}

const COMMON = (port: number, dir: string) => `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`

export async function startReplicatedPair(opts: { synchronous: boolean }): Promise<ReplicatedPair> {
  const bin = binDir()
  const dir = mkdtempSync(join(tmpdir(), 'wishlist-pgrepl-'))
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()))
  }
  const running = new Set<string>()
  const node = (name: string, port: number, options: string): PgNode & { start(): Promise<void>; data: string } => {
    const data = join(dir, name)
    const logFile = join(dir, `${name}.log`)
    const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`
    return {
      port,
      data,
      url,
      async start() {
        await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'])
        running.add(data)
      },
      async stop(mode = 'fast') {
        await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '60', 'stop'])
        running.delete(data)
      },
      log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
      async query<R extends pg.QueryResultRow>(statement: string, values: unknown[] = [], database = 'postgres') {
        const c = new pg.Client({ connectionString: url(database) })
        await c.connect()
        try {
          return (await c.query<R>(statement, values)).rows
        } finally {
          await c.end()
        }
      },
    }
  }
  const destroy = async () => {
    try {
      for (const data of running) await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', '-t', '60', 'stop'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    const primaryPort = await freePort()
    const replication = opts.synchronous ? ` -c synchronous_standby_names=${STANDBY_NAME} -c synchronous_commit=on` : ''
    const primary = node('primary', primaryPort, `${COMMON(primaryPort, dir)} -c wal_level=replica -c max_wal_senders=5${replication}`)
    await asPostgres(join(bin, 'initdb'), [
      '-D',
      primary.data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '--no-sync',
      '--no-instructions',
      '-E',
      'UTF8',
    ])
    await primary.start()

    const standbyPort = await freePort()
    const standby = node('standby', standbyPort, `${COMMON(standbyPort, dir)} -c hot_standby=on`)
    // -R writes standby.signal and primary_conninfo (with this connection's application_name).
    await asPostgres(join(bin, 'pg_basebackup'), [
      '-D',
      standby.data,
      '-d',
      `host=127.0.0.1 port=${primaryPort} user=postgres application_name=${STANDBY_NAME}`,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ])
    await standby.start()
    return {
      primary,
      standby: {
        ...standby,
        async promote() {
          await asPostgres(join(bin, 'pg_ctl'), ['-D', standby.data, '-w', '-t', '60', 'promote'])
        },
      },
      destroy,
    }
  } catch (err) {
    await destroy()
    throw err
  }
}
