/**
 * The process entry for `wishlist serve`: config, storage, migrations, buildApp(),
 * listen, graceful shutdown (SIGTERM drains in-flight requests, then exits 0).
 */
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { openStorage, type Storage } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { type HeldLock, holdAsServer } from './db/server-lock.js'
import { drainKeepAliveGracefully } from './lib/keep-alive-drain.js'
import { createFactsApplier, type FactsApplier } from './modules/analytics/facts-applier.js'
import { createWebhookWorker, type WebhookWorker } from './modules/webhooks/webhook-worker.js'

export interface RunningServer {
  app: FastifyInstance
  storage: Storage
  /** The embedded webhook delivery worker (absent with WEBHOOK_WORKER=off). */
  worker: WebhookWorker | undefined
  /** Moves pending analytics facts into the rollups in the background. */
  factsApplier: FactsApplier
  address: string
  close(): Promise<void>
}

export async function connectRedis(url: string): Promise<Redis> {
  // Fail fast while Redis is away (the rate limiter then lets requests through) instead
  // of queueing commands behind a reconnect.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true })
  redis.on('error', () => {})
  await redis.connect()
  return redis
}

export interface ServeOptions {
  /** `serve --demo`: the demo storefront and its login (never on otherwise). */
  demo?: boolean
}

/**
 * A server's hold on its SQLite file (db/server-lock.ts): `wishlist restore` and `wishlist
 * move` refuse while it is held, and no server starts while one of them runs.
 */
function holdDatabase(config: Config): HeldLock | undefined {
  const target = config.database
  return target.kind === 'sqlite' && target.file !== ':memory:' ? holdAsServer(target.file) : undefined
}

export async function startServer(config: Config, opts: ServeOptions = {}): Promise<RunningServer> {
  const lock = holdDatabase(config)
  const storage = openStorage(config.database)
  try {
    await migrateToLatest(storage)
  } catch (err) {
    await storage.destroy()
    lock?.release()
    throw err
  }
  const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined
  const app = await buildApp({ config, storage, redis, demoPages: opts.demo === true })
  const worker = config.webhooks.workerEnabled
    ? createWebhookWorker({ storage, webhooks: config.webhooks, sender: app.services.webhookSender, log: app.log.child({ component: 'webhook-worker' }) })
    : undefined
  const factsApplier = createFactsApplier({ db: storage.db, intervalMs: config.analyticsApplyIntervalMs, log: app.log.child({ component: 'analytics-applier' }) })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    // The attempts in flight finish (the worker shares the app's HTTP sender); events
    // that requests still enqueue stay in the outbox for the next start.
    await worker?.stop()
    await factsApplier.stop()
    await app.close()
    redis?.disconnect()
    await storage.destroy()
    lock?.release()
  }
  drainKeepAliveGracefully(app.server)
  const address = await app.listen({ port: config.port, host: config.host })
  worker?.start()
  factsApplier.start()
  return { app, storage, worker, factsApplier, address, close }
}

/** Runs until SIGTERM/SIGINT; `onListening` prints whatever the caller wants once the port accepts. */
export async function runServer(config: Config, onListening?: (address: string) => void, opts: ServeOptions = {}): Promise<void> {
  const server = await startServer(config, opts)
  closeWithGrace({ delay: 25_000 }, async ({ err, signal }) => {
    if (err) server.app.log.error({ err }, 'shutting down after an error')
    else server.app.log.info({ signal }, 'shutting down: draining in-flight requests')
    await server.close()
  })
  onListening?.(server.address)
}
