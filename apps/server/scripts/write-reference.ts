/** `npm run docs:reference -w apps/server`: writes docs/reference.md from the served OpenAPI document. */
import { writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { renderReference } from './openapi-reference.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', JWT_SECRET: 'openapi-reference-secret-not-used-for-anything', PUBLIC_BASE_URL: 'http://localhost:3000' })
const storage = openStorage(config.database)
try {
  await migrateToLatest(storage)
  const app = await buildApp({ config, storage, logger: false })
  try {
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
    const markdown = renderReference(res.json())
    writeFileSync(resolve(root, 'docs/reference.md'), markdown)
    process.stdout.write(`wrote docs/reference.md (${markdown.length} B)\n`)
  } finally {
    await app.close()
  }
} finally {
  await storage.destroy()
}
