/**
 * Synthetic activity for demos and benchmarks (`npm run seed:analytics -- --events N`).
 * `generateActivity` simulates a year of a shop's wishlist traffic; `RollupFold` applies the
 * facts applier's rules (facts.ts) to it in memory (a million facts through the inbox would
 * take minutes) and `seedAnalytics` bulk-inserts the log, the rollups and the resulting
 * items (db/bulk-insert.ts: loading machinery for any table, not a module's queries). A
 * test requires both paths to build identical tables.
 */
import type { Insertable } from 'kysely'
import { bulkInsert } from '../db/bulk-insert.js'
import type { Db } from '../db/types.js'
import type { AnalyticsFactType, Database, OwnerType } from '../db/schema.js'
import { DAY_MS } from '../lib/time.js'
import { dayOf } from '../modules/analytics/analytics.periods.js'
import type { DailyDelta } from '../modules/analytics/facts.repo.js'
import { LAG_UNIT_MS } from '../modules/analytics/conversions.js'
import { packLags } from '../modules/analytics/purchase-lags.js'
import { lineMinorUnits, splitAmount, toMicros } from '../lib/money.js'

export interface SeedEvent {
  type: AnalyticsFactType
  ownerType: OwnerType
  ownerId: string
  /** '' for share. */
  productId: string
  at: number
  /** The list an add or remove touches. */
  list: string
}

export interface ActivityOptions {
  events: number
  /** Days of history ending today (default 365). */
  days?: number
  now: number
  seed?: number
  /** Orders of customers who hold a product (default: events ÷ 10), with their attribution rollups. */
  orders?: number
}

/** mulberry32: small, fast, deterministic. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

const ITEM_LIMIT = 2_500

/** A set with O(1) random pick and removal. */
class Bag {
  readonly items: string[] = []
  private readonly pos = new Map<string, number>()
  has = (p: string): boolean => this.pos.has(p)
  get size(): number {
    return this.items.length
  }
  add(p: string): void {
    this.pos.set(p, this.items.length)
    this.items.push(p)
  }
  delete(p: string): void {
    const i = this.pos.get(p) as number
    const last = this.items.pop() as string
    this.pos.delete(p)
    if (last !== p) {
      this.items[i] = last
      this.pos.set(last, i)
    }
  }
  pick = (r: number): string => this.items[Math.floor(r * this.items.length)] as string
}

interface SimOwner {
  type: OwnerType
  id: string
  lists: string[]
  /** list → products */
  items: Map<string, Bag>
  count: number
}

