/**
 * Exactness against brute force: a generated stream of facts goes through recordFacts (one
 * transaction per fact, with its wishlist_items write, each applied at once) into one shop,
 * through the seed's batch path into another, and through recordFacts applied in larger
 * batches into two more. Every read model must be identical in all, and every endpoint
 * must equal what a scan of the raw stream computes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/types.js'
import { conversionRate, dayOf, formatDay, PERIODS, windowStart } from '../../src/modules/analytics/analytics.periods.js'
import { generateActivity, type SeedEvent, seedAnalytics } from '../../src/cli/analytics-seed.js'
import { applyPendingFacts } from '../../src/modules/analytics/facts.js'
import { applySteps } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let live: TestShop
let seeded: TestShop
let batched: TestShop
let deferred: TestShop
const now = Date.now()

/**
 * Whether a stream exercises every rule of the read models: all four fact types, a named
 * list, one product held in two lists at once, a wishlisted product later carted, a guest.
 */
function exercisesEveryRule(events: SeedEvent[]): boolean {
  const types = new Set(events.map((e) => e.type))
  const lists = new Map<string, number>()
  let double = false
  for (const e of events) {
    const k = `${e.ownerType}:${e.ownerId}:${e.productId}`
    if (e.type === 'add') lists.set(k, (lists.get(k) ?? 0) + 1)
    if (e.type === 'remove') lists.set(k, (lists.get(k) ?? 0) - 1)
    if ((lists.get(k) ?? 0) > 1) double = true
  }
  const carted = events.some(
    (e, i) =>
      e.type === 'add' &&
      events.some(
        (c, j) => j > i && c.type === 'cart_add' && c.ownerType === e.ownerType && c.ownerId === e.ownerId && c.productId === e.productId,
      ),
  )
  return (
    [...types].sort().join() === 'add,cart_add,remove,share' &&
    events.some((e) => e.list !== 'default') &&
    double &&
    carted &&
    events.some((e) => e.ownerType === 'guest')
  )
}

// The generated stream depends on the day it is generated for (weekdays, the time of day),
// so the first seed from 7 whose stream exercises every rule is taken.
const generated = (seed: number) => {
  const opts = { events: 250, days: 30, now, seed }
  return { opts, stream: [...generateActivity(opts)].flat() }
}
let chosen = generated(7)
for (let seed = 8; seed < 64 && !exercisesEveryRule(chosen.stream); seed++) chosen = generated(seed)
const { opts, stream } = chosen

beforeAll(async () => {
  t = await createTestApp()
  live = await t.createShop('growth')
  seeded = await t.createShop('growth')
  batched = await t.createShop('growth')
  deferred = await t.createShop('growth')
  const db = t.storage.db
  const steps = stream.map((e) => ({
    type: e.type,
    owner: { type: e.ownerType, id: e.ownerId },
    productId: e.productId,
    at: e.at,
    list: e.list,
  }))
  for (const step of steps) {
    await applySteps(db, live.id, [step])
    expect(await applyPendingFacts(db, live.id)).toBe(1)
  }
  // Several facts per recordFacts call, as merge, import and list deletion record them,
  // applied three calls at a time.
  for (let i = 0; i < steps.length; i += 9) {
    await applySteps(db, batched.id, steps.slice(i, i + 9))
    if (i % 27 === 18) await applyPendingFacts(db, batched.id)
  }
  await applyPendingFacts(db, batched.id)
  // One fact per transaction, all applied in one batch: the lists have moved on by then.
  for (const step of steps) await applySteps(db, deferred.id, [step])
  expect(await applyPendingFacts(db, deferred.id)).toBe(steps.length)
  // Orders are not facts: the seeded shop gets none, so its tables compare with the fact paths.
  await seedAnalytics(t.storage.db, seeded.id, { ...opts, orders: 0 })
})
afterAll(() => t.close())

async function readModels(db: Db, shopId: string) {
  return {
    daily: await db
      .selectFrom('analytics_daily')
      .select(['day', 'adds', 'removes', 'shoppers', 'last_seen', 'converted'])
      .where('shop_id', '=', shopId)
      .orderBy('day')
      .execute(),
    shopperDays: await db
      .selectFrom('analytics_shopper_days')
      .select(['day', 'owner_type', 'owner_id'])
      .where('shop_id', '=', shopId)
      .orderBy('day')
      .orderBy('owner_type')
      .orderBy('owner_id')
      .execute(),
    shoppers: await db
      .selectFrom('analytics_shoppers')
      .select(['owner_type', 'owner_id', 'last_day'])
      .where('shop_id', '=', shopId)
      .orderBy('owner_type')
      .orderBy('owner_id')
      .execute(),
    holdings: await db
      .selectFrom('analytics_holdings')
      .select(['owner_type', 'owner_id', 'product_id'])
      .where('shop_id', '=', shopId)
      .orderBy('owner_type')
      .orderBy('owner_id')
      .orderBy('product_id')
      .execute(),
    holders: await db
      .selectFrom('analytics_product_holders')
      .select(['product_id', 'holders'])
      .where('shop_id', '=', shopId)
      .where('holders', '>', 0)
      .orderBy('product_id')
      .execute(),
    pending: await db
      .selectFrom('analytics_pending_adds')
      .select(['owner_type', 'owner_id', 'product_id', 'added_at', 'day', 'count'])
      .where('shop_id', '=', shopId)
      .orderBy('owner_type')
      .orderBy('owner_id')
      .orderBy('product_id')
      .orderBy('added_at')
      .execute(),
    items: await db
      .selectFrom('wishlist_items')
      .select(['owner_type', 'owner_id', 'list_id', 'product_id'])
      .where('shop_id', '=', shopId)
      .orderBy('owner_type')
      .orderBy('owner_id')
      .orderBy('list_id')
      .orderBy('product_id')
      .execute(),
    events: await db
      .selectFrom('analytics_events')
      .select(['type', 'owner_type', 'owner_id', 'product_id', 'occurred_at'])
      .where('shop_id', '=', shopId)
      .orderBy('id')
      .execute(),
  }
}

