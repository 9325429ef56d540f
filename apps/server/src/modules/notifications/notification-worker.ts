/**
 * The notification delivery worker (docs/notifications.md, "Delivery"). Each pass makes the
 * notifications of wishlist adds due (reminders, items added: `makeScheduled`, bounded),
 * sends the profile deletions of erased shoppers, then claims due `pending` deliveries under
 * a lease (PostgreSQL: SKIP LOCKED; a dead process's lease expires and the delivery is
 * claimed again), builds each message from its notification, the owner's contact e-mail and
 * the signed opt-out link, and sends it through the shop's channel:
 *
 * - the owner opted out since, or has no contact any more: `skipped`, nothing sent;
 * - sent: `sent`; Flow has no enabled workflow for the trigger: `skipped`;
 * - the channel refused the message itself: `failed`;
 * - Klaviyo refused the key (401/403): the channel is recorded `invalid` and the shop's
 *   Klaviyo deliveries stay pending, claimed again once the merchant replaces the key;
 * - anything else (429, 5xx, no answer, Shopify throttling): pending again, at the
 *   channel's Retry-After or after a capped exponential backoff; never dropped.
 *
 * Klaviyo's requests go through a limiter per key (send-limiter.ts) that keeps them within
 * Klaviyo's published limits; a key whose Retry-After or outage closed it is left alone
 * until then, so its backlog costs nothing. The limiter counts one process's requests, so a
 * worker sends on a key only while it holds the key's lease in the database
 * (`notification_send_leases`, `sendLeaseTimes`): one worker of all the instances at a
 * time, whose limiter then sees every request on the key. A shop whose Flow calls Shopify
 * throttles waits for the time Shopify named. In-flight slots are shared fairly across
 * shops (lib/fair-share.ts, as the webhook worker's), and what a claim took beyond a shop's share or
 * its key's room (or for a key another worker holds) is handed back at once. Hourly it purges
 * notifications settled longer than NOTIFICATION_RETENTION_DAYS ago; `stop()` drains the
 * attempts in flight, then hands its keys' leases over.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Db } from '../../db/types.js'
import { bump, shopHasRoom, shopsAtShare } from '../../lib/fair-share.js'
import { pollLoop } from '../../lib/poll-loop.js'
import type { OwnerType } from '../../db/schema.js'
import { now } from '../../lib/time.js'
import type { NotificationChannel, NotificationMessage, NotificationSignal, SendResult } from './channel.js'
import { isFlowSkip } from './flow.js'
import {
  createKlaviyoChannel,
  KLAVIYO_CREATE_EVENT_BURST_PER_SECOND,
  KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE,
  KLAVIYO_TIMEOUT_MS,
  requestProfileDeletion,
} from './klaviyo.js'
import {
  type ErasureRow,
  type NotificationDeliveryRow,
  notificationDeliveriesRepo as repo,
  type NotificationRow,
  type ShopChannel,
} from './notification-deliveries.repo.js'
import { createSendLimiter, type SendLimiter, type Window } from './send-limiter.js'

/** What the worker logs through (the app's logger, a child of it). */
export interface WorkerLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

const silent: WorkerLog = { info() {}, warn() {}, error() {} }

/** Klaviyo's Create Event limits per key, as the limiter applies them. */
export const KLAVIYO_EVENT_WINDOWS: readonly Window[] = [
  { limit: KLAVIYO_CREATE_EVENT_BURST_PER_SECOND, ms: 1_000 },
  { limit: KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE, ms: 60_000 },
]

/**
 * Request Profile Deletion's limits ("S": 3 per second, 60 per minute, Klaviyo's API
 * reference for the endpoint), for the erasures; Get Profiles (a lookup by customer id) is
 * counted with them, well within its own.
 */
export const KLAVIYO_DELETION_WINDOWS: readonly Window[] = [
  { limit: 3, ms: 1_000 },
  { limit: 60, ms: 60_000 },
]

/** A claim lasts this long: more than one Klaviyo call may take (an erasure by customer id makes a few). */
export const NOTIFICATION_LEASE_MS = 3 * KLAVIYO_TIMEOUT_MS + 30_000