/** Yields the events one day at a time, oldest day first, times ascending, none after `now`. */
export function* generateActivity(opts: ActivityOptions): Generator<SeedEvent[]> {
  const rand = prng(opts.seed ?? 42)
  const days = opts.days ?? 365
  const today = dayOf(opts.now)
  const ownerCount = Math.max(10, Math.round(opts.events / 25))
  const productCount = Math.max(20, Math.round(opts.events / 200))
  const owners: SimOwner[] = []
  for (let i = 0; i < ownerCount; i++) {
    const guest = rand() < 0.3
    const id = guest ? `g_seed_${i.toString(36).padStart(6, '0')}` : String(7_000_000 + i)
    const lists = ['default']
    if (!guest && rand() < 0.25) lists.push(`wl_seed${i.toString(36)}`)
    owners.push({ type: guest ? 'guest' : 'customer', id, lists, items: new Map(lists.map((l) => [l, new Bag()])), count: 0 })
  }
  const product = () => String(100_000 + Math.floor(productCount * rand() ** 2.5))
  const pickOwner = () => owners[Math.floor(ownerCount * rand() ** 1.8)] as SimOwner

  // Events per day: growth over the year, busier weekends, some noise; largest remainders.
  const weights: number[] = []
  for (let i = 0; i < days; i++) {
    const day = today - (days - 1) + i
    const weekday = new Date(day * DAY_MS).getUTCDay()
    const w = (1 + (0.8 * i) / days) * (weekday === 0 || weekday === 6 ? 1.3 : 1) * (0.8 + 0.4 * rand())
    weights.push(i === days - 1 ? w * ((opts.now - today * DAY_MS) / DAY_MS) : w)
  }
  const sum = weights.reduce((a, b) => a + b, 0)
  const exact = weights.map((w) => (w / sum) * opts.events)
  const counts = exact.map(Math.floor)
  let left = opts.events - counts.reduce((a, b) => a + b, 0)
  const order = exact.map((e, i) => [e - Math.floor(e), i] as const).sort((a, b) => b[0] - a[0])
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) counts[(order[k] as readonly [number, number])[1]]!++

  for (let i = 0; i < days; i++) {
    const day = today - (days - 1) + i
    const from = day * DAY_MS
    const span = Math.max(1, Math.min(DAY_MS, opts.now - from + 1))
    const n = counts[i] as number
    const times = Array.from({ length: n }, () => from + Math.floor(rand() * span)).sort((a, b) => a - b)
    const out: SeedEvent[] = []
    for (const at of times) out.push(nextEvent(pickOwner(), at))
    yield out
  }

  function nextEvent(o: SimOwner, at: number): SeedEvent {
    const base = { ownerType: o.type, ownerId: o.id, at }
    const r = rand()
    if ((r < 0.55 || o.count === 0) && o.count < ITEM_LIMIT) {
      const list = o.lists.length > 1 && rand() < 0.3 ? (o.lists[1] as string) : 'default'
      const held = o.items.get(list) as Bag
      const inDefault = o.items.get('default') as Bag
      for (let tries = 0; tries < 4; tries++) {
        // Some products go into a second list too: one owner, one holder.
        const p = list !== 'default' && inDefault.size > 0 && rand() < 0.5 ? inDefault.pick(rand()) : product()
        if (held.has(p)) continue
        held.add(p)
        o.count++
        return { ...base, type: 'add', productId: p, list }
      }
      return { ...base, type: 'cart_add', productId: product(), list: 'default' }
    }
    if (r < 0.75 && o.count > 0) {
      for (const [list, held] of o.items) {
        if (held.size === 0) continue
        const p = held.pick(rand())
        held.delete(p)
        o.count--
        return { ...base, type: 'remove', productId: p, list }
      }
    }
    if (r < 0.95) {
      const held = o.items.get('default') as Bag
      let p = product()
      if (held.size > 0 && rand() < 0.7) p = held.pick(rand())
      return { ...base, type: 'cart_add', productId: p, list: 'default' }
    }
    return { ...base, type: 'share', productId: '', list: 'default' }
  }
}

/** The rules of the facts applier (facts.ts), applied in memory to a whole stream of facts. */
export class RollupFold {
  readonly daily = new Map<number, DailyDelta>()
  readonly seen = new Set<string>()
  readonly lastDay = new Map<string, number>()
  /** owner\tproduct → lists holding it */
  readonly items = new Map<string, Set<string>>()
  readonly holders = new Map<string, number>()
  /** owner\tproduct → adds not yet cart-added: added_at → {day, count} */
  readonly pending = new Map<string, Map<number, { day: number; count: number }>>()

  private delta(day: number): DailyDelta {
    let d = this.daily.get(day)
    if (!d) {
      d = { adds: 0, removes: 0, shoppers: 0, last_seen: 0, converted: 0 }
      this.daily.set(day, d)
    }
    return d
  }

