import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { TEST_JWT_SECRET } from './app.js'
import type { TestDatabase } from './db.js'

const run = promisify(execFile)

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs `wishlist <args>` from source in a new Node process against the given database. */
export async function runCli(database: TestDatabase, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/cli-entry.ts', ...args], {
      cwd: process.cwd(),
      env: { ...process.env, DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as CliResult
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}
