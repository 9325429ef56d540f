/**
 * A private, throwaway PostgreSQL cluster for fault tests: its own data directory, port and
 * socket directory, so a test may stop and restart it without touching the shared server
 * on 5432 that every other suite depends on.
 *
 * initdb and postgres refuse to run as root: as root they run as the `postgres` user
 * through runuser, and the temporary directory is handed to that user.
 */
import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface PgCluster {
  port: number
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  /** Stops the server; `immediate` is a crash (no checkpoint), `fast` a clean shutdown that cuts sessions. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  start(): Promise<void>
  /** The server log so far (for failure messages). */
  log(): string
  /** Stops the server if it runs and deletes the cluster. */
  destroy(): Promise<void>
}

export function binDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin')
  throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin')
}

/** A loopback port free at the time of asking (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export async function asPostgres(cmd: string, args: string[]): Promise<void> {
  const root = process.getuid?.() === 0
  const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]
  await run(file, argv, { timeout: 60_000 })
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = binDir()
  const dir = mkdtempSync(join(tmpdir(), 'wishlist-pgfault-'))
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres'])
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()))
  }
  const data = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  const port = await freePort()
  await asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '--no-instructions', '-E', 'UTF8'])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`
  let running = false
  const cluster: PgCluster = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'])
      running = true
    },
    async stop(mode = 'fast') {
      await asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '60', 'stop'])
      running = false
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async destroy() {
      try {
        if (running) await cluster.stop('immediate')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
  try {
    await cluster.start()
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return cluster
}
