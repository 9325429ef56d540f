/**
 * The delivery worker. Each pass fans outbox rows out into one delivery per endpoint that was
 * subscribed when the event was written (deleting the rows; when the outbox is empty it
 * writes queued product signals to it), then claims due deliveries under a lease (PostgreSQL:
 * SKIP LOCKED), sends them concurrently and settles each; a dead process's lease expires.
 * In-flight slots are shared fairly across shops (`shareOf`, lib/fair-share.ts). Hourly it purges settled
 * deliveries past WEBHOOK_DELIVERY_RETENTION_DAYS and what the configured platforms keep for
 * a while (`purgePlatformRecords`: Shopify's webhook receipts); `stop()` drains the attempts in flight.
 */
import { randomBytes } from 'node:crypto'
import type { Config } from '../../config.js'
import type { Storage } from '../../db/connect.js'
import { bump, shopHasRoom, shopsAtShare } from '../../lib/fair-share.js'
import { pollLoop } from '../../lib/poll-loop.js'
import { isoMillis, now } from '../../lib/time.js'
import { hasQueuedSignals, writeQueuedSignals } from '../events/product-fan-out.js'
import type { Platform } from '../../platforms/platform.js'
import { attemptDelivery } from './delivery.js'
import type { ResolveHost } from './ssrf-guard.js'
import { createWebhookSender, type WebhookSender } from './webhook-sender.js'
import { type DeliveryRow, type EndpointRow, newDelivery, webhooksRepo } from './webhooks.repo.js'

export interface WorkerLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/** A log that drops everything: the background workers' default. */
export const silent: WorkerLog = { info() {}, warn() {}, error() {} }

export interface WebhookWorkerOptions {
  storage: Storage
  webhooks: Config['webhooks']
  /** Shared sender; by default the worker makes (and closes) its own. */
  sender?: WebhookSender
  resolve?: ResolveHost
  log?: WorkerLog
  workerId?: string
  /** How long a claim lasts; must exceed the send timeout. Default: WEBHOOK_LEASE_MS (timeout + 30 s). */
  leaseMs?: number
  /** Deliveries claimed per pass. */
  batchSize?: number
  /**
   * Attempts in flight at once (default 2 × batchSize), shared across shops (`shareOf`, lib/fair-share.ts); a shop
   * with none in flight may still start one when all are taken, up to twice as many in all.
   */
  maxInFlight?: number
  /** Attempts in flight per endpoint (default 5), so a hanging receiver cannot take every slot. */
  maxInFlightPerEndpoint?: number
  /** The configured platforms (app.ts, `configuredPlatforms`), whose housekeeping the worker runs hourly. */
  platforms?: readonly Platform[]
}

export interface PassResult {
  dispatched: number
  attempted: number
}

export interface WebhookWorker {
  readonly id: string
  /** One pass: fan out the outbox, then claim and send one batch of due deliveries. */
  runOnce(): Promise<PassResult>
  /** Deletes settled deliveries (with their attempts) past the retention (0 days: none), at most 40 × 250 per run. */
  purgeSettled(now?: number): Promise<{ purged: number; more: boolean }>
  /**
   * Runs the configured platforms' housekeeping at `now` (Shopify: deletes its expired webhook
   * receipts), each in at most 40 statements of 250; returns how many rows went, and whether
   * some are left for the next run.
   */
  purgePlatformRecords(now?: number): Promise<{ purged: number; more: boolean }>
  start(): void
  /** Stops polling and waits for the attempts in flight. */
  stop(): Promise<void>
}

const DAY_MS = 86_400_000
const PURGE_INTERVAL_MS = 3_600_000
// Short transactions: on SQLite one holds the only connection while it deletes.
const PURGE_BATCH = 250
const PURGE_BATCHES = 40

/** Queued product-signal batches written to the outbox per pass, so a large fan-out does not hold back the sending. */
const QUEUED_BATCHES_PER_PASS = 20

