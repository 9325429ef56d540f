/**
 * Webhook delivery throughput: deliveries per second from the outbox to a local receiver
 * (node:http on 127.0.0.1), signing included. Bounded: N events, one endpoint, one worker.
 * SQLite in a temporary file by default; BENCH_DATABASE_URL=postgres://… for PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadConfig } from '../src/config.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { enqueueWebhookEvents } from '../src/modules/events/outbox.js'
import { createShopsService } from '../src/modules/shops/shops.service.js'
import { createWebhookSender } from '../src/modules/webhooks/webhook-sender.js'
import { createWebhookWorker } from '../src/modules/webhooks/webhook-worker.js'
import { createWebhooksService } from '../src/modules/webhooks/webhooks.service.js'

export interface WebhookDeliveryFigure {
  backend: 'sqlite' | 'postgres'
  events: number
  seconds: number
  deliveriesPerSec: number
}

export async function benchWebhookDelivery(
  events = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000),
  log: (line: string) => void = console.log,
): Promise<WebhookDeliveryFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'))
  let received = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received++
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  const config = loadConfig({
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(dir, 'bench.db')}`,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '10',
  })
  const storage = openStorage(config.database)
  try {
    await migrateToLatest(storage)
    const shops = createShopsService({ db: storage.db, cacheTtlMs: 0 })
    const { shop } = await shops.create({ domain: `bench-${Date.now()}.myshopify.com`, plan: 'scale' })
    const sender = createWebhookSender({ timeoutMs: 10_000, allowPrivateTargets: true })
    const webhooks = createWebhooksService({
      storage,
      policy: { allowInsecure: true, allowPrivateTargets: true },
      sender,
      retryScheduleSec: [5],
    })
    const ctx = { shop, actor: { kind: 'admin' as const, keyId: 'bench' }, requestId: 'bench' }
    await webhooks.create(ctx, { url: `http://127.0.0.1:${port}/hook`, events: ['wishlist.item.added'] })
    for (let i = 0; i < events; i += 500) {
      const n = Math.min(500, events - i)
      await storage.db.transaction().execute((trx) =>
        enqueueWebhookEvents(
          trx,
          shop.id,
          Array.from({ length: n }, (_, k) => ({
            event: 'wishlist.item.added' as const,
            data: { customerId: String(i + k), productId: '1', variantId: '2' },
          })),
        ),
      )
    }
    const worker = createWebhookWorker({ storage, webhooks: config.webhooks, sender, batchSize: 50 })
    const started = performance.now()
    worker.start()
    while (received < events) await new Promise((r) => setTimeout(r, 20))
    const seconds = (performance.now() - started) / 1000
    await worker.stop()
    await sender.close()
    log(
      `webhook delivery (${storage.backend}): ${events} deliveries in ${seconds.toFixed(2)} s = ${Math.round(events / seconds)} deliveries/s (one worker, batches of 50, loopback receiver)`,
    )
    return { backend: storage.backend, events, seconds, deliveriesPerSec: events / seconds }
  } finally {
    await storage.destroy()
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

// `node --import tsx bench/webhook-delivery.ts [--json]`: the `npm run bench` harness runs it
// as a child pinned to the server's core and reads the one JSON line.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const json = process.argv.includes('--json')
  const figure = await benchWebhookDelivery(undefined, json ? () => {} : console.log)
  if (json) process.stdout.write(`${JSON.stringify(figure)}\n`)
}