/**
 * How far apart the instances' clocks may be: a lease's end is read by each instance's own
 * clock, so they are assumed to agree within a second or two (NTP), and the leases allow this.
 */
export const NOTIFICATION_CLOCK_SKEW_MS = 2_000

/**
 * Send leases. A worker starts a request on a Klaviyo key (an event, or a step of a profile
 * deletion: a lookup by customer id and the deletion, two calls) only while it holds the key's
 * lease with at least `tailMs` of it left: the longest window of the key's limiters, the time
 * two calls may take, and the clocks' allowance. So every request of a holder that crashed,
 * or lost the database and cannot renew, has been answered (or abandoned) and has left every
 * window of Klaviyo's before the lease ends and another instance takes the key; the newcomer's
 * limiter starts empty and is right. A lease lasts `leaseMs` (twice the tail) and is renewed
 * once half of the time in which it may send is used, on the passes that have work for the
 * key: a crash costs the key at most `leaseMs` without a sender. A worker that stops brings its
 * leases forward to when its last answers leave every window, so another takes over then.
 */
export function sendLeaseTimes(windows: readonly Window[], requestTimeoutMs: number, clockSkewMs: number) {
  const tailMs = Math.max(0, ...windows.map((w) => w.ms)) + 2 * requestTimeoutMs + clockSkewMs
  return { tailMs, leaseMs: 2 * tailMs }
}

/** How often at most a key another worker holds is looked at again (sooner than its lease's end: it may hand it over). */
const LEASE_RECHECK_MS = 5_000

/** The retry after the n-th failed attempt without a Retry-After: 10 s, 20 s, 40 s, … at most an hour. */
export const NOTIFICATION_RETRY_BASE_MS = 10_000
export const NOTIFICATION_RETRY_CAP_MS = 3_600_000

const DAY_MS = 86_400_000
const PURGE_INTERVAL_MS = 3_600_000
const PURGE_BATCH = 250
const PURGE_BATCHES = 40

/** The reasons of a delivery skipped before any channel was asked. */
export const SKIP_OPTED_OUT = 'opted_out: the shopper opted out of notifications'
export const SKIP_NO_CONTACT = 'no_contact: the shop holds no e-mail of the shopper any more'
export const SKIP_GUEST_FLOW = "guest: Shopify Flow's triggers take a Shopify customer"
export const SKIP_NOT_CONNECTED = 'not_connected: the shop disconnected the channel'

export interface NotificationWorkerOptions {
  db: Db
  /** Opens a shop's sealed Klaviyo key (channels.service.ts). */
  openKlaviyoKey: (shopId: string, sealed: string) => string
  /** KLAVIYO_BASE_URL. */
  klaviyoBaseUrl: string
  /** The Flow channel (Shopify app mode); without it Flow deliveries wait. */
  flow?: NotificationChannel | undefined
  /** The signed opt-out link every message carries. */
  optOutUrl: (shopId: string, owner: { type: OwnerType; id: string }) => string
  /** Makes the notifications of wishlist adds due (item added, reminders), at most `limit`; run each pass. */
  makeScheduled?: ((db: Db, at: number, limit: number) => Promise<{ more: boolean }>) | undefined
  pollIntervalMs: number
  /** Days settled notifications are kept (0: forever). */
  retentionDays: number
  leaseMs?: number
  /** Deliveries claimed per pass (default 25). */
  batchSize?: number
  /** Attempts in flight at once (default 2 × batchSize), shared across shops. */
  maxInFlight?: number
  /** The backoff without a Retry-After (default NOTIFICATION_RETRY_BASE_MS, _CAP_MS). */
  retryBaseMs?: number
  retryCapMs?: number
  /** Klaviyo's Create Event windows per key (default KLAVIYO_EVENT_WINDOWS). */
  eventWindows?: readonly Window[]
  /** Request Profile Deletion's windows per key (default KLAVIYO_DELETION_WINDOWS). */
  deletionWindows?: readonly Window[]
  /** How long one Klaviyo call may take (default KLAVIYO_TIMEOUT_MS); with the windows, the length of the send leases. */
  requestTimeoutMs?: number
  /** How far apart the instances' clocks may be (default NOTIFICATION_CLOCK_SKEW_MS). */
  clockSkewMs?: number
  /** Scheduled notifications made per pass (default 500). */
  scheduledPerPass?: number
  log?: WorkerLog
  /** Unique per worker (default: random): the send leases tell the holder of a key by it. */
  workerId?: string
}

