/**
 * The process entry for `wishlist serve`: config, storage, migrations, buildApp(),
 * listen, graceful shutdown (SIGTERM drains in-flight requests, then exits 0).
 */
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { dirname } from 'node:path'
import { Redis } from 'ioredis'
import { buildApp, configuredPlatforms } from './app.js'
import type { Config } from './config.js'
import { openStorage, type Storage } from './db/connect.js'
import { migrateToLatest } from './db/migrate.js'
import { type HeldLock, holdAsServer } from './db/server-lock.js'
import { drainKeepAliveGracefully } from './lib/keep-alive-drain.js'
import { looseFolderWarning } from './lib/private-files.js'
import { createFactsApplier, type FactsApplier } from './modules/analytics/facts-applier.js'
import { createWebhookWorker, type WebhookWorker } from './modules/webhooks/webhook-worker.js'
import { makeScheduledNotifications, optOutUrl } from './modules/notifications/notify.js'
import { createNotificationWorker, type NotificationWorker } from './modules/notifications/notification-worker.js'

export interface RunningServer {
  app: FastifyInstance
  storage: Storage
  /** The embedded webhook delivery worker (absent with WEBHOOK_WORKER=off). */
  worker: WebhookWorker | undefined
  /** The embedded notification delivery worker (absent with NOTIFICATION_WORKER=off). */
  notificationWorker: NotificationWorker | undefined
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
  // PostgreSQL: the change feed joins before the first request (db/connect.ts). The
  // instances already serving then check versions on every cached read, so none serves a
  // page from before this one's writes; and this one, counting them, does the same. Every
  // serving instance joins, its page cache on or off: what matters is that it writes.
  await storage.join?.()
  // A data folder made by an older version (or by hand) is left as it is, with a warning.
  const loose =
    config.database.kind === 'sqlite' && config.database.file !== ':memory:' ? looseFolderWarning(dirname(config.database.file)) : undefined
  if (loose) app.log.warn({ folder: loose.folder, mode: loose.mode }, loose.message)
  const worker = config.webhooks.workerEnabled
    ? createWebhookWorker({
        storage,
        webhooks: config.webhooks,
        sender: app.services.webhookSender,
        platforms: configuredPlatforms(config),
        log: app.log.child({ component: 'webhook-worker' }),
      })
    : undefined
  const notificationWorker = config.notifications.workerEnabled
    ? createNotificationWorker({
        db: storage.db,
        openKlaviyoKey: app.services.channels.openKlaviyoKey,
        klaviyoBaseUrl: config.notifications.klaviyoBaseUrl,
        flow: app.platforms.map((p) => p.notificationChannel?.()).find((c) => c !== undefined),
        optOutUrl: (shopId, owner) => optOutUrl(config, shopId, owner),
        makeScheduled: makeScheduledNotifications,
        pollIntervalMs: config.webhooks.pollIntervalMs,
        retentionDays: config.notifications.retentionDays,
        log: app.log.child({ component: 'notification-worker' }),
      })
    : undefined
  const factsApplier = createFactsApplier({
    db: storage.db,
    intervalMs: config.analyticsApplyIntervalMs,
    log: app.log.child({ component: 'analytics-applier' }),
  })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    // The connections and requests that have reached the server are taken in before it stops listening.
    await drain.takeInArrived()
    // The attempts in flight finish (the worker shares the app's HTTP sender); events
    // that requests still enqueue stay in the outbox for the next start.
    await worker?.stop()
    await notificationWorker?.stop()
    await factsApplier.stop()
    await app.close()
    redis?.disconnect()
    await storage.destroy()
    lock?.release()
  }
  const drain = drainKeepAliveGracefully(app.server)
  const address = await app.listen({ port: config.port, host: config.host })
  worker?.start()
  notificationWorker?.start()
  factsApplier.start()
  return { app, storage, worker, notificationWorker, factsApplier, address, close }
}

/** The process's parent when this module loaded (before storage opens or migrations run). */
const PARENT_AT_START = process.ppid

/**
 * `npx wishlist serve` (like an npm script that does not `exec` the command) runs the server
 * through `sh -c`, and npm passes SIGTERM to that shell only; dash (Debian's and Ubuntu's `sh`)
 * dies of it without passing it on, npm exits, and the server was left running with nobody to
 * stop it. A server started by npm (`npm_lifecycle_event` is set) whose parent is still there
 * once it listens therefore stops as on SIGTERM when that parent goes away (checked every
 * 100 ms). One whose parent had gone already (`wishlist serve &` inside a script) keeps running.
 */
function onNpmParentGone(stop: () => void): () => void {
  if (process.env.npm_lifecycle_event === undefined || process.ppid !== PARENT_AT_START) return () => {}
  const timer = setInterval(() => {
    if (process.ppid === PARENT_AT_START) return
    clearInterval(timer)
    stop()
  }, 100)
  timer.unref()
  return () => clearInterval(timer)
}

/** A stop signal this soon after the first is a copy of the same stop, not a second one. */
const SAME_STOP_MS = 500

/** Runs until SIGTERM/SIGINT; `onListening` prints whatever the caller wants once the port accepts. */
export async function runServer(config: Config, onListening?: (address: string) => void, opts: ServeOptions = {}): Promise<void> {
  const server = await startServer(config, opts)
  let stopWatching = () => {}
  let stopping: { signal: NodeJS.Signals | undefined; at: number } | undefined
  // SIGTERM and SIGINT are handled below; other signals and uncaught errors by close-with-grace.
  const grace = closeWithGrace({ delay: 25_000, skip: ['SIGTERM', 'SIGINT'] }, async ({ err, signal }) => {
    stopping ??= { signal, at: performance.now() }
    stopWatching()
    const stopSignal = signal ?? stopping.signal
    if (err) server.app.log.error({ err }, 'shutting down after an error')
    else if (stopSignal) server.app.log.info({ signal: stopSignal }, 'shutting down: draining in-flight requests')
    else server.app.log.info('shutting down: the npm or npx that started the server has exited; draining in-flight requests')
    await server.close()
  })
  const stop = (signal?: NodeJS.Signals) => {
    if (stopping === undefined) {
      stopping = { signal, at: performance.now() }
      grace.close()
      return
    }
    // Under `npm start` a terminal's Ctrl-C, or a SIGTERM sent to the process group (systemd,
    // `kill -- -PGID`), reaches the server twice: directly, and as npm passes it on. A copy
    // this close to the first is ignored; a later signal ends the drain at once (exit code 1).
    if (signal === undefined || performance.now() - stopping.at < SAME_STOP_MS) return
    server.app.log.error({ signal }, 'a second signal while shutting down: exiting now')
    process.exit(1)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  stopWatching = onNpmParentGone(() => stop())
  onListening?.(server.address)
}
