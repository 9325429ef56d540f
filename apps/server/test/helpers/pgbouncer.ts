/**
 * A private PgBouncer (Debian's `pgbouncer` package, 1.18) in front of the test PostgreSQL:
 * its own ini in a temporary directory, `pool_mode = transaction` and otherwise PgBouncer's
 * default settings (no `ignore_startup_parameters`, no `max_prepared_statements`), trust
 * authentication, listening on a free loopback port. Every database name a client asks for
 * goes to the PostgreSQL database of that name (the `*` entry).
 *
 * PgBouncer refuses to run as root: as root it is started with `-u postgres` (it drops to
 * that user itself, so the child process is PgBouncer) and its directory is handed to that user.
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
  /** PgBouncer's log so far (for failure messages). */
  log(): string
  /** Stops PgBouncer and deletes its directory. */
  stop(): Promise<void>
}

const BINARY = '/usr/sbin/pgbouncer'
const START_TIMEOUT_MS = 10_000

export const pgBouncerInstalled = (): boolean => existsSync(BINARY)

/** `upstream`: host and port of the PostgreSQL server (default 127.0.0.1:5432). */
export async function startPgBouncer(upstream: { host?: string; port?: number } = {}): Promise<PgBouncer> {
  if (!pgBouncerInstalled()) throw new Error(`${BINARY} is missing: apt-get install -y --no-install-recommends pgbouncer`)
  const dir = mkdtempSync(join(tmpdir(), 'wishlist-pgbouncer-'))
  const port = await freePort()
  const logFile = join(dir, 'pgbouncer.log')
  const ini = join(dir, 'pgbouncer.ini')
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${upstream.host ?? '127.0.0.1'} port=${upstream.port ?? 5432}`,
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
      '',
    ].join('\n'),
  )
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
    const probe = new pg.Client({ connectionString: url('postgres') })
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

  return {
    port,
    url,
    async admin(command) {
      const c = new pg.Client({ connectionString: url('pgbouncer') })
      await c.connect()
      try {
        return (await c.query<Record<string, unknown>>(command)).rows
      } finally {
        await c.end()
      }
    },
    log,
    stop,
  }
}
