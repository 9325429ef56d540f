/**
 * The OpenAPI document as the server serves it, built in-process (in-memory SQLite, never
 * listening) with fixed settings and Shopify app mode on, so that its routes are part of
 * the document (as in packages/sdk/openapi.json).
 */
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'

/** The environment the document is rendered with (tests use it too). */
export const DOCUMENT_ENV = {
  DATABASE_URL: 'sqlite::memory:',
  JWT_SECRET: 'openapi-document-secret-not-used-for-anything',
  PUBLIC_BASE_URL: 'http://localhost:3000',
  SHOPIFY_API_SECRET: 'openapi-document-shopify-secret',
  SHOPIFY_API_KEY: 'openapi-document-shopify-client-id',
}

export async function servedDocument(): Promise<string> {
  const config = loadConfig(DOCUMENT_ENV)
  const storage = openStorage(config.database)
  try {
    await migrateToLatest(storage)
    const app = await buildApp({ config, storage, logger: false })
    try {
      const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
      if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`)
      return res.body
    } finally {
      await app.close()
    }
  } finally {
    await storage.destroy()
  }
}