  apply(e: SeedEvent): void {
    const day = dayOf(e.at)
    const owner = `${e.ownerType}\t${e.ownerId}`
    const key = `${owner}\t${e.productId}`
    if (e.type === 'add') {
      this.delta(day).adds++
      let p = this.pending.get(key)
      if (!p) this.pending.set(key, (p = new Map()))
      const entry = p.get(e.at)
      if (entry) entry.count++
      else p.set(e.at, { day, count: 1 })
      let lists = this.items.get(key)
      if (!lists) this.items.set(key, (lists = new Set()))
      if (lists.size === 0) this.holders.set(e.productId, (this.holders.get(e.productId) ?? 0) + 1)
      lists.add(e.list)
    } else if (e.type === 'remove') {
      this.delta(day).removes++
      const lists = this.items.get(key)
      if (lists?.delete(e.list) && lists.size === 0) {
        this.holders.set(e.productId, (this.holders.get(e.productId) ?? 0) - 1)
        this.items.delete(key)
      }
    } else if (e.type === 'cart_add') {
      const p = this.pending.get(key)
      if (p) {
        for (const [at, entry] of p) {
          if (at > e.at) continue
          this.delta(entry.day).converted += entry.count
          p.delete(at)
        }
        if (p.size === 0) this.pending.delete(key)
      }
    }
    // A cart add credits its add's day (above) and makes no row of its own day, as recordFacts.
    if (e.type !== 'cart_add') {
      const s = `${owner}\t${day}`
      if (!this.seen.has(s)) {
        this.seen.add(s)
        this.delta(day).shoppers++
      }
      if ((this.lastDay.get(owner) ?? Number.NEGATIVE_INFINITY) < day) this.lastDay.set(owner, day)
    }
  }

  /** Daily rows with `last_seen` filled in from the owners' last days. */
  dailyRows(): { day: number; delta: DailyDelta }[] {
    const rows = new Map([...this.daily].map(([day, d]) => [day, { ...d, last_seen: 0 }]))
    for (const day of this.lastDay.values()) (rows.get(day) as DailyDelta).last_seen++
    return [...rows].sort((a, b) => a[0] - b[0]).map(([day, delta]) => ({ day, delta }))
  }
}

const split = (key: string) => key.split('\t') as [OwnerType, string, string]

type Tables = { [K in keyof Database]: Insertable<Database[K]> }

/** `bulkInsert`, timed on stderr when SEED_DEBUG is set. */
async function load<T extends keyof Database & string>(db: Db, table: T, rows: Tables[T][]): Promise<void> {
  const t0 = Date.now()
  await bulkInsert(db, table, rows)
  if (process.env.SEED_DEBUG) process.stderr.write(`${table}: ${rows.length} rows in ${Date.now() - t0} ms\n`)
}

export interface SeedResult {
  events: number
  orders: number
  owners: number
  items: number
  days: number
  ms: number
}

/**
 * Fills `shopId` with `events` facts of simulated activity (the year ending at `now`),
 * their rollups and the wishlist items they leave behind. For an empty shop: it does not
 * merge with what a shop already holds.
 */
