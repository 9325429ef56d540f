/**
 * `npm run lint:openapi`: builds the app in-process (in-memory SQLite, never listening),
 * takes the document it serves at GET /v1/openapi.json and lints it with Redocly's
 * recommended rules (redocly.yaml). Exits with Redocly's status.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', JWT_SECRET: 'openapi-lint-secret-not-used-for-anything', PUBLIC_BASE_URL: 'http://localhost:3000' })
const storage = openStorage(config.database)
let document: string
try {
  await migrateToLatest(storage)
  const app = await buildApp({ config, storage, logger: false })
  try {
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
    if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`)
    document = res.body
  } finally {
    await app.close()
  }
} finally {
  await storage.destroy()
}
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'))
const file = join(dir, 'openapi.json')
writeFileSync(file, `${JSON.stringify(JSON.parse(document), null, 2)}\n`)
const redocly = resolve(root, '../../node_modules/.bin/redocly')
const run = spawnSync(redocly, ['lint', file, '--config', resolve(root, 'redocly.yaml'), ...process.argv.slice(2)], { stdio: 'inherit' })
rmSync(dir, { recursive: true, force: true })
process.exit(run.status ?? 1)
