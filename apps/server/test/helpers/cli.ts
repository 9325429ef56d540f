import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { main } from '../../src/cli/main.js'
import { TEST_JWT_SECRET } from './app.js'
import type { TestDatabase } from './db.js'

const run = promisify(execFile)

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

const cliEnv = (database: TestDatabase) => ({ ...process.env, DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET })

/**
 * Runs `wishlist <args>` in this process: `main()` with its output captured and the
 * database's environment, as the `wishlist` binary runs it (an exception that escapes
 * `main` is exit code 1 with its stack on stderr, as in a process).
 */
export const runCli = (database: TestDatabase, ...args: string[]): Promise<CliResult> => runCliWith(database, {}, ...args)

/** `runCli` with more settings in the environment (`env`, e.g. Shopify app mode's). */
export async function runCliWith(database: TestDatabase, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ...cliEnv(database), ...env },
  }
  try {
    const code = await main(args, io)
    return { code, stdout, stderr }
  } catch (err) {
    stderr += err instanceof Error ? (err.stack ?? err.message) : String(err)
    return { code: 1, stdout, stderr }
  }
}

/** Runs `wishlist <args>` from source in a new Node process (the smoke test of the real entry point). */
export async function runCliProcess(database: TestDatabase, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/cli-entry.ts', ...args], {
      cwd: process.cwd(),
      env: cliEnv(database),
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as CliResult
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}
