import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp, LOG_REDACT } from '../../src/app.js'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { testConfig } from './app.js'
import { freshDatabase } from './db.js'

/** An app on a fresh database logging at trace level (production redaction) into `lines`; `env` adds settings. */
export async function loggingApp(
  env: Record<string, string> = {},
): Promise<{ app: FastifyInstance; lines: string[]; storage: Storage; close(): Promise<void> }> {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString())
      done()
    },
  })
  const database = await freshDatabase()
  const storage = openStorage(database.target)
  await migrateToLatest(storage)
  const app = await buildApp({
    config: testConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:3000', ...env }),
    storage,
    logger: { level: 'trace', redact: LOG_REDACT, stream },
  })
  return {
    app,
    lines,
    storage,
    async close() {
      await app.close()
      await storage.destroy()
      await database.drop()
    },
  }
}