export interface NotificationPassResult {
  attempted: number
  erasures: number
}

export interface NotificationWorker {
  readonly id: string
  /** One pass: scheduled notifications, erasures, then one batch of due deliveries, waited for. */
  runOnce(): Promise<NotificationPassResult>
  /** Deletes notifications settled before the retention, with their deliveries; at most 40 × 250 per run. */
  purgeSettled(at?: number): Promise<{ purged: number; more: boolean }>
  start(): void
  /** Stops polling, waits for the attempts in flight, then hands its send leases over (see `sendLeaseTimes`). */
  stop(): Promise<void>
}

/** The wait after the n-th failed attempt (n ≥ 1): doubling from `base`, at most `cap`. */
export const backoffMs = (failures: number, base: number, cap: number): number =>
  Math.min(cap, base * 2 ** Math.min(30, Math.max(0, failures - 1)))

/** Klaviyo's 401 (the key) or 403 (its scopes): the key, not the message. */
const keyRefused = (result: SendResult): boolean => !result.ok && result.permanent && /^klaviyo answered HTTP 40[13]\b/.test(result.reason)

interface KlaviyoKey {
  sealed: string
  /** The limiter's name of the key: a hash, never the key. */
  limiterKey: string
  channel: NotificationChannel
  privateKey: string
}

/** The message of a notification: its payload's product fields over the row's ids. */
export function messageOf(n: NotificationRow, email: string, optOutUrl: string): NotificationMessage {
  const raw = JSON.parse(n.payload) as Record<string, unknown>
  const p = (typeof raw.product === 'object' && raw.product !== null ? raw.product : raw) as Record<string, unknown>
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null)
  const count = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)
  const occurredAt = typeof raw.occurredAt === 'number' ? raw.occurredAt : Number(n.created_at)
  return {
    id: n.id,
    shopId: n.shop_id,
    signal: n.signal as NotificationSignal,
    occurredAt,
    shopper: { customerId: n.owner_id, email },
    product: {
      productId: n.product_id,
      variantId: n.variant_id ?? text(p.variantId),
      title: text(p.title),
      url: text(p.url),
      imageUrl: text(p.imageUrl),
      price: text(p.price),
      previousPrice: text(p.previousPrice),
      currency: text(p.currency),
      inventoryQuantity: count(p.inventoryQuantity),
    },
    optOutUrl,
  }
}

const ownerKey = (o: { shop_id: string; owner_type: string; owner_id: string }) => `${o.shop_id} ${o.owner_type} ${o.owner_id}`

