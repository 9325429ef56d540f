/**
 * The floors: bare Fastify (no logger, no rate limit, no hooks) doing the database work of
 * the service's cached GET page and of its add and remove, and nothing else.
 *
 * The read floor (`GET /v1/wishlists/me`): a cached token check, then the page's body from
 * an in-process cache confirmed by the same change stamp as the service's (this process's
 * writes and `PRAGMA data_version`, read once per event-loop turn: db/connect.ts), built on a
 * miss from the page's two reads. `get-page` and `guest-get` are reported against it.
 *
 * The write floor: a cached token check and the same SQLite transaction as the service's
 * add and remove (the owner row and its item count, the item, the analytics fact), each
 * statement prepared once, on the bench dataset's file with the service's pragmas
 * (db/sqlite-file.ts). Each request's transaction is a savepoint in a batch that commits
 * once per event-loop turn, as the service's group commit does (db/group-commit.ts; one
 * COMMIT per request made this floor slower than the service), and its answer waits for
 * that COMMIT. `add-remove` is reported against it as well as against the ceiling: what the
 * service loses here is its own cost on a write beyond the database work every add and
 * remove needs (target: at least 0.6 of the floor).
 *
 * The analytics floors (`GET /v1/analytics/overview`, `GET /v1/admin/analytics/conversions`,
 * period 30d): a cached token check, the pending-facts check every analytics answer makes,
 * then the answer's own statement and nothing else: the overview's sums; the conversions'
 * one row (sums, the days' histograms joined, revenue per currency) with the histograms
 * merged and the median taken by the service's own functions (purchase-lags.ts).
 * `analytics-overview` and `analytics-conversions` are reported against them: what the
 * conversions answer must cost at least, whatever the service around it does.
 *
 * BENCH_FLOOR_EXTRAS (comma-separated: `log`, `rate-limit`, `metrics`) adds the service's
 * per-request concerns one by one, through the same pieces as shipped (its compiled access
 * line on its stdout sink, @fastify/rate-limit in memory, its prom-client metrics:
 * shipped.ts), to price each against the
 * bare floor; `statements` adds the statements the service's add and remove run beyond the
 * floor's (the count's update answering the list's count, the outbox insert that checks the
 * shop's webhook subscriptions, the owner row read before a remove).
 *
 * It mints customer tokens itself (`POST /v1/auth/token`, the key's shop, no secret check),
 * so the add-remove scenario runs against it unchanged. DATABASE_URL (`sqlite:FILE`) and
 * JWT_SECRET come from the environment.
 */
import rateLimit from '@fastify/rate-limit'
import Fastify, { type FastifyInstance, LogController } from 'fastify'
import { openSqliteFile } from '../../src/db/sqlite-file.js'
import { customerOf, tokenRoute } from './floor-common.js'
import { shipped } from './shipped.js'
import { LagCounts, medianDaysOf, unpackLagsInto } from '../../src/modules/analytics/purchase-lags.js'
import { conversionRate, dayOf } from '../../src/modules/analytics/analytics.periods.js'

const { stdoutSink } = await shipped<typeof import('../../src/lib/log-sink.js')>('lib/log-sink.js')
const { accessLogPlugin } = await shipped<typeof import('../../src/plugins/access-log.js')>('plugins/access-log.js')
const { metricsPlugin } = await shipped<typeof import('../../src/plugins/metrics.js')>('plugins/metrics.js')

const file = (process.env.DATABASE_URL ?? '').replace(/^sqlite:/, '')
const { db } = openSqliteFile(file)

