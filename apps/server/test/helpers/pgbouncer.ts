/**
 * A private PgBouncer (Debian's `pgbouncer` package, 1.18) in front of the test PostgreSQL:
 * its own ini in a temporary directory, `pool_mode = transaction` and otherwise PgBouncer's
 * default settings (no `ignore_startup_parameters`, no `max_prepared_statements`), trust
 * authentication, listening on a free loopback port. Every database name a client asks for
 * goes to the PostgreSQL database of that name (the `*` entry).
 *
 * PgBouncer refuses to run as root: as root it is started with `-u postgres` (it drops to
 * that user itself, so the child process is PgBouncer) and its directory is handed to that user.
 *
 * For a failover (scripts/failover-drill.ts): named database entries instead of `*` (each with
 * its own pool mode), more `[pgbouncer]` settings, and `repoint()`, which rewrites the ini with
 * another upstream and has PgBouncer reload it (`RELOAD` on the admin console).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './pg-cluster.js'

export interface PgBouncer {
  port: number
  /** postgres://postgres@127.0.0.1:<port>/<database>: `database` through this PgBouncer. */
  url(database: string): string
  /** A command of PgBouncer's admin console (`SHOW STATS`, `SHOW POOLS`…), its rows. */
  admin(command: string): Promise<Record<string, unknown>[]>
  /** Points every database entry at another PostgreSQL server: rewrites the ini, then `RELOAD`. */
  repoint(upstream: { host?: string; port: number }): Promise<void>
  /** PgBouncer's log so far (for failure messages). */
  log(): string
  /** Stops PgBouncer and deletes its directory. */
  stop(): Promise<void>
}

const BINARY = '/usr/sbin/pgbouncer'
const START_TIMEOUT_MS = 10_000

export const pgBouncerInstalled = (): boolean => existsSync(BINARY)

export interface PgBouncerOptions {
  /** Host and port of the PostgreSQL server (default 127.0.0.1:5432). */
  host?: string
  port?: number
  /** Named entries (name → PostgreSQL database, pool mode if not the default) instead of `*`. */
  databases?: Record<string, { dbname: string; poolMode?: 'session' | 'transaction' }>
  /** More `[pgbouncer]` settings (`server_login_retry`, `query_wait_timeout`…). */
  settings?: Record<string, string | number>
}

export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  if (!pgBouncerInstalled()) throw new Error(`${BINARY} is missing: apt-get install -y --no-install-recommends pgbouncer`)
  const dir = mkdtempSync(join(tmpdir(), 'wishlist-pgbouncer-'))
  const port = await freePort()
  const logFile = join(dir, 'pgbouncer.log')
  const ini = join(dir, 'pgbouncer.ini')
  const writeIni = (upstream: { host?: string; port?: number }) => {
    const server = `host=${upstream.host ?? '127.0.0.1'} port=${upstream.port ?? 5432}`
    const entries = options.databases
      ? Object.entries(options.databases).map(
          ([name, d]) => `${name} = ${server} dbname=${d.dbname}${d.poolMode ? ` pool_mode=${d.poolMode}` : ''}`,
        )
      : [`* = ${server}`]
    writeFileSync(
      ini,
      [
        '[databases]',
        ...entries,
        '',
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'admin_users = postgres',
        'pool_mode = transaction',
        `logfile = ${logFile}`,
        ...Object.entries(options.settings ?? {}).map(([k, v]) => `${k} = ${v}`),
        '',
      ].join('\n'),
    )
  }
  writeIni(options)
  // trust still wants the user listed.
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n')
  const root = process.getuid?.() === 0
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    for (const f of [dir, ini, join(dir, 'userlist.txt')]) chownSync(f, uid, gid)
  }
  const child: ChildProcess = spawn(BINARY, [...(root ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
  let gone = false
  void exited.then(() => (gone = true))
  const log = () => `${output}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`

  const stop = async () => {
    if (!gone) {
      child.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }

  // Ready once a client gets through it to PostgreSQL: a bounded retry loop on connect.
  const deadline = Date.now() + START_TIMEOUT_MS
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    if (gone) {
      const text = log()
      await stop()
      throw new Error(`pgbouncer exited at start: ${text}`)
    }
    const probe = new pg.Client({ connectionString: url(Object.keys(options.databases ?? {})[0] ?? 'postgres') })
    probe.on('error', () => {})
    try {
      await probe.connect()
      await probe.query('select 1')
      await probe.end()
      break
    } catch (err) {
      await probe.end().catch(() => {})
      if (Date.now() > deadline) {
        const text = log()
        await stop()
        throw new Error(`pgbouncer did not accept connections within ${START_TIMEOUT_MS} ms (${String(err)}): ${text}`, { cause: err })
      }
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }

  const admin = async (command: string) => {
    const c = new pg.Client({ connectionString: url('pgbouncer') })
    await c.connect()
    try {
      return (await c.query<Record<string, unknown>>(command)).rows
    } finally {
      await c.end()
    }
  }
  return {
    port,
    url,
    admin,
    async repoint(upstream) {
      writeIni(upstream)
      await admin('RELOAD')
    },
    log,
    stop,
  }
}