export function createNotificationWorker(opts: NotificationWorkerOptions): NotificationWorker {
  const { db } = opts
  const id = opts.workerId ?? `nwk_${randomBytes(6).toString('base64url')}`
  const leaseMs = opts.leaseMs ?? NOTIFICATION_LEASE_MS
  const batchSize = opts.batchSize ?? 25
  const maxInFlight = Math.max(opts.maxInFlight ?? 2 * batchSize, 1)
  const retryBase = opts.retryBaseMs ?? NOTIFICATION_RETRY_BASE_MS
  const retryCap = opts.retryCapMs ?? NOTIFICATION_RETRY_CAP_MS
  const log = opts.log ?? silent
  const eventWindows = opts.eventWindows ?? KLAVIYO_EVENT_WINDOWS
  const deletionWindows = opts.deletionWindows ?? KLAVIYO_DELETION_WINDOWS
  const events: SendLimiter = createSendLimiter(eventWindows)
  const deletions: SendLimiter = createSendLimiter(deletionWindows)
  const requestTimeoutMs = opts.requestTimeoutMs ?? KLAVIYO_TIMEOUT_MS
  const klaviyoOptions = { baseUrl: opts.klaviyoBaseUrl, timeoutMs: requestTimeoutMs }
  const clockSkewMs = opts.clockSkewMs ?? NOTIFICATION_CLOCK_SKEW_MS
  const longestMs = (windows: readonly Window[]) => Math.max(0, ...windows.map((w) => w.ms))
  const lease = sendLeaseTimes([...eventWindows, ...deletionWindows], requestTimeoutMs, clockSkewMs)
  const recheckMs = Math.max(1, Math.min(LEASE_RECHECK_MS, longestMs([...eventWindows, ...deletionWindows])))

  /** The shops' Klaviyo keys as last read, opened once per sealed value. */
  const keys = new Map<string, KlaviyoKey>()
  /** The limiter key of each shop whose Klaviyo deliveries were claimed before. */
  const limiterKeyOf = new Map<string, string>()
  /** Failed calls in a row without a Retry-After, per limiter key: the key's own backoff. */
  const keyFailures = new Map<string, number>()
  /** Until when a shop's Flow calls wait (Shopify throttled them). */
  const flowWait = new Map<string, number>()

  // ---- send leases (see `sendLeaseTimes`) ----

  /** The leases of the keys as this worker last saw them: its own, or another's (until when, and when it looked). */
  const leases = new Map<string, { mine: boolean; until: number; seenAt: number }>()
  /** Per key, when this worker's last answered request leaves every window (answer + the limiter's longest window). */
  const countedUntil = new Map<string, number>()
  /** Per key, when this worker last had work for it (a delivery or an erasure claimed). */
  const lastWork = new Map<string, number>()

  /** Whether a request may start on the key now: this worker holds its lease, with a tail of it left. */
  const mayStart = (name: string, at: number): boolean => {
    const l = leases.get(name)
    return l !== undefined && l.mine && l.until - at >= lease.tailMs
  }
  /** Until when the key is another worker's as far as this one knows (0: not known to be). */
  const elsewhereUntil = (name: string): number => {
    const l = leases.get(name)
    return l === undefined || l.mine ? 0 : Math.min(l.until, l.seenAt + recheckMs)
  }
  const counted = (name: string, until: number) => countedUntil.set(name, Math.max(countedUntil.get(name) ?? 0, until))

  /** Takes or renews the key's lease: one statement, and one more to read another holder's when it is not to be had. */
  async function takeLease(name: string, at: number): Promise<boolean> {
    const until = at + lease.leaseMs
    if (await repo.takeSendLease(db, { name, holder: id, at, until })) {
      leases.set(name, { mine: true, until, seenAt: at })
      return true
    }
    const other = await repo.sendLease(db, name)
    leases.set(name, { mine: false, until: other?.expires_at ?? at, seenAt: at })
    return false
  }

  /** Renews the leases this worker holds and had work for within a lease, once half the time they may send in is used. */
  async function renewLeases(at: number): Promise<void> {
    for (const [name, l] of leases) {
      if (!l.mine || (lastWork.get(name) ?? -Infinity) <= at - lease.leaseMs) continue
      if (l.until - at < lease.tailMs + (lease.leaseMs - lease.tailMs) / 2) await takeLease(name, at)
    }
  }

  /** A stopping worker's hand-over: each lease it holds ends when its last answers have left every window. */
  async function handOverLeases(): Promise<void> {
    const at = now()
    for (const [name, l] of leases) {
      if (!l.mine) continue
      const until = Math.max(at, (countedUntil.get(name) ?? 0) + clockSkewMs)
      try {
        if (until < l.until) await repo.shortenSendLease(db, { name, holder: id, until })
        leases.delete(name)
      } catch (err) {
        log.error({ err }, 'notification worker: a send lease could not be handed over (it expires on its own)')
      }
    }
  }

  function klaviyoKey(shopId: string, sealed: string): KlaviyoKey {
    const known = keys.get(shopId)
    if (known?.sealed === sealed) return known
    const privateKey = opts.openKlaviyoKey(shopId, sealed)
    const key: KlaviyoKey = {
      sealed,
      limiterKey: `klaviyo:${createHash('sha256').update(privateKey).digest('base64url').slice(0, 22)}`,
      channel: createKlaviyoChannel(privateKey, klaviyoOptions),
      privateKey,
    }
    keys.set(shopId, key)
    limiterKeyOf.set(shopId, key.limiterKey)
    return key
  }

  // ---- deliveries ----

  const inFlight = new Set<Promise<void>>()
  const perShop = new Map<string, number>()

  /** The shops' channels that must wait now: a closed or full Klaviyo key or one another worker holds, a throttled Flow. */
  function waiting(at: number): ShopChannel[] {
    const pairs: ShopChannel[] = []
    for (const [shopId, key] of limiterKeyOf)
      if (events.room(key, at) === 0 || elsewhereUntil(key) > at) pairs.push({ shop_id: shopId, channel: 'klaviyo' })
    for (const [shopId, until] of flowWait) {
      if (until > at) pairs.push({ shop_id: shopId, channel: 'flow' })
      else flowWait.delete(shopId)
    }
    return pairs
  }

  interface Settlement {
    state: NotificationDeliveryRow['state']
    next_attempt_at?: number
    last_error: string | null
  }

  async function settle(d: NotificationDeliveryRow, claimToken: string, s: Settlement, at: number, counted = true): Promise<void> {
    await repo.settle(
      db,
      { shop_id: d.shop_id, id: d.id, claimToken },
      {
        state: s.state,
        attempts: d.attempts + (counted ? 1 : 0),
        next_attempt_at: s.next_attempt_at ?? d.next_attempt_at,
        last_error: s.last_error,
        sent_at: s.state === 'sent' ? at : null,
      },
    )
  }

  /** What an answer means for the delivery, and for the shop's channel. */
  async function outcome(d: NotificationDeliveryRow, result: SendResult, key: KlaviyoKey | undefined): Promise<Settlement> {
    const at = now()
    if (result.ok) {
      if (key) keyFailures.delete(key.limiterKey)
      return { state: 'sent', last_error: null }
    }
    if (d.channel === 'flow' && isFlowSkip(result)) return { state: 'skipped', last_error: result.reason }
    if (key && keyRefused(result)) {
      // Held back (pending) until the merchant replaces the key.
      await repo.recordKeyRefused(db, d.shop_id, key.sealed, result.reason, at)
      log.warn({ shopId: d.shop_id, reason: result.reason }, "Klaviyo refused the shop's private key: its notifications wait for a new key")
      return { state: 'pending', next_attempt_at: at, last_error: result.reason }
    }
    if (result.permanent) return { state: 'failed', last_error: result.reason }
    let wait = result.retryAfterMs
    if (key) {
      if (wait === null) {
        const n = (keyFailures.get(key.limiterKey) ?? 0) + 1
        keyFailures.set(key.limiterKey, n)
        wait = backoffMs(n, retryBase, retryCap)
      }
      events.close(key.limiterKey, at + wait)
    } else if (d.channel === 'flow' && result.retryAfterMs !== null) {
      flowWait.set(d.shop_id, Math.max(flowWait.get(d.shop_id) ?? 0, at + result.retryAfterMs))
    }
    wait ??= backoffMs(d.attempts + 1, retryBase, retryCap)
    return { state: 'pending', next_attempt_at: at + wait, last_error: result.reason }
  }

  async function attempt(
    d: NotificationDeliveryRow,
    message: NotificationMessage,
    channel: NotificationChannel,
    key: KlaviyoKey | undefined,
    claimToken: string,
  ) {
    let result: SendResult
    try {
      result = await channel.send(message)
    } catch (err) {
      result = {
        ok: false,
        permanent: false,
        retryAfterMs: null,
        reason: `send failed: ${err instanceof Error ? err.message : String(err)}`,
      }
    } finally {
      if (key) {
        const at = now()
        events.finish(key.limiterKey, at)
        counted(key.limiterKey, at + longestMs(eventWindows))
      }
    }
    try {
      const s = await outcome(d, result, key)
      await settle(d, claimToken, s, now())
      if (s.state === 'failed' || (s.state === 'pending' && !result.ok))
        log.warn({ deliveryId: d.id, shopId: d.shop_id, channel: d.channel, state: s.state, reason: s.last_error }, 'notification not sent')
    } catch (err) {
      // The lease expires and the delivery is tried again (the channel's idempotency key makes it one event).
      log.error({ err, deliveryId: d.id }, 'notification attempt could not be recorded')
    }
  }

  /**
   * Claims up to `limit` due deliveries and starts what may start; the rest is handed back.
   * Deliveries that need no channel (an owner opted out, no contact, no channel) settle here.
   */
  async function claimAndStart(limit: number): Promise<{ started: Promise<void>[]; settled: number }> {
    limit = Math.min(limit, 2 * maxInFlight - inFlight.size)
    const none = { started: [], settled: 0 }
    if (limit <= 0) return none
    const at = now()
    const claimToken = `${id}:${randomBytes(6).toString('base64url')}`
    const skipShops = shopsAtShare(perShop, maxInFlight, inFlight.size)
    const due = { at, limit, skipShops, skipShopChannels: waiting(at) }
    if (!(await repo.hasDue(db, due))) return none
    const claimed = await repo.claimDue(db, { ...due, leaseMs, claimToken })
    if (claimed.length === 0) return none

    const shopIds = [...new Set(claimed.map((d) => d.shop_id))]
    const notifications = new Map((await repo.notifications(db, claimed)).map((n) => [`${n.shop_id} ${n.id}`, n]))
    const owners = [...notifications.values()]
    const { contacts, optOuts } = await repo.owners(db, owners)
    const emailOf = new Map(contacts.map((c) => [ownerKey(c), c.email]))
    const optedOut = new Set(optOuts.map(ownerKey))
    const connections = new Map(
      (await repo.klaviyoConnections(db, claimed.some((d) => d.channel === 'klaviyo') ? shopIds : [])).map((c) => [c.shop_id, c]),
    )

    const started: Promise<void>[] = []
    const handBack: NotificationDeliveryRow[] = []
    const settled: Promise<void>[] = []
    /** The keys whose lease this claim asked for: once each. */
    const asked = new Set<string>()
    for (const d of claimed) {
      const n = notifications.get(`${d.shop_id} ${d.notification_id}`)
      if (n === undefined) continue // erased meanwhile: the delivery went with it
      const skip = (reason: string) => settled.push(settle(d, claimToken, { state: 'skipped', last_error: reason }, at, false))
      /** Held back (pending, no attempt counted) for the longest backoff: the channel cannot be used now. */
      const holdBack = (reason: string) =>
        settled.push(settle(d, claimToken, { state: 'pending', next_attempt_at: at + retryCap, last_error: reason }, at, false))
      if (optedOut.has(ownerKey(n))) {
        skip(SKIP_OPTED_OUT)
        continue
      }
      const email = emailOf.get(ownerKey(n))
      if (email === undefined) {
        skip(SKIP_NO_CONTACT)
        continue
      }
      if (d.channel === 'flow' && n.owner_type !== 'customer') {
        skip(SKIP_GUEST_FLOW)
        continue
      }
      let channel: NotificationChannel | undefined
      let key: KlaviyoKey | undefined
      if (d.channel === 'klaviyo') {
        const connection = connections.get(d.shop_id)
        if (connection === undefined) {
          skip(SKIP_NOT_CONNECTED)
          continue
        }
        try {
          key = klaviyoKey(d.shop_id, connection.secret)
        } catch (err) {
          log.error({ err, shopId: d.shop_id }, "the shop's Klaviyo key does not open (SHOPIFY_TOKEN_KEY changed?): its notifications wait")
          holdBack('the stored Klaviyo key does not open')
          continue
        }
        channel = key.channel
        lastWork.set(key.limiterKey, at)
        if (!mayStart(key.limiterKey, now()) && !asked.has(key.limiterKey)) {
          asked.add(key.limiterKey)
          // Not to be had (or the database failed): the key's deliveries are handed back below.
          await takeLease(key.limiterKey, now()).catch((err: unknown) =>
            log.error({ err, shopId: d.shop_id }, "notification worker: the Klaviyo key's send lease could not be taken"),
          )
        }
      } else {
        channel = opts.flow
        if (channel === undefined) {
          holdBack('Shopify Flow is not available')
          continue
        }
      }
      const room = shopHasRoom(perShop, d.shop_id, perShop.get(d.shop_id) ?? 0, inFlight.size + started.length, maxInFlight)
      // A key another worker holds is handed back like a full one: nothing counted, claimed again once its lease may have ended.
      const keyRoom = key === undefined || (mayStart(key.limiterKey, now()) && events.tryStart(key.limiterKey, at))
      if (!room || (d.channel === 'flow' && (flowWait.get(d.shop_id) ?? 0) > at) || !keyRoom) {
        handBack.push(d)
        continue
      }
      bump(perShop, d.shop_id, 1)
      const message = messageOf(n, email, opts.optOutUrl(d.shop_id, { type: n.owner_type, id: n.owner_id }))
      const p: Promise<void> = attempt(d, message, channel, key, claimToken).finally(() => {
        bump(perShop, d.shop_id, -1)
        inFlight.delete(p)
        poller.wake()
      })
      inFlight.add(p)
      started.push(p)
    }
    await repo.release(db, handBack, claimToken)
    await Promise.all(settled)
    return { started, settled: settled.length }
  }

  // ---- profile deletions ----

  /**
   * Asks Klaviyo for one due profile deletion (its few calls are within the endpoint's limits
   * at one a pass, and one lease covers them); returns how many were taken up.
   */
  async function runErasures(): Promise<number> {
    const at = now()
    // The shops whose key another worker holds: their erasures are its to ask.
    const skipShops = [...limiterKeyOf].filter(([, key]) => elsewhereUntil(key) > at).map(([shop]) => shop)
    if (!(await repo.hasDueErasure(db, at, skipShops))) return 0
    const claimToken = `${id}:${randomBytes(6).toString('base64url')}`
    const claimed = await repo.claimErasures(db, { at, limit: 1, leaseMs, claimToken, skipShops })
    const connections = new Map((await repo.klaviyoConnections(db, [...new Set(claimed.map((e) => e.shop_id))])).map((c) => [c.shop_id, c]))
    for (const e of claimed) await erase(e, connections.get(e.shop_id), claimToken)
    return claimed.length
  }

  async function erase(e: ErasureRow, connection: { secret: string } | undefined, claimToken: string): Promise<void> {
    if (connection === undefined) {
      // The shop disconnected Klaviyo: there is no account to ask any more, and the e-mail is not kept for nothing.
      log.warn({ shopId: e.shop_id, erasureId: e.id }, 'Klaviyo profile deletion dropped: the shop disconnected Klaviyo')
      return repo.erasureDone(db, e, claimToken)
    }
    const retry = (reason: string, waitMs: number, counted = true) =>
      repo.erasureRetry(db, e, claimToken, {
        attempts: e.attempts + (counted ? 1 : 0),
        next_attempt_at: now() + waitMs,
        last_error: reason,
      })
    let key: KlaviyoKey
    try {
      key = klaviyoKey(e.shop_id, connection.secret)
    } catch {
      return retry('the stored Klaviyo key does not open', retryCap, false)
    }
    // The key's lease covers its deletions too: one worker asks them, within the endpoint's limits.
    const limiterKey = `${key.limiterKey}:deletion`
    lastWork.set(key.limiterKey, now())
    const steps = [...(e.email ? [{ email: e.email }] : []), ...(e.external_id ? [{ externalId: e.external_id }] : [])]
    for (const profile of steps) {
      // Another worker holds the key: due at once, for it to take (this worker leaves the shop's erasures alone meanwhile).
      if (!mayStart(key.limiterKey, now()) && !(await takeLease(key.limiterKey, now())))
        return retry("waiting for the key's lease: another instance sends on it", 0, false)
      // A lookup by customer id makes a Get Profiles call before each deletion: each call takes its place.
      if (!deletions.tryStart(limiterKey, now()))
        return retry('waiting for the deletion rate limit', Math.max(0, deletions.nextRoomAt(limiterKey, now()) - now()), false)
      const result = await requestProfileDeletion(key.privateKey, profile, klaviyoOptions).finally(() => {
        const answeredAt = now()
        deletions.finish(limiterKey, answeredAt)
        counted(key.limiterKey, answeredAt + longestMs(deletionWindows))
      })
      if (result.ok) continue
      if (keyRefused(result)) {
        await repo.recordKeyRefused(db, e.shop_id, key.sealed, result.reason, now())
        return retry(result.reason, 0)
      }
      if (result.retryAfterMs !== null) deletions.close(limiterKey, now() + result.retryAfterMs)
      // A refused deletion (400) is retried too, at the longest wait: an erasure is never dropped while the channel is there.
      const wait = result.permanent ? retryCap : (result.retryAfterMs ?? backoffMs(e.attempts + 1, retryBase, retryCap))
      log.warn({ shopId: e.shop_id, erasureId: e.id, reason: result.reason }, 'Klaviyo profile deletion not taken: tried again later')
      return retry(result.reason, wait)
    }
    await repo.erasureDone(db, e, claimToken)
  }

  // ---- retention ----

  async function purgeSettled(at = now()): Promise<{ purged: number; more: boolean }> {
    if (opts.retentionDays === 0) return { purged: 0, more: false }
    const cutoff = at - opts.retentionDays * DAY_MS
    if (!(await repo.hasSettledBefore(db, cutoff))) return { purged: 0, more: false }
    let purged = 0
    for (let i = 0; i < PURGE_BATCHES; i++) {
      const n = await db.transaction().execute((trx) => repo.purgeSettled(trx, cutoff, PURGE_BATCH))
      purged += n
      if (n < PURGE_BATCH) return { purged, more: false }
    }
    return { purged, more: true }
  }

  // ---- the loop ----

  async function scheduled(): Promise<boolean> {
    if (!opts.makeScheduled) return false
    return (await opts.makeScheduled(db, now(), opts.scheduledPerPass ?? 500)).more
  }

  let nextPurgeAt = 0
  /** The profile deletion being asked, beside the deliveries (a hanging Klaviyo holds no delivery back). */
  let erasing: Promise<void> | undefined
  let erasedSince = 0
  function eraseInBackground(): void {
    if (erasing) return
    erasing = runErasures()
      .then((n) => void (erasedSince += n))
      .catch((err: unknown) => log.error({ err }, 'notification worker: profile deletion failed'))
      .finally(() => {
        erasing = undefined
        if (erasedSince > 0) poller.wake()
      })
  }

  async function runOnce(): Promise<NotificationPassResult> {
    await scheduled()
    await renewLeases(now())
    const erasures = await runErasures()
    const { started } = await claimAndStart(batchSize)
    await Promise.all(started)
    return { attempted: started.length, erasures }
  }

  const poller = pollLoop({
    async pass() {
      const made = await scheduled()
      await renewLeases(now())
      const erased = erasedSince
      erasedSince = 0
      eraseInBackground()
      const free = maxInFlight - inFlight.size
      const { started, settled } = await claimAndStart(free > 0 ? Math.min(batchSize, free) : batchSize)
      // Deliveries settled without a channel (opted out, no contact) were work too: claim again at once.
      const busy = made || erased > 0 || settled > 0 || (started.length > 0 && inFlight.size < maxInFlight)
      if (now() >= nextPurgeAt) {
        nextPurgeAt = now() + PURGE_INTERVAL_MS
        const done = await purgeSettled()
        if (done.more) nextPurgeAt = 0
        if (done.purged > 0) log.info(done, 'deleted settled notifications past their retention')
        await repo.purgeSendLeases(db, now() - PURGE_INTERVAL_MS)
      }
      return busy
    },
    waitMs: () => pollWait(),
    onError: (err) => log.error({ err }, 'notification worker pass failed'),
  })

  /** The poll interval, or less when a key's or a shop's wait ends sooner (its room, another worker's lease). */
  function pollWait(): number {
    const at = now()
    let next = at + opts.pollIntervalMs
    for (const key of limiterKeyOf.values()) {
      const free = Math.max(events.nextRoomAt(key, at), elsewhereUntil(key))
      if (free > at) next = Math.min(next, free)
    }
    for (const until of flowWait.values()) if (until > at) next = Math.min(next, until)
    return Math.max(1, next - at)
  }

  return {
    id,
    runOnce,
    purgeSettled,
    start: poller.start,
    async stop() {
      await poller.stop()
      await Promise.all([...inFlight, erasing])
      await handOverLeases()
    },
  }
}