function bruteOverview(period: (typeof PERIODS)[number]) {
  const today = dayOf(now)
  const from = windowStart(period, today, dayOf(stream[0]!.at)) as number
  let adds = 0
  let removes = 0
  let converted = 0
  const active = new Set<string>()
  stream.forEach((e, i) => {
    if (dayOf(e.at) < from) return
    const owner = `${e.ownerType}:${e.ownerId}`
    if (e.type !== 'cart_add') active.add(owner)
    if (e.type === 'remove') removes++
    if (e.type === 'add') {
      adds++
      if (
        stream.some(
          (c, j) => j > i && c.type === 'cart_add' && c.ownerType === e.ownerType && c.ownerId === e.ownerId && c.productId === e.productId,
        )
      )
        converted++
    }
  })
  return { totalWishlistedItems: adds - removes, activeShoppers: active.size, wishlistToCartRate: conversionRate(converted, adds) }
}

describe('analytics read models', () => {
  it('the stream exercises every rule', () => {
    expect(exercisesEveryRule(stream)).toBe(true)
    expect(bruteOverview('all').wishlistToCartRate).toBeGreaterThan(0)
  })

  it('recordFacts and the seed batch path build identical tables', async () => {
    const a = await readModels(t.storage.db, live.id)
    const b = await readModels(t.storage.db, seeded.id)
    expect(a.events).toHaveLength(250)
    expect(b).toEqual(a)
  })

  it('recording several facts per call, or applying many at once, builds the same tables as one at a time', async () => {
    const a = await readModels(t.storage.db, live.id)
    expect(await readModels(t.storage.db, batched.id)).toEqual(a)
    expect(await readModels(t.storage.db, deferred.id)).toEqual(a)
    expect(await t.storage.db.selectFrom('analytics_inbox').select('id').execute()).toEqual([])
  })

  it('overview equals a scan of the raw stream for every period', async () => {
    for (const shop of [live, seeded]) {
      const token = await shop.adminToken()
      for (const period of PERIODS) {
        const res = await t.call('GET', `/v1/analytics/overview?period=${period}`, { token })
        expect(res.body.data, period).toEqual(bruteOverview(period))
      }
    }
  })

  it('daily equals a scan of the raw stream', async () => {
    const token = await live.adminToken()
    const { days } = (await t.call('GET', '/v1/analytics/daily?period=all', { token })).body.data
    const first = dayOf(stream[0]!.at)
    const expected = []
    let cumulative = 0
    for (let day = first; day <= dayOf(now); day++) {
      const of = stream.filter((e) => dayOf(e.at) === day)
      const added = of.filter((e) => e.type === 'add').length
      const removed = of.filter((e) => e.type === 'remove').length
      cumulative += added - removed
      const shoppers = new Set(of.filter((e) => e.type !== 'cart_add').map((e) => `${e.ownerType}:${e.ownerId}`)).size
      expected.push({
        date: formatDay(day),
        period: formatDay(day),
        items_added: added,
        items_removed: removed,
        unique_shoppers: shoppers,
        cumulative_total: cumulative,
        orders_influenced: 0,
      })
    }
    expect(days).toEqual(expected)
    const week = (await t.call('GET', '/v1/analytics/daily?period=7d', { token })).body.data.days
    expect(week).toEqual(expected.slice(-7))
  })

  it('top products equal a count of distinct holders in wishlist_items', async () => {
    const rows = await t.storage.db
      .selectFrom('wishlist_items')
      .select(['owner_type', 'owner_id', 'product_id'])
      .where('shop_id', '=', live.id)
      .execute()
    const holders = new Map<string, Set<string>>()
    for (const r of rows) {
      if (!holders.has(r.product_id)) holders.set(r.product_id, new Set())
      holders.get(r.product_id)!.add(`${r.owner_type}:${r.owner_id}`)
    }
    const expected = [...holders]
      .map(([productId, s]) => ({ productId, wishlistCount: s.size, purchases: 0, revenue: [], title: null, handle: null }))
      .sort((x, y) => y.wishlistCount - x.wishlistCount || (x.productId < y.productId ? -1 : 1))
      .slice(0, 100)
    expect(expected.some((e, i) => i > 0 && e.wishlistCount === expected[i - 1]!.wishlistCount)).toBe(true)
    for (const shop of [live, seeded]) {
      const token = await shop.adminToken()
      expect((await t.call('GET', '/v1/analytics/top-products?limit=100', { token })).body.data.products).toEqual(expected)
      const top = expected[0]!
      expect((await t.call('GET', `/v1/analytics/product/${top.productId}`, { token })).body.data.wishlistCount).toBe(top.wishlistCount)
    }
  })
})
