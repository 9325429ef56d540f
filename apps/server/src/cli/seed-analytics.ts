/**
 * `npm run seed:analytics -- --events N [--domain D] [--plan P] [--seed S]`: creates a shop
 * (or uses an empty one by --domain) and fills it with a simulated year of activity (see
 * analytics-seed.ts). Reads DATABASE_URL, migrates first, prints one JSON object.
 */
import { parseArgs } from 'node:util'
import { parseDatabaseUrl } from '../config.js'
import { openStorage } from '../db/connect.js'
import { migrateToLatest } from '../db/migrate.js'
import { seedAnalytics } from './analytics-seed.js'
import { isPlan } from '../modules/shops/plans.js'
import { createShopsService } from '../modules/shops/shops.service.js'

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '100000' },
      domain: { type: 'string' },
      plan: { type: 'string', default: 'growth' },
      seed: { type: 'string', default: '42' },
    },
  })
  const events = Number(values.events)
  if (!Number.isInteger(events) || events < 1) throw new Error('--events must be a positive integer')
  if (!isPlan(values.plan)) throw new Error('--plan must be free, starter, growth or scale')
  // Only the database matters here (no JWT secret needed to seed).
  const storage = openStorage(parseDatabaseUrl(process.env.DATABASE_URL))
  try {
    await migrateToLatest(storage)
    const shops = createShopsService({ db: storage.db, cacheTtlMs: 0 })
    const domain = values.domain ?? `analytics-${Date.now()}.myshopify.com`
    const existing = await shops.byDomain(domain)
    const created = existing ? null : await shops.create({ domain, plan: values.plan })
    const shop = existing ?? created!.shop
    const result = await seedAnalytics(storage.db, shop.id, { events, now: Date.now(), seed: Number(values.seed) })
    process.stdout.write(
      `${JSON.stringify({ shop: { id: shop.id, domain: shop.domain }, apiKey: created?.apiKey ?? null, backend: storage.backend, ...result })}\n`,
    )
  } finally {
    await storage.destroy()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`seed:analytics: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