const shopOfKey = db.prepare('select shop_id from api_keys where id = ?')
const ensureOwner = db.prepare(
  `insert into wishlist_owners (shop_id, owner_type, owner_id, item_count, created_at, updated_at) values (?, 'customer', ?, 0, ?, ?)
   on conflict (shop_id, owner_type, owner_id) do update set item_count = item_count returning item_count`,
)
const insertItem = db.prepare(
  `insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
   values (?, 'customer', ?, 'default', ?, ?, null, null, ?) on conflict do nothing returning product_id`,
)
const deleteItem = db.prepare(
  `delete from wishlist_items where shop_id = ? and owner_type = 'customer' and owner_id = ? and list_id = 'default' and product_id = ? returning product_id`,
)
const adjustCount = db.prepare(
  `update wishlist_owners set item_count = item_count + ?, updated_at = ? where shop_id = ? and owner_type = 'customer' and owner_id = ? returning item_count`,
)
// With the `statements` extra, the statements the service's add and remove run instead: the
// count's update answers the list's count (a subquery of its RETURNING), the event goes to
// the outbox when an endpoint of the shop takes it (one INSERT … SELECT … WHERE EXISTS),
// and a remove reads the owner row before the delete.
const adjustAndCount = db.prepare(
  `update wishlist_owners set item_count = item_count + ?, updated_at = ? where shop_id = ? and owner_type = 'customer' and owner_id = ?
   returning (select count(*) from wishlist_items where shop_id = wishlist_owners.shop_id and owner_type = 'customer' and owner_id = wishlist_owners.owner_id and list_id = 'default') as n`,
)
const outboxIfTaken = db.prepare(
  `insert into outbox (shop_id, id, event, payload, occurred_at, created_at, dispatched) select ?1, ?2, ?3, ?4, ?5, ?5, 0
   where exists (select 1 from webhook_endpoints where shop_id = ?1 and disabled_at is null and instr(events, '"' || ?3 || '"') > 0)`,
)
let outboxIds = 0
const lockOwner = db.prepare(
  `select item_count, created_at, updated_at from wishlist_owners where shop_id = ? and owner_type = 'customer' and owner_id = ?`,
)
const recordFact = db.prepare(
  `insert into analytics_inbox (shop_id, type, owner_type, owner_id, product_id, occurred_at) values (?, ?, 'customer', ?, ?, ?)`,
)

const anyPending = db.prepare('select id from analytics_inbox where shop_id = ? limit 1')
const overviewSums = db.prepare(
  `select coalesce(sum(adds), 0) as adds, coalesce(sum(removes), 0) as removes, coalesce(sum(last_seen), 0) as last_seen, coalesce(sum(converted), 0) as converted
   from analytics_daily where shop_id = ? and day >= ?`,
)
const conversionsRow = db.prepare(
  `select sum(adds) as adds, sum(purchased) as purchased, sum(orders_influenced) as orders, sum(lines_influenced) as lines,
     sum(signal_back_in_stock) as back_in_stock, sum(signal_price_dropped) as price_dropped, sum(signal_low_stock) as low_stock,
     group_concat(purchase_lags, ';') as lags,
     (select group_concat(r.currency || ':' || r.amount, ',') from (select currency, sum(amount) as amount from analytics_revenue_daily
        where shop_id = ?1 and day >= ?2 group by currency) r) as revenue
   from analytics_daily where shop_id = ?1 and day >= ?2`,
)

/** The first day of a 30-day period ending today. */
const periodStart = () => dayOf(Date.now()) - 29

const pageItems = db.prepare(
  `select product_id, variant_id, handle, metadata, added_at from wishlist_items where shop_id = ? and owner_type = ? and owner_id = ? and list_id = 'default'
   order by added_at desc, product_id desc limit ? offset ?`,
)
const pageTotal = db.prepare(
  `select count(*) as n from wishlist_items where shop_id = ? and owner_type = ? and owner_id = ? and list_id = 'default'`,
)

/** Writes of this process (counted before they run) and PRAGMA data_version, read once per event-loop turn. */
let writes = 0
const dataVersion = db.prepare('PRAGMA data_version')
let version: unknown
function changeStamp(): string {
  if (version === undefined) {
    version = dataVersion.get()?.data_version
    setImmediate(() => {
      version = undefined
    })
  }
  return `${writes}:${String(version)}`
}

interface PageOwner {
  shopId: string
  ownerType: 'customer' | 'guest'
  ownerId: string
}

/** Page bodies as UTF-8 bytes, by owner and query, with the change stamp they were built or confirmed at. */
const pages = new Map<string, { stamp: string; body: Buffer }>()

function pageBody({ shopId, ownerType, ownerId }: PageOwner, limit: number, offset: number): Buffer {
  const key = `${shopId}|${ownerType}|${ownerId}|${limit}|${offset}`
  const stamp = changeStamp()
  const cached = pages.get(key)
  if (cached?.stamp === stamp) return cached.body
  const rows = pageItems.all(shopId, ownerType, ownerId, limit, offset) as {
    product_id: string
    variant_id: string | null
    handle: string | null
    metadata: string | null
    added_at: number
  }[]
  const total = (pageTotal.get(shopId, ownerType, ownerId) as { n: number }).n
  const items = rows.map((r) => ({
    productId: r.product_id,
    variantId: r.variant_id,
    ...(r.handle === null ? {} : { handle: r.handle }),
    ...(r.metadata === null ? {} : { metadata: JSON.parse(r.metadata) as unknown }),
    addedAt: new Date(r.added_at).toISOString(),
  }))
  const body = Buffer.from(
    JSON.stringify({ ok: true, data: { items, count: items.length, total, has_more: offset + items.length < total } }),
  )
  pages.set(key, { stamp, body })
  return body
}