export async function seedAnalytics(db: Db, shopId: string, opts: ActivityOptions): Promise<SeedResult> {
  const started = Date.now()
  const fold = new RollupFold()
  const lastAdded = new Map<string, number>()
  let buffer: Tables['analytics_events'][] = []
  let written = 0
  let items = 0
  let orders = 0
  await db.transaction().execute(async (trx) => {
    const flush = async () => {
      await load(trx, 'analytics_events', buffer)
      written += buffer.length
      buffer = []
    }
    for (const dayEvents of generateActivity(opts)) {
      for (const e of dayEvents) {
        fold.apply(e)
        if (e.type === 'add') lastAdded.set(`${e.ownerType}\t${e.ownerId}\t${e.list}\t${e.productId}`, e.at)
        buffer.push({
          shop_id: shopId,
          type: e.type,
          owner_type: e.ownerType,
          owner_id: e.ownerId,
          product_id: e.productId,
          occurred_at: e.at,
        })
      }
      if (buffer.length >= 20_000) await flush()
    }
    await flush()

    const itemRows: Tables['wishlist_items'][] = []
    const holdings: Tables['analytics_holdings'][] = []
    const perOwner = new Map<string, number>()
    const lists = new Set<string>()
    for (const [key, held] of fold.items) {
      const [owner_type, owner_id, product_id] = split(key)
      holdings.push({ shop_id: shopId, owner_type, owner_id, product_id })
      for (const list_id of held) {
        const added_at = lastAdded.get(`${owner_type}\t${owner_id}\t${list_id}\t${product_id}`) as number
        itemRows.push({
          shop_id: shopId,
          owner_type,
          owner_id,
          list_id,
          product_id,
          variant_id: null,
          handle: null,
          metadata: null,
          added_at,
        })
        perOwner.set(`${owner_type}\t${owner_id}`, (perOwner.get(`${owner_type}\t${owner_id}`) ?? 0) + 1)
        if (list_id !== 'default') lists.add(`${owner_type}\t${owner_id}\t${list_id}`)
      }
    }
    // Orders mark the items they buy, and add their counters to the days' rows: both are written after them.
    const sales = seedOrders(shopId, itemRows, opts)
    orders = sales.orders.length
    const daily: Tables['analytics_daily'][] = fold
      .dailyRows()
      .map(({ day, delta }) => ({ shop_id: shopId, day, ...delta, ...(sales.days.get(day) ?? NO_ORDERS) }))
    for (const [day, d] of sales.days)
      if (!fold.daily.has(day)) daily.push({ shop_id: shopId, day, adds: 0, removes: 0, shoppers: 0, last_seen: 0, converted: 0, ...d })
    await load(trx, 'analytics_daily', daily)
    await load(
      trx,
      'analytics_shopper_days',
      [...fold.seen].map((s) => {
        const [owner_type, owner_id, day] = split(s)
        return { shop_id: shopId, day: Number(day), owner_type, owner_id }
      }),
    )
    await load(
      trx,
      'analytics_shoppers',
      [...fold.lastDay].map(([o, last_day]) => {
        const [owner_type, owner_id] = split(o)
        return { shop_id: shopId, owner_type, owner_id, last_day }
      }),
    )
    await load(trx, 'analytics_holdings', holdings)
    await load(
      trx,
      'analytics_product_holders',
      [...fold.holders].filter(([, n]) => n > 0).map(([product_id, holders]) => ({ shop_id: shopId, product_id, holders })),
    )
    const pending: Tables['analytics_pending_adds'][] = []
    for (const [key, entries] of fold.pending) {
      const [owner_type, owner_id, product_id] = split(key)
      for (const [added_at, { day, count }] of entries)
        pending.push({ shop_id: shopId, owner_type, owner_id, product_id, added_at, day, count })
    }
    await load(trx, 'analytics_pending_adds', pending)
    await load(trx, 'orders', sales.orders)
    await load(trx, 'analytics_revenue_daily', sales.revenue)
    await load(trx, 'analytics_product_revenue', sales.products)
    await load(trx, 'analytics_currencies', sales.currencies)
    await load(trx, 'analytics_purchase_lag_totals', sales.lagTotals)
    await load(trx, 'wishlist_items', itemRows)
    const at = opts.now
    await load(
      trx,
      'wishlist_owners',
      [...perOwner].map(([o, item_count]) => {
        const [owner_type, owner_id] = split(o)
        return { shop_id: shopId, owner_type, owner_id, item_count, created_at: at, updated_at: at }
      }),
    )
    await load(
      trx,
      'wishlist_lists',
      [...lists].map((l) => {
        const [owner_type, owner_id, id] = split(l)
        return { shop_id: shopId, owner_type, owner_id, id, name: 'Gift ideas', name_key: 'gift ideas', created_at: at, updated_at: at }
      }),
    )
    items = itemRows.length
  })
  return { events: written, orders, owners: fold.lastDay.size, items, days: opts.days ?? 365, ms: Date.now() - started }
}

/** Currencies of the seeded orders, by share: EUR 70 %, USD 25 %, JPY 5 %. */
const SEED_CURRENCIES: [string, number, string][] = [
  ['EUR', 0.7, '19.99'],
  ['USD', 0.95, '24.50'],
  ['JPY', 1, '2500'],
]

/** What orders add to a day's rollup row. */
type OrderDay = Pick<Tables['analytics_daily'], 'orders_influenced' | 'lines_influenced' | 'purchased' | 'purchase_lags'>
const NO_ORDERS: OrderDay = { orders_influenced: 0, lines_influenced: 0, purchased: 0, purchase_lags: null }

/**
 * `opts.orders` orders (default events ÷ 10): each buys one item a customer holds (its first
 * purchase marks the item `purchased_at`), 0 to 30 days after its add and never after `now`,
 * plus up to two lines of products nobody wishlisted; prices and currencies from a fixed
 * table. Returns the `orders` rows and the attribution rollups the events intake keeps
 * (analytics/conversions.ts), with the same arithmetic: a synthetic history for the
 * conversions read, not a replay of the intake (signals and releases are not simulated).
 */
