// `wishlist serve` in a child process (from source, or compiled), for crash and shutdown tests and the fault runs.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { SERVICE_NODE_FLAGS } from '../../src/cli/node-flags.js'
import { TEST_JWT_SECRET } from './app.js'

export interface ServerProcess {
  child: ChildProcess
  /** http://127.0.0.1:<port> */
  url: string
  port: number
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>
  /** Everything the process printed so far. */
  output(): string
}

const CLI_ENTRY = resolve(dirname(fileURLToPath(import.meta.url)), 'cli-entry.ts')
// The installed command (compiled by `npm run build`), for measurements of what users run: from
// source, tsx's transformed modules and source maps add about 50 MB to the process.
const COMPILED_CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../bin/wishlist.js')
// By location, so that a process started in another folder (`opts.cwd`) finds it.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/**
 * `opts.args`: more arguments after `serve` (`--demo`); `opts.cwd`: where it runs (its `data/`
 * folder); `opts.compiled`: run `bin/wishlist.js` (built beforehand) instead of the source;
 * `opts.umask`: the process's umask (set by a shell that then execs Node, so the child is Node).
 */
export async function startServerProcess(
  env: Record<string, string>,
  opts: { args?: string[]; cwd?: string; compiled?: boolean; umask?: number } = {},
): Promise<ServerProcess> {
  const entry = opts.compiled === true ? [COMPILED_CLI] : ['--import', TSX, CLI_ENTRY]
  const node = [process.execPath, ...SERVICE_NODE_FLAGS, ...entry, 'serve', ...(opts.args ?? [])]
  const [command, ...args] =
    opts.umask === undefined ? node : ['/bin/sh', '-c', `umask ${opts.umask.toString(8).padStart(3, '0')} && exec "$@"`, 'sh', ...node]
  const child = spawn(command as string, args, {
    ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
    env: { ...process.env, JWT_SECRET: TEST_JWT_SECRET, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m) resolve(m[1] as string)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.on('exit', () => reject(new Error(`server exited early: ${out}`)))
  })
  return { child, url, port: Number(new URL(url).port), exited, output: () => out }
}

/** `wishlist shops create --json` against a database: the shop, its storefront key and API key. */
export async function createShopWithCli(databaseUrl: string, plan = 'scale') {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/helpers/cli-entry.ts',
      'shops',
      'create',
      '--domain',
      `cli-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.myshopify.com`,
      '--plan',
      plan,
      '--json',
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET } },
  )
  return JSON.parse(stdout) as { shop: { id: string; domain: string }; storefrontKey: string; apiKey: { keyId: string; secret: string } }
}

/** Ends a measurement script: exit code of `main` (1 if it threw), its scratch directory removed. */
export async function exitAfter(main: () => Promise<number>, dir: string): Promise<never> {
  let code = 1
  try {
    code = await main()
  } catch (err) {
    console.error(err)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.exit(code)
}