/** The open batch: the answers waiting for its COMMIT (at the turn's check phase). */
let waiting: (() => void)[] | undefined

function commit(): void {
  const done = waiting ?? []
  waiting = undefined
  db.exec('COMMIT')
  for (const answer of done) answer()
}

function transaction<T>(work: () => T): Promise<T> {
  writes++
  if (waiting === undefined) {
    db.exec('BEGIN IMMEDIATE')
    waiting = []
    setImmediate(commit)
  }
  db.exec('SAVEPOINT floor')
  try {
    const result = work()
    db.exec('RELEASE floor')
    return new Promise((resolve) => waiting?.push(() => resolve(result)))
  } catch (err) {
    db.exec('ROLLBACK TO floor')
    db.exec('RELEASE floor')
    throw err
  }
}

const shopOfStorefrontKey = db.prepare('select id from shops where storefront_key = ?')
const storefronts = new Map<string, string>()

/** A customer's token, or a storefront key (its shop looked up once) and a guest id. */
async function pageOwnerOf(headers: Record<string, string | string[] | undefined>): Promise<PageOwner> {
  const key = headers['x-storefront-key']
  if (typeof key !== 'string') {
    const { shopId, customerId } = await customerOf(headers.authorization as string | undefined)
    return { shopId, ownerType: 'customer', ownerId: customerId }
  }
  let shopId = storefronts.get(key)
  if (shopId === undefined) {
    shopId = (shopOfStorefrontKey.get(key) as { id: string }).id
    storefronts.set(key, shopId)
  }
  return { shopId, ownerType: 'guest', ownerId: String(headers['x-guest-id']) }
}

/** The floor with the given concerns (none: the bare floor). */
async function floorApp(extras: Set<string>): Promise<FastifyInstance> {
  const app = Fastify(
    extras.has('log')
      ? { logger: { level: 'info', stream: stdoutSink() }, logController: new LogController({ disableRequestLogging: true }) }
      : { logger: false },
  )
  if (extras.has('log')) await app.register(accessLogPlugin)
  if (extras.has('metrics')) await app.register(metricsPlugin)
  if (extras.has('rate-limit'))
    await app.register(rateLimit, {
      global: true,
      timeWindow: 60_000,
      max: 1e9,
      cache: 5_000,
      keyGenerator: (r) => r.headers.authorization ?? r.ip,
    })

  app.get<{ Querystring: { limit?: string; offset?: string } }>('/v1/wishlists/me', async (request, reply) => {
    const body = pageBody(await pageOwnerOf(request.headers), Number(request.query.limit ?? 50), Number(request.query.offset ?? 0))
    return reply.type('application/json; charset=utf-8').send(body)
  })

  tokenRoute(app, (keyId) => (shopOfKey.get(keyId) as { shop_id: string }).shop_id)

  app.get('/v1/analytics/overview', async (request) => {
    const { shopId } = await customerOf(request.headers.authorization)
    anyPending.get(shopId)
    const t = overviewSums.get(shopId, periodStart()) as { adds: number; removes: number; last_seen: number; converted: number }
    return {
      ok: true,
      data: {
        totalWishlistedItems: t.adds - t.removes,
        activeShoppers: t.last_seen,
        wishlistToCartRate: conversionRate(t.converted, t.adds),
      },
    }
  })

  app.get('/v1/admin/analytics/conversions', async (request) => {
    const { shopId } = await customerOf(request.headers.authorization)
    anyPending.get(shopId)
    const r = conversionsRow.get(shopId, periodStart()) as Record<string, number | null> & { lags: string | null; revenue: string | null }
    const lags = new LagCounts(310)
    unpackLagsInto(lags, r.lags)
    const revenue = (r.revenue?.split(',') ?? []).map((pair) => {
      const [currency = '', amount = '0'] = pair.split(':')
      return { currency, amount: BigInt(amount).toString() }
    })
    return {
      ok: true,
      data: {
        period: '30d',
        ordersInfluenced: r.orders ?? 0,
        linesInfluenced: r.lines ?? 0,
        revenueInfluenced: revenue,
        wishlistToPurchaseRate: conversionRate(r.purchased ?? 0, r.adds ?? 0),
        medianDaysToPurchase: medianDaysOf(lags),
        signalsInfluenced: { back_in_stock: r.back_in_stock ?? 0, price_dropped: r.price_dropped ?? 0, low_stock: r.low_stock ?? 0 },
      },
    }
  })

  app.post<{ Body: { product_id: string; variant_id?: string } }>('/v1/wishlists/me/items', async (request, reply) => {
    const { shopId, customerId } = await customerOf(request.headers.authorization)
    const { product_id: productId, variant_id: variantId = null } = request.body
    const at = Date.now()
    const result = await transaction(() => {
      ensureOwner.get(shopId, customerId, at, at)
      const created = insertItem.get(shopId, customerId, productId, variantId, at) !== undefined
      let count = 0
      if (created) {
        if (extras.has('statements')) {
          count = (adjustAndCount.get(1, at, shopId, customerId) as { n: number }).n
          outboxIfTaken.run(shopId, `floor_${++outboxIds}`, 'wishlist.item.added', JSON.stringify({ customerId, productId }), at)
        } else count = (adjustCount.get(1, at, shopId, customerId) as { item_count: number }).item_count
        recordFact.run(shopId, 'add', customerId, productId, at)
      }
      return { created, count }
    })
    const item = { productId, variantId, handle: null, metadata: null, addedAt: new Date(at).toISOString() }
    return reply.code(result.created ? 201 : 200).send({ ok: true, data: { created: result.created, item, count: result.count } })
  })

  app.delete<{ Params: { productId: string } }>('/v1/wishlists/me/items/:productId', async (request) => {
    const { shopId, customerId } = await customerOf(request.headers.authorization)
    const at = Date.now()
    const result = await transaction(() => {
      if (extras.has('statements')) lockOwner.get(shopId, customerId)
      const removed = deleteItem.get(shopId, customerId, request.params.productId) !== undefined
      let count = 0
      if (removed) {
        if (extras.has('statements')) {
          count = (adjustAndCount.get(-1, at, shopId, customerId) as { n: number }).n
          outboxIfTaken.run(
            shopId,
            `floor_${++outboxIds}`,
            'wishlist.item.removed',
            JSON.stringify({ customerId, productId: request.params.productId }),
            at,
          )
        } else count = (adjustCount.get(-1, at, shopId, customerId) as { item_count: number }).item_count
        recordFact.run(shopId, 'remove', customerId, request.params.productId, at)
      }
      return { removed, count }
    })
    return { ok: true, data: result }
  })
  return app
}