/** The largest delivery body: `data.customerIds` is cut to fit, with `truncated: true`. */
export const MAX_DELIVERY_BODY_BYTES = 64 * 1024

/** The HTTP body of every delivery (docs/api.md, "Webhooks": the payload shape), at most MAX_DELIVERY_BODY_BYTES. */
export function deliveryBody(event: string, shopDomain: string, occurredAt: number, data: unknown): string {
  const body = JSON.stringify({ event, shopDomain, occurredAt: isoMillis(occurredAt), data })
  const excess = Buffer.byteLength(body) - MAX_DELIVERY_BODY_BYTES
  const ids = (data as { customerIds?: unknown } | null)?.customerIds
  if (excess <= 0 || !Array.isArray(ids)) return body
  // Drop ids from the end until their bytes (each with its comma) cover the excess, plus
  // room for `"truncated":true` where the data had no such field.
  let kept = ids.length
  for (let freed = 0; kept > 0 && freed < excess + 20;) freed += Buffer.byteLength(JSON.stringify(ids[--kept])) + 1
  return JSON.stringify({
    event,
    shopDomain,
    occurredAt: isoMillis(occurredAt),
    data: { ...(data as object), customerIds: ids.slice(0, kept), truncated: true },
  })
}

export function subscribes(endpoint: Pick<EndpointRow, 'events'>, event: string): boolean {
  return (JSON.parse(endpoint.events) as string[]).includes(event)
}

