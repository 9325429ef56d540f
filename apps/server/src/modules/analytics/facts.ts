/**
 * Analytics facts (DECISIONS §8): append-only, written in the same transaction as the
 * wishlist change they describe. Wishlist operations, merge, import, list deletion and the
 * events intake (cart adds) all record through this one function, so whatever the
 * analytics module maintains beside the log is updated here, inside that same transaction:
 *
 * - `analytics_daily` per (shop, UTC day): adds, removes, distinct shoppers of the day,
 *   `last_seen` (owners whose latest wishlist event is that day) and `converted` (adds of
 *   that day later cart-added by the same owner);
 * - `analytics_shopper_days`: the (day, owner) seen set behind the daily shopper count;
 * - `analytics_shoppers`: each owner's last wishlist-event day, behind `last_seen`;
 * - `analytics_holdings` + `analytics_product_holders`: distinct owners now holding a product;
 * - `analytics_pending_adds`: adds not yet followed by a cart add of the same product.
 *
 * Wishlist events are add, remove and share; a cart add is not one (it only converts adds).
 * A fact stamped later than the server clock is recorded at the server's "now": analytics
 * never holds a day after today, which is what keeps `activeShoppers` exact (see
 * docs/architecture.md, "Analytics").
 *
 * Callers: record one `add` per list insert and one `remove` per list removal, after the
 * write or before it. Give `listId` on removes so the holder count knows which list the
 * item left; without it, record the remove after the delete. Code that deletes items
 * without recording removes (customer erasure) calls `syncHoldings` afterwards.
 */
import type { Insertable, Transaction } from 'kysely'
import { rowsStatement } from '../../db/precompiled.js'
import type { AnalyticsFactType, Database, OwnerType } from '../../db/schema.js'
import { now } from '../../lib/time.js'
import { dayOf } from './analytics.periods.js'
import { type DailyDelta, type Owner, type PendingAdd, type RollupWriter, rollupWriter } from './analytics.repo.js'

export interface AnalyticsFact {
  type: AnalyticsFactType
  ownerType: OwnerType
  ownerId: string
  productId: string
  occurredAt: number
  /** For `remove`: the list the item left (makes the holder count independent of write order). */
  listId?: string
}

const isWishlistEvent = (type: AnalyticsFactType): boolean => type !== 'cart_add'
const ownerKey = (o: Owner): string => `${o.type}:${o.id}`
const seenKey = (o: Owner, day: number): string => `${ownerKey(o)}@${day}`

function deltaOf(map: Map<number, DailyDelta>, day: number): DailyDelta {
  let d = map.get(day)
  if (!d) {
    d = { adds: 0, removes: 0, shoppers: 0, last_seen: 0, converted: 0 }
    map.set(day, d)
  }
  return d
}

function bump(map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by)
}

const insertEvents = rowsStatement(['shop_id', 'type', 'owner_type', 'owner_id', 'product_id', 'occurred_at'], (db, rows: Insertable<Database['analytics_events']>[]) =>
  db.insertInto('analytics_events').values(rows),
)

export async function recordFacts(trx: Transaction<Database>, shopId: string, facts: AnalyticsFact[]): Promise<void> {
  if (facts.length === 0) return
  const clock = now()
  const at = facts.map((f) => Math.min(f.occurredAt, clock))
  await insertEvents(
    trx,
    facts.map((f, i) => ({ shop_id: shopId, type: f.type, owner_type: f.ownerType, owner_id: f.ownerId, product_id: f.productId, occurred_at: at[i] as number })),
  )

  const w = rollupWriter(trx, shopId)
  const daily = new Map<number, DailyDelta>()
  const holders = new Map<string, number>()
  // Adds are applied in batches (one multi-row statement per table), flushed before any
  // remove or cart add so that facts still take effect in their order.
  const adds: PendingAdd[] = []
  const flushAdds = async () => {
    if (adds.length === 0) return
    await w.addPending(adds)
    for (const productId of await w.holdAll(adds)) bump(holders, productId, 1)
    adds.length = 0
  }
  // (owner, day) of every wishlist event, and per owner the latest such day.
  const seen = new Map<string, { owner: Owner; day: number }>()
  const lastDay = new Map<string, { owner: Owner; day: number }>()

  for (const [i, f] of facts.entries()) {
    const t = at[i] as number
    const day = dayOf(t)
    const owner: Owner = { type: f.ownerType, id: f.ownerId }
    const delta = deltaOf(daily, day) // every fact's day gets a row: `all` starts at the first one
    if (f.type === 'add') {
      delta.adds++
      adds.push({ owner, productId: f.productId, addedAt: t, day })
    } else {
      await flushAdds()
      if (f.type === 'remove') {
        delta.removes++
        if (!(await w.holdsInLists(owner, f.productId, f.listId)) && (await w.release(owner, f.productId))) {
          bump(holders, f.productId, -1)
        }
      } else if (f.type === 'cart_add') {
        for (const p of await w.convertPending(owner, f.productId, t)) deltaOf(daily, p.day).converted += p.count
      }
    }
    if (isWishlistEvent(f.type)) {
      seen.set(seenKey(owner, day), { owner, day })
      const prev = lastDay.get(ownerKey(owner))
      if (!prev || prev.day < day) lastDay.set(ownerKey(owner), { owner, day })
    }
  }
  await flushAdds()

  const newlySeen = await w.markAllSeen([...seen.values()], seenKey)
  for (const [key, { day }] of seen) if (newlySeen.has(key)) deltaOf(daily, day).shoppers++

  // Owners in key order, so concurrent writers lock `analytics_shoppers` rows in one order.
  // An owner whose latest day here was already in the seen set had an event that day, so its
  // last active day is at least that day and cannot move (no lookup needed).
  for (const [, { owner, day }] of [...lastDay.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (!newlySeen.has(seenKey(owner, day))) continue
    const moved = await w.advanceLastDay(owner, day)
    if (!moved) continue
    if (moved.from !== null) deltaOf(daily, moved.from).last_seen--
    deltaOf(daily, day).last_seen++
  }

  await w.addDaily(daily)
  await w.addHolders(holders)
}

/**
 * Brings the holder counts of one owner in line with what its lists hold now. For code that
 * deletes items without recording `remove` facts (customer erasure, DECISIONS §14); call it
 * in the same transaction, after the delete.
 */
export async function syncHoldings(trx: Transaction<Database>, shopId: string, ownerType: OwnerType, ownerId: string): Promise<void> {
  const w: RollupWriter = rollupWriter(trx, shopId)
  const owner: Owner = { type: ownerType, id: ownerId }
  const held = new Set(await w.heldProducts(owner))
  const listed = new Set(await w.listedProducts(owner))
  const holders = new Map<string, number>()
  for (const p of listed) if (!held.has(p) && (await w.hold(owner, p))) bump(holders, p, 1)
  for (const p of held) if (!listed.has(p) && (await w.release(owner, p))) bump(holders, p, -1)
  await w.addHolders(holders)
}
