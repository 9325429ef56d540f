/**
 * `npm run bench -- --notifications`: one back-in-stock for a product held by 10,000 shoppers
 * who all gave the shop their e-mail, sent to the shop's Klaviyo (the local emulator with
 * Klaviyo's published Create Event limits: 350 per second, 3,500 per minute, per key).
 *
 * The service in this process as `wishlist serve` runs it (buildApp, the webhook worker and the
 * notification worker, their default poll interval), on SQLite (a temporary file) and on
 * PostgreSQL (a fresh database): the holders are seeded through the API (each item added and
 * each contact set by the merchant) before Klaviyo is connected, then one product event takes
 * the product from 0 to 10 in stock. Measured:
 *
 * - every one of the 10,000 events received by Klaviyo, none refused (429), and the most any
 *   of Klaviyo's fixed windows (one second, one minute, on Klaviyo's clock) received, against
 *   the limits; also the most over any sliding window, which is stricter;
 * - a second back-in-stock within the cooldown: 10,000 notifications suppressed, nothing sent;
 * - another shop during the burst: its webhook's delay (an item added → its receiver), and its
 *   own Klaviyo's delay (its product back in stock → the event at Klaviyo), against the same
 *   figures with the service idle, and against one poll interval.
 *
 *   npm run bench -- --notifications [--holders 10000] [--backends sqlite,postgres] [--out bench/results/notifications.json]
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { KLAVIYO_CREATE_EVENT_BURST_PER_SECOND, KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE } from '../src/modules/notifications/klaviyo.js'
import { createNotificationWorker } from '../src/modules/notifications/notification-worker.js'
import { makeScheduledNotifications } from '../src/modules/notifications/notify.js'
import { optOutUrl } from '../src/modules/notifications/opt-out.js'
import { createWebhookWorker } from '../src/modules/webhooks/webhook-worker.js'
import { startKlaviyoEmulator } from '../test/helpers/klaviyo-emulator.js'

export interface NotificationsBenchOptions {
  holders: number
  backends: ('sqlite' | 'postgres')[]
  pgUrl: string
  out: string
  log: (line: string) => void
}

const KEY = `pk_bench${randomBytes(16).toString('hex')}`
const OTHER_KEY = `pk_other${randomBytes(16).toString('hex')}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * The least time `n` events can take within the limits: 3,500 in each minute (sliding),
 * each minute's at 350 a second.
 */
function fastestSeconds(n: number): number {
  const minutes = Math.floor((n - 1) / KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE)
  return minutes * 60 + (n - minutes * KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE) / KLAVIYO_CREATE_EVENT_BURST_PER_SECOND
}

/** The most requests any window of `ms` received: fixed windows on the epoch's clock, and any sliding one. */
function maxIn(times: number[], ms: number): { fixed: number; sliding: number } {
  const sorted = [...times].sort((a, b) => a - b)
  const counts = new Map<number, number>()
  for (const at of sorted) counts.set(Math.floor(at / ms), (counts.get(Math.floor(at / ms)) ?? 0) + 1)
  let sliding = 0
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) >= ms) j++
    sliding = Math.max(sliding, i - j + 1)
  }
  return { fixed: Math.max(0, ...counts.values()), sliding }
}

async function pool<T>(items: T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await run(items[next++] as T)
    }),
  )
}

