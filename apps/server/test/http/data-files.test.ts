/**
 * The data folder's permissions (docs/operations.md, "Files and permissions"): the database and
 * its WAL/SHM files, the lock file, the generated `jwt-secret`, `demo-credentials.json` and
 * every backup are `0600` in a `0700` folder, whatever the umask: each process here runs
 * with the permissive umask 022 (what most systems give a user), under which a file
 * created without an explicit mode is `0644`, readable by every local user.
 *
 * SQLite files only, by nature (PostgreSQL keeps its data on its own server): the tests run
 * in the sqlite project and are skipped in the postgres one.
 */
import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { DemoCredentials } from '../../src/cli/demo.js'
import { type ServerProcess, startServerProcess } from '../helpers/server-process.js'

const UMASK = 0o022
const dir = mkdtempSync(join(tmpdir(), 'wishlist-data-files-'))
const dataDir = join(dir, 'data')
const database = join(dataDir, 'wishlist.db')

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8)
const modes = (paths: string[]) => Object.fromEntries(paths.map((p) => [p.slice(dir.length + 1), modeOf(p)]))

/** `wishlist <args>` from source, in a process started with umask 022. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const node = [process.execPath, '--import', 'tsx', 'test/helpers/cli-entry.ts', ...args]
  try {
    const { stdout, stderr } = await promisify(execFile)('/bin/sh', ['-c', `umask 022 && exec "$@"`, 'sh', ...node], {
      cwd: process.cwd(),
      env: { ...process.env, ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** `wishlist serve --demo` in `dir` on a fresh or existing data folder, generating its own JWT key. */
const serve = () =>
  startServerProcess(
    { DATABASE_URL: `sqlite:${database}`, JWT_SECRET: '', HOST: '127.0.0.1' },
    { args: ['--demo'], cwd: dir, umask: UMASK },
  )

/** SIGTERM; resolves once the process has exited 0 and its output has all been read. */
async function stop(server: ServerProcess): Promise<void> {
  const closed = new Promise((resolve) => server.child.once('close', resolve))
  server.child.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  await closed
}

/** Adds an item with the demo's credentials: a write that goes through the WAL. */
async function addItem(server: ServerProcess, productId: string): Promise<void> {
  const demo = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8')) as DemoCredentials
  const minted = await fetch(`${server.url}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: demo.apiKey.keyId, api_secret: demo.apiKey.secret, customer_id: demo.customerId }),
  })
  const { data } = (await minted.json()) as { data: { token: string } }
  const added = await fetch(`${server.url}/v1/wishlists/me/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${data.token}` },
    body: JSON.stringify({ product_id: productId }),
  })
  expect(added.status).toBe(201)
}

const NAMES = ['wishlist.db', 'wishlist.db-wal', 'wishlist.db-shm', 'wishlist.db.lock', 'jwt-secret', 'demo-credentials.json']
const FILES = NAMES.map((f) => join(dataDir, f))
/** Every one of them `0600`, as `modes(FILES)` names them. */
const ALL_PRIVATE = Object.fromEntries(NAMES.map((f) => [`data/${f}`, '600']))

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe.skipIf(process.env.DB === 'postgres')('the data folder and its files (SQLite)', { timeout: 120_000 }, () => {
  it('serve --demo on a fresh folder: the folder 0700, the database, its WAL and SHM, the lock, jwt-secret and demo-credentials.json 0600', async () => {
    const server = await serve()
    try {
      await addItem(server, '501')
      expect({ folder: modeOf(dataDir), ...modes(FILES) }).toEqual({ folder: '700', ...ALL_PRIVATE })
    } finally {
      await stop(server)
    }
    // A clean stop checkpoints and deletes the WAL and SHM: the next start makes them anew.
    expect(existsSync(`${database}-wal`)).toBe(false)
  })

  it('a restart recreates the WAL and SHM 0600; files an older version left 0644 are made 0600, and a 0755 folder is reported', async () => {
    // What an older version left: everything 0644 in a 0755 folder.
    chmodSync(dataDir, 0o755)
    for (const f of [database, join(dataDir, 'jwt-secret'), join(dataDir, 'demo-credentials.json')]) chmodSync(f, 0o644)
    const server = await serve()
    try {
      await addItem(server, '502')
      expect(modes(FILES)).toEqual(ALL_PRIVATE)
      // A folder the service did not create this time is left as it is, with a warning at start.
      expect(modeOf(dataDir)).toBe('755')
    } finally {
      await stop(server)
    }
    // Log lines reach stdout in batches (lib/log-sink.ts): all of them by the exit.
    expect(server.output()).toContain(
      `the data folder ${dataDir} is 0755: other users can list it (its files are 0600); run chmod 700 on it`,
    )
    chmodSync(dataDir, 0o700)
  })

  it("backup --to writes the backup 0600; restore makes the database 0600 whatever the backup file's mode", async () => {
    const backups = join(dir, 'backups')
    mkdirSync(backups, { mode: 0o700 })
    const backup = join(backups, 'wishlist-1.db')
    const res = await cli({ DATABASE_URL: `sqlite:${database}` }, 'backup', '--to', backup)
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(modeOf(backup)).toBe('600')

    // A backup copied around with a loose mode, restored into a folder that does not exist yet.
    chmodSync(backup, 0o644)
    const restoredDir = join(dir, 'restored', 'data')
    const restored = join(restoredDir, 'wishlist.db')
    const back = await cli({ DATABASE_URL: `sqlite:${restored}` }, 'restore', '--from', backup)
    expect(back.stderr).toBe('')
    expect(back.code).toBe(0)
    expect({ folders: [modeOf(join(dir, 'restored')), modeOf(restoredDir)], ...modes([restored, `${restored}.lock`]) }).toEqual({
      folders: ['700', '700'],
      'restored/data/wishlist.db': '600',
      'restored/data/wishlist.db.lock': '600',
    })
  })

  it('backup --to a folder that does not exist exits 1 with one line naming it, and creates nothing', async () => {
    const target = join(dir, 'nonexistent', 'dir', 'x.db')
    const res = await cli({ DATABASE_URL: `sqlite:${database}` }, 'backup', '--to', target)
    expect(res.code).toBe(1)
    expect(res.stdout).toBe('')
    expect(res.stderr).toBe(
      `wishlist: the folder ${join(dir, 'nonexistent', 'dir')} does not exist; create it (mkdir -m 700) or give --to a file in an existing folder\n`,
    )
    expect(existsSync(join(dir, 'nonexistent'))).toBe(false)
  })
})
