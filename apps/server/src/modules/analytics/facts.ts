/**
 * Analytics facts (docs/api.md, "Analytics"): every change records them through `recordFacts`
 * into `analytics_inbox`, in its own transaction; `applyPendingFacts` moves them, a batch per
 * transaction and in inbox order, into the `analytics_events` log and the read models.
 * Applying in batches lets many writes share each statement (a dozen statements per add
 * when the rollups were kept inside every write). Reads, export and erasure apply the
 * shop's pending facts first, so answers stay exact; one applier per shop at a time.
 * Facts later than the server clock are recorded at "now", which keeps `activeShoppers`
 * exact. Design and figures: docs/architecture.md, "Analytics".
 */
import type { AnalyticsFactType, OwnerType } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { now } from '../../lib/time.js'
import { dayOf } from './analytics.periods.js'
import type { Owner } from '../auth/auth.types.js'
import { type DailyDelta, factsRepo, type FactRow, type OwnerProduct, type PendingAdd, pairKey } from './facts.repo.js'

export interface AnalyticsFact {
  type: AnalyticsFactType
  ownerType: OwnerType
  ownerId: string
  productId: string
  occurredAt: number
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

/**
 * Facts per batch (and per transaction): on SQLite a batch holds the one connection and the
 * requests of its turn wait for it, so it is kept short: at 50 the add+remove p99 meets its
 * target, at 100 it did not (docs/performance.md, "Changes for writes").
 */
export const APPLY_BATCH = 50

/** Records facts in the caller's transaction: they are applied once it has committed. */
export async function recordFacts(trx: Db, shopId: string, facts: AnalyticsFact[]): Promise<void> {
  if (facts.length === 0) return
  const clock = now()
  await factsRepo.addToInbox(
    trx,
    facts.map((f) => ({
      shop_id: shopId,
      type: f.type,
      owner_type: f.ownerType,
      owner_id: f.ownerId,
      product_id: f.productId,
      occurred_at: Math.min(f.occurredAt, clock),
    })),
  )
}

/** Takes one batch off the shop's inbox and applies it; returns its size. */
async function applyBatch(trx: Db, shopId: string): Promise<number> {
  const rows = await factsRepo.take(trx, shopId, APPLY_BATCH)
  await applyFacts(trx, shopId, rows)
  return rows.length
}

/**
 * Applies every fact of the shop committed before the call, a batch per transaction; with
 * `wait: false` it returns as soon as another applier holds the shop. Returns how many.
 */
export async function applyPendingFacts(db: Db, shopId: string, opts: { wait?: boolean } = {}): Promise<number> {
  let total = 0
  // A batch smaller than APPLY_BATCH emptied the inbox as of its statement.
  for (let n = APPLY_BATCH; n === APPLY_BATCH && (await factsRepo.anyPending(db, shopId)); total += n) {
    n = await db
      .transaction()
      .execute(async (trx) => ((await factsRepo.lockApplier(trx, shopId, opts.wait ?? true)) ? applyBatch(trx, shopId) : -1))
    if (n < 0) break
  }
  return total
}

/** `applyPendingFacts` inside the caller's transaction (customer erasure, before it rewrites analytics rows). */
export async function applyPendingFactsIn(trx: Db, shopId: string): Promise<void> {
  await factsRepo.lockApplier(trx, shopId, true)
  while ((await applyBatch(trx, shopId)) === APPLY_BATCH) {
    // a full batch: there may be more
  }
}

/** Applies facts, in their order, to the log and the read models (under the shop's applier lock). */
async function applyFacts(trx: Db, shopId: string, facts: Omit<FactRow, 'shop_id'>[]): Promise<void> {
  if (facts.length === 0) return
  const clock = now()
  const at = facts.map((f) => Math.min(f.occurred_at, clock))
  await factsRepo.addToLog(
    trx,
    facts.map((f, i) => ({
      shop_id: shopId,
      type: f.type,
      owner_type: f.owner_type,
      owner_id: f.owner_id,
      product_id: f.product_id,
      occurred_at: at[i] as number,
    })),
  )

  const daily = new Map<number, DailyDelta>()
  // This batch's adds not converted by a later cart add of the batch: they join the pending set.
  const adds: PendingAdd[] = []
  // The (owner, product) pairs that adds and removes touched: their holdings are brought in line.
  const pairs = new Map<string, OwnerProduct>()
  // Per pair: its first add and last remove of the batch (when a hold began or ended).
  const firstAdd = new Map<string, number>()
  const lastRemove = new Map<string, number>()
  // (owner, day) of every wishlist event, and per owner the latest such day.
  const seen = new Map<string, { owner: Owner; day: number }>()
  const lastDay = new Map<string, { owner: Owner; day: number }>()

  for (const [i, f] of facts.entries()) {
    const t = at[i] as number
    const day = dayOf(t)
    const owner: Owner = { type: f.owner_type, id: f.owner_id }
    if (f.type === 'add' || f.type === 'remove') {
      const key = pairKey(owner.type, owner.id, f.product_id)
      pairs.set(key, { owner, productId: f.product_id })
      if (f.type === 'add' && !firstAdd.has(key)) firstAdd.set(key, t)
      if (f.type === 'remove') lastRemove.set(key, t)
    }
    if (f.type === 'add') {
      deltaOf(daily, day).adds++
      adds.push({ owner, productId: f.product_id, addedAt: t, day })
    } else if (f.type === 'remove') {
      deltaOf(daily, day).removes++
    } else if (f.type === 'cart_add') {
      // The batch's own earlier adds first, then the stored ones: every add of the product
      // by this owner made at or before the cart add is converted, once.
      for (let j = adds.length - 1; j >= 0; j--) {
        const a = adds[j] as PendingAdd
        if (a.addedAt > t || a.productId !== f.product_id || a.owner.type !== owner.type || a.owner.id !== owner.id) continue
        deltaOf(daily, a.day).converted++
        adds.splice(j, 1)
      }
      for (const p of await factsRepo.convertPending(trx, shopId, owner, f.product_id, t)) deltaOf(daily, p.day).converted += p.count
    }
    if (isWishlistEvent(f.type)) {
      // Every wishlist event's day gets a row (`all` starts at the first one); a cart add
      // is not a wishlist event, and its platform-given date must not stretch `all`.
      deltaOf(daily, day)
      seen.set(seenKey(owner, day), { owner, day })
      const prev = lastDay.get(ownerKey(owner))
      if (!prev || prev.day < day) lastDay.set(ownerKey(owner), { owner, day })
    }
  }
  await factsRepo.addPending(trx, shopId, adds)
  const holders = new Map<string, number>()
  await syncPairs(trx, shopId, [...pairs.values()], holders, clock, firstAdd, lastRemove)

  const newlySeen = await factsRepo.markAllSeen(trx, shopId, [...seen.values()], seenKey)
  for (const [key, { day }] of seen) if (newlySeen.has(key)) deltaOf(daily, day).shoppers++

  // Owners in key order, so concurrent writers lock `analytics_shoppers` rows in one order.
  // An owner whose latest day here was already in the seen set had an event that day, so its
  // last active day is at least that day and cannot move (no lookup needed).
  for (const [, { owner, day }] of [...lastDay.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (!newlySeen.has(seenKey(owner, day))) continue
    const moved = await factsRepo.advanceLastDay(trx, shopId, owner, day)
    if (!moved) continue
    if (moved.from !== null) deltaOf(daily, moved.from).last_seen--
    deltaOf(daily, day).last_seen++
  }

  await factsRepo.addDaily(trx, shopId, daily)
  await factsRepo.addHolders(trx, shopId, holders)
}

/**
 * Brings the holdings of these (owner, product) pairs in line with the owners' lists as
 * they are now, and counts each change into `holders` (product → +1 / −1).
 */
async function syncPairs(
  trx: Db,
  shopId: string,
  pairs: OwnerProduct[],
  holders: Map<string, number>,
  at: number,
  since?: Map<string, number>,
  until?: Map<string, number>,
): Promise<void> {
  if (pairs.length === 0) return
  const listed = await factsRepo.listedPairs(trx, shopId, pairs)
  const held = await factsRepo.heldPairs(trx, shopId, pairs)
  const key = (p: OwnerProduct) => pairKey(p.owner.type, p.owner.id, p.productId)
  for (const productId of await factsRepo.holdAll(
    trx,
    shopId,
    pairs.filter((p) => listed.has(key(p)) && !held.has(key(p))),
    at,
    since,
  ))
    bump(holders, productId, 1)
  for (const productId of await factsRepo.releaseAll(
    trx,
    shopId,
    pairs.filter((p) => !listed.has(key(p)) && held.has(key(p))),
    at,
    until,
  ))
    bump(holders, productId, -1)
  // Added and removed within this batch: never in the holdings set, but held for a while.
  const spans = []
  for (const p of pairs) {
    const k = key(p)
    const from = since?.get(k)
    const to = until?.get(k)
    if (!listed.has(k) && !held.has(k) && from !== undefined && to !== undefined && to >= from) spans.push({ ...p, since: from, until: to })
  }
  await factsRepo.recordReleases(trx, shopId, spans)
}

/**
 * Brings the holder counts of one owner in line with what its lists hold now. For code that
 * deletes items without recording `remove` facts (customer erasure, docs/api.md "Privacy and export"); call it
 * in the same transaction, after the delete and after `applyPendingFactsIn`.
 */
export async function syncHoldings(trx: Db, shopId: string, ownerType: OwnerType, ownerId: string): Promise<void> {
  const owner: Owner = { type: ownerType, id: ownerId }
  const products = new Set([...(await factsRepo.heldProducts(trx, shopId, owner)), ...(await factsRepo.listedProducts(trx, shopId, owner))])
  const holders = new Map<string, number>()
  await syncPairs(
    trx,
    shopId,
    [...products].map((productId) => ({ owner, productId })),
    holders,
    now(),
  )
  await factsRepo.addHolders(trx, shopId, holders)
}