export function createWebhookWorker(opts: WebhookWorkerOptions): WebhookWorker {
  const { db } = opts.storage
  const id = opts.workerId ?? `wrk_${randomBytes(6).toString('base64url')}`
  const ownSender = opts.sender === undefined
  const sender =
    opts.sender ??
    createWebhookSender({
      timeoutMs: opts.webhooks.timeoutMs,
      allowPrivateTargets: opts.webhooks.allowPrivateTargets,
      ...(opts.resolve ? { resolve: opts.resolve } : {}),
    })
  const leaseMs = opts.leaseMs ?? opts.webhooks.leaseMs
  const batchSize = opts.batchSize ?? 25
  const maxInFlight = Math.max(opts.maxInFlight ?? 2 * batchSize, 1)
  const perEndpoint = Math.max(opts.maxInFlightPerEndpoint ?? 5, 1)
  const log = opts.log ?? silent
  const attemptDeps = { db, sender, retryScheduleSec: opts.webhooks.retryScheduleSec, workerId: id }

  async function fanOut(): Promise<number> {
    if (!(await webhooksRepo.hasUndispatched(db))) return 0
    return db.transaction().execute(async (trx) => {
      const rows = await webhooksRepo.takeOutbox(trx, 200)
      if (rows.length === 0) return 0
      const shopIds = [...new Set(rows.map((r) => r.shop_id))]
      const domains = new Map((await webhooksRepo.shopDomains(trx, shopIds)).map((s) => [s.id, s.domain]))
      const endpoints = await webhooksRepo.activeEndpoints(trx, shopIds)
      const at = now()
      const deliveries: DeliveryRow[] = []
      for (const row of rows) {
        const domain = domains.get(row.shop_id)
        if (domain === undefined) continue
        // Built for the first endpoint that takes the event. The outbox holds only events
        // some endpoint took when they were written (outbox.ts); one deleted or disabled
        // since then leaves an event that is only deleted.
        let body: string | undefined
        for (const ep of endpoints) {
          // Endpoints receive the events that happened while they were subscribed.
          if (ep.shop_id !== row.shop_id || ep.created_at > row.created_at || !subscribes(ep, row.event)) continue
          body ??= deliveryBody(row.event, domain, row.occurred_at, JSON.parse(row.payload))
          deliveries.push(
            newDelivery({ shop_id: row.shop_id, webhook_id: ep.id, message_id: row.id, event: row.event, body, next_attempt_at: at }, at),
          )
        }
      }
      await webhooksRepo.insertDeliveries(trx, deliveries)
      await webhooksRepo.deleteDispatched(trx, rows)
      return rows.length
    })
  }

  /**
   * Fans out the outbox, writing queued product signals to it as it empties; returns the outbox rows fanned out, and whether queued signals
   * are left.
   */
  async function dispatch(): Promise<{ dispatched: number; more: boolean }> {
    let dispatched = 0
    for (let batches = 0; ;) {
      const n = await fanOut()
      dispatched += n
      if (n > 0) continue
      if (!(await hasQueuedSignals(db))) return { dispatched, more: false }
      if (batches++ === QUEUED_BATCHES_PER_PASS) return { dispatched, more: true }
      await writeQueuedSignals(db)
    }
  }

  // Attempts in flight, per endpoint and per shop: the loop never waits for a whole batch,
  // so one receiver that hangs until the timeout does not hold back the others.
  const inFlight = new Set<Promise<void>>()
  const perWebhook = new Map<string, number>()
  const perShop = new Map<string, number>()

  async function attempt(d: DeliveryRow, endpoint: EndpointRow | undefined, claimToken: string): Promise<void> {
    if (endpoint === undefined) return // deleted meanwhile; its deliveries went with it
    try {
      const outcome = await attemptDelivery(attemptDeps, d, endpoint, claimToken)
      if (!outcome.result.ok) {
        const { statusCode, error, refusal } = outcome.result
        log.warn(
          { deliveryId: d.id, webhookId: d.webhook_id, statusCode, error, ...(refusal ? { refusal } : {}), status: outcome.status },
          'webhook attempt failed',
        )
      }
    } catch (err) {
      // The lease expires and the delivery is tried again.
      log.error({ err, deliveryId: d.id }, 'webhook attempt could not be recorded')
    }
  }

  /**
   * Claims up to `limit` due deliveries and starts their attempts; returns them, tracked.
   * When every slot is taken, only shops with nothing in flight are claimed, one attempt each.
   */
  async function claimAndStart(limit: number): Promise<Promise<void>[]> {
    limit = Math.min(limit, 2 * maxInFlight - inFlight.size)
    if (limit <= 0) return []
    const claimToken = `${id}:${randomBytes(6).toString('base64url')}`
    const skipWebhooks = [...perWebhook].filter(([, n]) => n >= perEndpoint).map(([w]) => w)
    const skipShops = shopsAtShare(perShop, maxInFlight, inFlight.size)
    const due = { at: now(), limit, skipWebhooks, skipShops }
    if (!(await webhooksRepo.hasDue(db, due))) return []
    const candidates = await webhooksRepo.claimDue(db, { ...due, leaseMs, claimToken })
    if (candidates.length === 0) return []
    // One claim may hold more of an endpoint's or a shop's deliveries than may be in flight:
    // keep what fits and hand the rest back at once.
    const claimed: DeliveryRow[] = []
    const extra: DeliveryRow[] = []
    const webhooks = new Map(perWebhook)
    const shops = new Map(perShop)
    for (const d of candidates) {
      const room = shopHasRoom(perShop, d.shop_id, shops.get(d.shop_id) ?? 0, inFlight.size + claimed.length, maxInFlight)
      if (!room || (webhooks.get(d.webhook_id) ?? 0) >= perEndpoint) extra.push(d)
      else {
        bump(webhooks, d.webhook_id, 1)
        bump(shops, d.shop_id, 1)
        claimed.push(d)
      }
    }
    await webhooksRepo.release(db, extra, claimToken)
    if (claimed.length === 0) return []
    const endpoints = await webhooksRepo.endpointsFor(db, claimed)
    const byKey = new Map(endpoints.map((e) => [`${e.shop_id} ${e.id}`, e]))
    return claimed.map((d) => {
      bump(perWebhook, d.webhook_id, 1)
      bump(perShop, d.shop_id, 1)
      const p: Promise<void> = attempt(d, byKey.get(`${d.shop_id} ${d.webhook_id}`), claimToken).finally(() => {
        bump(perWebhook, d.webhook_id, -1)
        bump(perShop, d.shop_id, -1)
        inFlight.delete(p)
        poller.wake() // a slot is free: claim more now rather than after the poll interval
      })
      inFlight.add(p)
      return p
    })
  }

  /** Deletes in at most PURGE_BATCHES statements of PURGE_BATCH rows; `more` when some are left for the next run. */
  async function purgeBatches(
    anyOld: () => Promise<boolean>,
    purgeBatch: (limit: number) => Promise<number>,
  ): Promise<{ purged: number; more: boolean }> {
    // A read first, so a worker with nothing to delete writes nothing (as its idle passes).
    if (!(await anyOld())) return { purged: 0, more: false }
    let purged = 0
    for (let i = 0; i < PURGE_BATCHES; i++) {
      const n = await purgeBatch(PURGE_BATCH)
      purged += n
      if (n < PURGE_BATCH) return { purged, more: false }
    }
    return { purged, more: true }
  }

  async function purgeSettled(at = now()): Promise<{ purged: number; more: boolean }> {
    const { retentionDays } = opts.webhooks
    if (retentionDays === 0) return { purged: 0, more: false }
    const cutoff = at - retentionDays * DAY_MS
    return purgeBatches(
      () => webhooksRepo.hasSettledBefore(db, cutoff),
      (limit) => db.transaction().execute((trx) => webhooksRepo.purgeSettled(trx, cutoff, limit)),
    )
  }

  async function purgePlatformRecords(at = now()): Promise<{ purged: number; more: boolean }> {
    const total = { purged: 0, more: false }
    for (const platform of opts.platforms ?? []) {
      const chores = platform.housekeeping
      if (chores === undefined) continue
      const done = await purgeBatches(
        () => chores.due(db, at),
        (limit) => chores.purge(db, at, limit),
      )
      if (done.purged > 0) log.info(done, `deleted ${chores.what} past their retention`)
      total.purged += done.purged
      total.more ||= done.more
    }
    return total
  }

  let nextPurgeAt = 0
  let senderClosed = false

  async function runOnce(): Promise<PassResult> {
    let dispatched = 0
    for (let pass = await dispatch(); ; pass = await dispatch()) {
      dispatched += pass.dispatched
      if (!pass.more) break
    }
    const started = await claimAndStart(batchSize)
    await Promise.all(started)
    return { dispatched, attempted: started.length }
  }

  const poller = pollLoop({
    async pass() {
      const { dispatched, more } = await dispatch()
      const free = maxInFlight - inFlight.size
      const started = (await claimAndStart(free > 0 ? Math.min(batchSize, free) : batchSize)).length
      // Claim again at once while there is work and room; otherwise wait for the poll
      // interval or for an attempt to finish.
      const busy = dispatched > 0 || more || (started > 0 && inFlight.size < maxInFlight)
      if (now() >= nextPurgeAt) {
        nextPurgeAt = now() + PURGE_INTERVAL_MS
        const settled = await purgeSettled()
        const platformRecords = await purgePlatformRecords()
        // A backlog (a first start after an upgrade) goes a bounded part per pass.
        if (settled.more || platformRecords.more) nextPurgeAt = 0
        if (settled.purged > 0) log.info(settled, 'deleted settled webhook deliveries past their retention')
      }
      return busy
    },
    waitMs: () => opts.webhooks.pollIntervalMs,
    onError: (err) => log.error({ err }, 'webhook worker pass failed'),
  })

  return {
    id,
    runOnce,
    purgeSettled,
    purgePlatformRecords,
    start: poller.start,
    async stop() {
      await poller.stop()
      await Promise.all([...inFlight])
      // A second stop() (a test's, then its app's close) finds the sender closed already.
      if (ownSender && !senderClosed) {
        senderClosed = true
        await sender.close()
      }
    },
  }
}