async function runBackend(backend: 'sqlite' | 'postgres', o: NotificationsBenchOptions) {
  const log = o.log
  const dir = mkdtempSync(join(tmpdir(), 'bench-notify-'))
  let dbName: string | undefined
  let databaseUrl = `sqlite:${join(dir, 'bench.db')}`
  if (backend === 'postgres') {
    dbName = `nB_bench_${randomBytes(4).toString('hex')}`
    const admin = new pg.Client({ connectionString: o.pgUrl })
    await admin.connect()
    await admin.query(`create database "${dbName}"`)
    await admin.end()
    const url = new URL(o.pgUrl)
    url.pathname = `/${dbName}`
    databaseUrl = url.toString()
  }

  const klaviyo = await startKlaviyoEmulator({
    keys: { [KEY]: 'ACCT_BENCH', [OTHER_KEY]: 'ACCT_OTHER' },
    rateLimit: { burstPerSecond: KLAVIYO_CREATE_EVENT_BURST_PER_SECOND, steadyPerMinute: KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE },
  })
  const hooks: number[] = []
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      hooks.push(Date.now())
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))

  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    PUBLIC_BASE_URL: 'http://wishlist.bench',
    KLAVIYO_BASE_URL: klaviyo.url,
    SHOPIFY_TOKEN_KEY: randomBytes(32).toString('hex'),
    RATE_LIMIT_ADMIN_PER_MIN: '100000000',
    RATE_LIMIT_STOREFRONT_PER_MIN: '100000000',
    RATE_LIMIT_SHOP_PER_MIN: '100000000',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    PAGE_CACHE_MB: '0',
  })
  const pollMs = config.webhooks.pollIntervalMs
  const storage = openStorage(config.database)
  await migrateToLatest(storage)
  const app = await buildApp({ config, storage, logger: false })
  await app.ready()
  const webhookWorker = createWebhookWorker({ storage, webhooks: config.webhooks, sender: app.services.webhookSender })
  const notificationWorker = createNotificationWorker({
    db: storage.db,
    openKlaviyoKey: app.services.channels.openKlaviyoKey,
    klaviyoBaseUrl: config.notifications.klaviyoBaseUrl,
    optOutUrl: (shopId, owner) => optOutUrl(config, shopId, owner),
    makeScheduled: makeScheduledNotifications,
    pollIntervalMs: pollMs,
    retentionDays: config.notifications.retentionDays,
  })

  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, token: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { payload: body as object }),
    })
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res
  }
  async function newShop(name: string) {
    const { shop, apiKey } = await app.services.shops.create({ domain: `${name}-${Date.now()}.myshopify.com`, plan: 'scale' })
    const res = await app.inject({ method: 'POST', url: '/v1/auth/token', payload: { api_key: apiKey.keyId, api_secret: apiKey.secret } })
    return { id: shop.id, token: res.json().data.token as string }
  }
  const product = (productId: string, inventory: number) => ({
    type: 'product.updated',
    product_id: productId,
    handle: `p-${productId}`,
    title: `Product ${productId}`,
    variants: [{ variant_id: `${productId}1`, price: '20.00', inventory_quantity: inventory }],
  })
  const events = (shop: { token: string }, list: unknown[]) => call('POST', '/v1/events', shop.token, { events: list })
  const eventsOf = (key: string) => klaviyo.of('POST', '/api/events').filter((r) => r.key === key)

  try {
    // ---- seeding: holders and contacts first, Klaviyo connected after (adds before it make no item-added notification) ----
    const seedStart = performance.now()
    const shop = await newShop('bench-notify')
    const other = await newShop('bench-other')
    const hooksShop = await newShop('bench-hooks')
    const P = '9100000000001'
    await events(shop, [product(P, 0)])
    const customers = Array.from({ length: o.holders }, (_, i) => String(5_000_000_000 + i))
    await pool(customers, 16, async (c) => {
      await call('PUT', `/v1/admin/customers/${c}/contact`, shop.token, { email: `c${c}@example.com` })
      await call('POST', `/v1/wishlists/${c}/items`, shop.token, { product_id: P })
    })
    // The other shop: one holder of two products, each out of stock; and a webhook shop.
    const otherCustomer = '6000000000001'
    await call('PUT', `/v1/admin/customers/${otherCustomer}/contact`, other.token, { email: 'other@example.com' })
    const otherProducts = ['9200000000001', '9200000000002']
    for (const p of otherProducts) {
      await events(other, [product(p, 0)])
      await call('POST', `/v1/wishlists/${otherCustomer}/items`, other.token, { product_id: p })
    }
    await call('POST', '/v1/webhooks', hooksShop.token, {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['wishlist.item.added'],
    })
    await call('PUT', '/v1/admin/channels/klaviyo', shop.token, { private_key: KEY })
    await call('PUT', '/v1/admin/channels/klaviyo', other.token, { private_key: OTHER_KEY })
    log(`notifications bench (${backend}): ${o.holders} holders seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)

    webhookWorker.start()
    notificationWorker.start()

    /** An item added in the webhook shop → its delivery at the receiver (ms). */
    let hookSeq = 0
    async function webhookDelay(): Promise<number> {
      const before = hooks.length
      const at = Date.now()
      await call('POST', `/v1/wishlists/${8_000_000 + ++hookSeq}/items`, hooksShop.token, { product_id: `77${hookSeq}` })
      while (hooks.length === before) await sleep(2)
      return (hooks[before] as number) - at
    }
    /** The other shop's product back in stock → its event at Klaviyo (ms). */
    async function otherChannelDelay(productId: string): Promise<number> {
      const before = eventsOf(OTHER_KEY).length
      await events(other, [product(productId, 10)])
      const at = Date.now()
      while (eventsOf(OTHER_KEY).filter((r) => r.status === 202).length === before) await sleep(2)
      return (eventsOf(OTHER_KEY).at(-1) as { at: number }).at - at
    }

    const idleWebhook: number[] = []
    for (let i = 0; i < 5; i++) idleWebhook.push(await webhookDelay())
    const idleChannel = await otherChannelDelay(otherProducts[0] as string)

    // ---- the burst ----
    const sent = async () =>
      Number(
        (
          await storage.db
            .selectFrom('notification_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('shop_id', '=', shop.id)
            .where('state', '=', 'sent')
            .executeTakeFirstOrThrow()
        ).n,
      )
    const burstStart = Date.now()
    await events(shop, [product(P, 10)])
    const burstWebhook: number[] = []
    let burstChannel: number | undefined
    let channelProbe: Promise<void> | undefined
    while ((await sent()) < o.holders) {
      if (Date.now() - burstStart > 20 * 60_000) throw new Error('the burst did not finish in 20 minutes')
      burstWebhook.push(await webhookDelay())
      if (channelProbe === undefined && Date.now() - burstStart > 5_000)
        channelProbe = otherChannelDelay(otherProducts[1] as string).then((ms) => void (burstChannel = ms))
      await sleep(500)
    }
    await channelProbe
    const burstEnd = Date.now()
    const taken = eventsOf(KEY).filter((r) => r.status === 202)
    const throttled = eventsOf(KEY).filter((r) => r.status === 429).length
    const distinct = new Set(klaviyo.events(KEY).map((e) => e.uniqueId)).size
    const times = taken.map((r) => r.at)
    const second = maxIn(times, 1_000)
    const minute = maxIn(times, 60_000)
    const seconds = (Math.max(...times) - burstStart) / 1000
    log(
      `  ${taken.length} events taken by Klaviyo (${distinct} distinct, ${throttled} refused 429) in ${seconds.toFixed(1)} s; ` +
        `max ${second.fixed}/s (sliding ${second.sliding}) vs ${KLAVIYO_CREATE_EVENT_BURST_PER_SECOND}, ${minute.fixed}/min (sliding ${minute.sliding}) vs ${KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE}`,
    )

    // ---- a second back-in-stock within the cooldown ----
    const requestsBefore = eventsOf(KEY).length
    await events(shop, [product(P, 0)])
    await events(shop, [product(P, 10)])
    const counts = async () =>
      storage.db
        .selectFrom('notifications')
        .select(['state', 'reason', (eb) => eb.fn.countAll<number>().as('n')])
        .where('shop_id', '=', shop.id)
        .where('signal', '=', 'back_in_stock')
        .groupBy(['state', 'reason'])
        .execute()
    const cooldownStart = Date.now()
    while ((await counts()).reduce((n, r) => n + Number(r.n), 0) < 2 * o.holders) {
      if (Date.now() - cooldownStart > 5 * 60_000) throw new Error('the second event was not fanned out in 5 minutes')
      await sleep(100)
    }
    await sleep(3 * pollMs)
    const byState = Object.fromEntries((await counts()).map((r) => [`${r.state}${r.reason ? `:${r.reason}` : ''}`, Number(r.n)]))
    const sentAfterCooldown = eventsOf(KEY).length - requestsBefore
    log(`  second event within the cooldown: ${JSON.stringify(byState)}, ${sentAfterCooldown} requests to Klaviyo`)
    const max = (xs: number[]) => Math.max(...xs)
    log(
      `  other shop during the burst: webhook delay max ${max(burstWebhook)} ms (idle ${max(idleWebhook)} ms), its Klaviyo ${burstChannel} ms (idle ${idleChannel} ms); poll interval ${pollMs} ms`,
    )

    return {
      backend,
      holders: o.holders,
      poll_interval_ms: pollMs,
      delivered: taken.length,
      distinct_events: distinct,
      refused_429: throttled,
      seconds: Number(seconds.toFixed(1)),
      burst_to_done_seconds: Number(((burstEnd - burstStart) / 1000).toFixed(1)),
      limits: { per_second: KLAVIYO_CREATE_EVENT_BURST_PER_SECOND, per_minute: KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE },
      max_per_second: second,
      max_per_minute: minute,
      per_second_ratio: Number((second.fixed / KLAVIYO_CREATE_EVENT_BURST_PER_SECOND).toFixed(3)),
      per_minute_ratio: Number((minute.fixed / KLAVIYO_CREATE_EVENT_STEADY_PER_MINUTE).toFixed(3)),
      /** The fastest the limits allow for these events (full minutes at the burst rate) against the time taken. */
      fastest_seconds: Number(fastestSeconds(taken.length).toFixed(1)),
      pace_ratio: Number((fastestSeconds(taken.length) / seconds).toFixed(3)),
      cooldown: { notifications: byState, requests_to_klaviyo: sentAfterCooldown },
      other_shop: {
        webhook_delay_ms: { idle_max: max(idleWebhook), burst_max: max(burstWebhook), burst_samples: burstWebhook.length },
        klaviyo_delay_ms: { idle: idleChannel, burst: burstChannel ?? null },
        /** What the burst added to the webhook's delay (its worst), in poll intervals. */
        webhook_added_over_poll: Number(((max(burstWebhook) - max(idleWebhook)) / pollMs).toFixed(3)),
        klaviyo_burst_minus_idle_over_poll: burstChannel === undefined ? null : Number(((burstChannel - idleChannel) / pollMs).toFixed(3)),
      },
    }
  } finally {
    await notificationWorker.stop()
    await webhookWorker.stop()
    await app.close()
    await storage.destroy()
    await klaviyo.close()
    receiver.close()
    rmSync(dir, { recursive: true, force: true })
    if (dbName !== undefined) {
      const admin = new pg.Client({ connectionString: o.pgUrl })
      await admin.connect()
      await admin.query(`drop database if exists "${dbName}"`)
      await admin.end()
    }
  }
}

export async function runNotificationsBench(o: NotificationsBenchOptions): Promise<void> {
  const results = []
  for (const backend of o.backends) results.push(await runBackend(backend, o))
  mkdirSync(dirname(o.out), { recursive: true })
  writeFileSync(o.out, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2)}\n`)
  o.log(`written to ${o.out}`)
}