const concerns = (variant: string) => new Set(variant.split('+').filter((c) => c !== 'bare'))
const listen = (app: FastifyInstance) => app.listen({ port: 0, host: '127.0.0.1' })
const apps: FastifyInstance[] = []
if (process.env.BENCH_FLOOR_VARIANTS === undefined) {
  const app = await floorApp(concerns(process.env.BENCH_FLOOR_EXTRAS?.replaceAll(',', '+') ?? ''))
  apps.push(app)
  process.send?.({ listening: await listen(app) })
} else {
  // Several variants in this one process (bench --floor-concerns), so that the machine's
  // noise falls on all of them alike; `service` is the service itself (startServer()).
  const variants: Record<string, string> = {}
  for (const variant of process.env.BENCH_FLOOR_VARIANTS.split(',')) {
    if (variant === 'ceiling') {
      // The ceiling (bench/http/ceiling-server.ts) in this process: the page's bytes as a string, built once.
      const app = Fastify({ logger: false })
      let page: string | undefined
      app.get('/*', async (request, reply) => {
        page ??= pageBody(await pageOwnerOf(request.headers), 50, 0).toString()
        return reply.header('content-type', 'application/json; charset=utf-8').send(page)
      })
      apps.push(app)
      variants[variant] = await listen(app)
    } else if (variant === 'service') {
      const { loadConfig } = await shipped<typeof import('../../src/config.js')>('config.js')
      const { startServer } = await shipped<typeof import('../../src/server.js')>('server.js')
      const server = await startServer(loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', WEBHOOK_WORKER: 'off' }))
      apps.push(server.app)
      variants[variant] = server.address
    } else {
      const app = await floorApp(concerns(variant))
      apps.push(app)
      variants[variant] = await listen(app)
    }
  }
  process.send?.({ listening: Object.values(variants)[0], variants })
}
const stop = () => {
  void Promise.all(apps.map((app) => app.close())).then(() => process.exit(0))
}
process.on('SIGTERM', stop)
// The bench that started it has ended, however (its IPC channel closed): stop with it.
process.on('disconnect', stop)
