/**
 * Runs test files of the postgres project through a private PgBouncer in transaction mode
 * (test/helpers/pgbouncer.ts, PgBouncer's default settings otherwise): each file's database
 * is a database of its own reached through PgBouncer, the service configured as behind it
 * (PG_POOL_MODE=transaction, DATABASE_DIRECT_URL straight to PostgreSQL; test/helpers/db.ts).
 *
 *   npx tsx scripts/test-through-pgbouncer.ts test/http/wishlist-items.test.ts …
 *
 * Needs Debian's pgbouncer package; exits with vitest's exit code.
 */
import { spawn } from 'node:child_process'
import { startPgBouncer } from '../test/helpers/pgbouncer.js'

const files = process.argv.slice(2)
const bouncer = await startPgBouncer()
let code: number
try {
  const child = spawn('npx', ['vitest', 'run', '--project', 'postgres', ...files], {
    stdio: 'inherit',
    env: { ...process.env, DB: 'postgres', TEST_PGBOUNCER_URL: bouncer.url('') },
  })
  code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)))
} finally {
  await bouncer.stop()
}
process.exit(code)