function seedOrders(shopId: string, itemRows: Tables['wishlist_items'][], opts: ActivityOptions) {
  const held = itemRows.filter((r) => r.owner_type === 'customer')
  const count = held.length === 0 ? 0 : (opts.orders ?? Math.round(opts.events / 10))
  const daily = new Map<number, { orders_influenced: number; lines_influenced: number; purchased: number }>()
  /** Per add day: lag (tenths of a day) → items, packed into the day's row as the intake keeps it. */
  const lags = new Map<number, Map<number, number>>()
  const revenue = new Map<string, bigint>()
  const products = new Map<string, { purchases: number; amount: bigint }>()
  const currencies = new Map<string, number>()
  const orders: Tables['orders'][] = []
  const dayRow = (day: number) => {
    let d = daily.get(day)
    if (!d) daily.set(day, (d = { orders_influenced: 0, lines_influenced: 0, purchased: 0 }))
    return d
  }
  const rand = prng((opts.seed ?? 42) + 1)
  for (let i = 0; i < count; i++) {
    const item = held[Math.floor(rand() * held.length)] as Tables['wishlist_items']
    const at = Math.min(opts.now, item.added_at + Math.floor(rand() * 30 * DAY_MS))
    const [currency, , price] = SEED_CURRENCIES.find(([, share]) => rand() <= share) ?? (SEED_CURRENCIES[0] as [string, number, string])
    const quantity = 1 + Math.floor(rand() * 3)
    const amount = lineMinorUnits(toMicros(price), quantity, currency)
    const day = dayOf(at)
    const d = dayRow(day)
    d.orders_influenced++
    d.lines_influenced++
    revenue.set(`${day}\t${currency}`, (revenue.get(`${day}\t${currency}`) ?? 0n) + amount)
    currencies.set(currency, (currencies.get(currency) ?? 0) + 1)
    const p = products.get(`${item.product_id}\t${currency}`) ?? { purchases: 0, amount: 0n }
    p.purchases++
    p.amount += amount
    products.set(`${item.product_id}\t${currency}`, p)
    if (item.purchased_at === undefined || item.purchased_at === null) {
      item.purchased_at = at
      const addDay = dayOf(item.added_at)
      dayRow(addDay).purchased++
      const lag = Math.max(0, Math.round((at - item.added_at) / LAG_UNIT_MS))
      let histogram = lags.get(addDay)
      if (!histogram) lags.set(addDay, (histogram = new Map()))
      histogram.set(lag, (histogram.get(lag) ?? 0) + 1)
    }
    orders.push({ shop_id: shopId, order_id: String(9_000_000_000 + i), occurred_at: at, created_at: opts.now })
  }
  /** Every day's histogram summed: the shop's whole-history one. */
  const totals = new Map<number, number>()
  for (const histogram of lags.values()) for (const [lag, n] of histogram) totals.set(lag, (totals.get(lag) ?? 0) + n)
  const packed = (day: number) => {
    const histogram = lags.get(day)
    return histogram ? packLags(histogram) : null
  }
  return {
    orders,
    days: new Map<number, OrderDay>([...daily].map(([day, d]) => [day, { ...d, purchase_lags: packed(day) }])),
    revenue: [...revenue].map(([k, amount]): Tables['analytics_revenue_daily'] => {
      const [day, currency] = k.split('\t') as [string, string]
      return { shop_id: shopId, day: Number(day), currency, ...splitAmount(amount) }
    }),
    products: [...products].map(([k, p]): Tables['analytics_product_revenue'] => {
      const [product_id, currency] = k.split('\t') as [string, string]
      return { shop_id: shopId, product_id, currency, purchases: p.purchases, ...splitAmount(p.amount) }
    }),
    currencies: [...currencies].map(([currency, lines]): Tables['analytics_currencies'] => ({ shop_id: shopId, currency, lines })),
    lagTotals: [...totals].map(([lag, count]): Tables['analytics_purchase_lag_totals'] => ({ shop_id: shopId, lag, count })),
  }
}
