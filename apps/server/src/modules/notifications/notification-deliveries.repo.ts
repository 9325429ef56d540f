/**
 * Kysely queries of the notification worker (notification-worker.ts): the due deliveries of
 * every shop claimed under a lease (PostgreSQL: SKIP LOCKED), what a message is built from,
 * the settling of each attempt, the profile deletions of erased shoppers, the lease of each
 * Klaviyo key (which worker sends on it), and the retention purge. The worker's queries span
 * shops on purpose (one worker serves every shop); the erasure's (customer-erasure part,
 * `eraseOwner`) filter by shop.
 */
import type { Selectable } from 'kysely'
import { backendOf, lockSkippingLocked } from '../../db/dialect.js'
import type { NotificationDeliveriesTable, NotificationErasuresTable, NotificationsTable, OwnerType } from '../../db/schema.js'
import type { Db } from '../../db/types.js'

export type NotificationDeliveryRow = Selectable<NotificationDeliveriesTable>
export type NotificationRow = Selectable<NotificationsTable>
export type ErasureRow = Selectable<NotificationErasuresTable>
export type DeliveryChannel = NotificationDeliveriesTable['channel']

/** Deliveries of a shop through a channel, which a claim leaves alone (full, throttled, closed). */
export interface ShopChannel {
  shop_id: string
  channel: DeliveryChannel
}

interface DueQuery {
  at: number
  limit: number
  /** Shops with as many attempts in flight as they may have. */
  skipShops?: string[]
  /** A shop's deliveries through one channel that must wait (its rate limit, Flow's throttle). */
  skipShopChannels?: ShopChannel[]
}

/** The shops' channels whose key the channel refused (401/403): paused until the key is replaced. */
const refusedChannels = (db: Db) =>
  db.selectFrom('notification_channels').select(['shop_id', 'channel']).where('check_state', '=', 'invalid').$asTuple('shop_id', 'channel')

/**
 * Due deliveries: pending, their time come, no live lease, their shop not uninstalled (they
 * wait until it is installed again), and not a Klaviyo delivery of a shop whose key Klaviyo
 * refused (they wait until the key is replaced: PUT records it valid again).
 */
const dueDeliveries = (db: Db, q: DueQuery) => {
  const skipShops = q.skipShops ?? []
  const skipPairs = q.skipShopChannels ?? []
  return db
    .selectFrom('notification_deliveries')
    .select(['shop_id', 'id'])
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', q.at)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', q.at)]))
    .$if(skipShops.length > 0, (qb) => qb.where('shop_id', 'not in', skipShops))
    .$if(skipPairs.length > 0, (qb) =>
      qb.where((eb) => eb.not(eb.or(skipPairs.map((p) => eb.and([eb('shop_id', '=', p.shop_id), eb('channel', '=', p.channel)]))))),
    )
    .where('shop_id', 'not in', db.selectFrom('shops').select('id').where('uninstalled_at', 'is not', null))
    .where((eb) => eb(eb.refTuple('shop_id', 'channel'), 'not in', refusedChannels(db)))
    .orderBy('next_attempt_at')
    .limit(q.limit)
}

/** `skipShops`: shops whose Klaviyo key another worker sends on (it takes their erasures). */
const dueErasures = (db: Db, at: number, limit: number, skipShops: readonly string[] = []) =>
  db
    .selectFrom('notification_erasures')
    .select(['shop_id', 'id'])
    .where('next_attempt_at', '<=', at)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
    .$if(skipShops.length > 0, (qb) => qb.where('shop_id', 'not in', [...skipShops]))
    .where((eb) => eb(eb.refTuple('shop_id', 'channel'), 'not in', refusedChannels(db)))
    .orderBy('next_attempt_at')
    .limit(limit)

/** Notifications past the retention whose deliveries are all settled (a suppressed one has none). */
const settledBefore = (db: Db, cutoff: number) =>
  db
    .selectFrom('notifications as n')
    .select(['n.shop_id', 'n.id'])
    .where('n.created_at', '<', cutoff)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('notification_deliveries as d')
            .select('d.id')
            .whereRef('d.shop_id', '=', 'n.shop_id')
            .whereRef('d.notification_id', '=', 'n.id')
            .where('d.state', '=', 'pending'),
        ),
      ),
    )

/** The `shop_id` of every send lease: a key may be connected by several shops, so its lease is no one shop's. */
const SEND_LEASE_SHOP = ''

const byKeys = <R extends { shop_id: string; id: string }>(rows: readonly R[]) => rows.map((r) => [r.shop_id, r.id] as const)

export const notificationDeliveriesRepo = {
  // ---- the worker (all shops) ----

  /** Whether any delivery is due: a plain read, so an idle worker writes nothing. */
  async hasDue(db: Db, q: DueQuery): Promise<boolean> {
    return (await dueDeliveries(db, { ...q, limit: 1 }).executeTakeFirst()) !== undefined
  },

  /** Claims up to `limit` due deliveries for `leaseMs` in one UPDATE (PostgreSQL: skipping rows other workers hold). */
  claimDue(db: Db, q: DueQuery & { leaseMs: number; claimToken: string }): Promise<NotificationDeliveryRow[]> {
    const due = lockSkippingLocked(dueDeliveries(db, q), backendOf(db))
    return db
      .updateTable('notification_deliveries')
      .set({ lease_until: q.at + q.leaseMs, lease_owner: q.claimToken })
      .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', due.$asTuple('shop_id', 'id')))
      .returningAll()
      .execute()
  },

  /** Gives claimed deliveries back unattempted, due again at `nextAttemptAt` (their shop's channel has no room before). */
  async release(db: Db, rows: readonly { shop_id: string; id: string }[], claimToken: string, nextAttemptAt?: number): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200)
      await db
        .updateTable('notification_deliveries')
        .set({ lease_until: null, lease_owner: null, ...(nextAttemptAt === undefined ? {} : { next_attempt_at: nextAttemptAt }) })
        .where('lease_owner', '=', claimToken)
        .where((eb) => eb.or(chunk.map((r) => eb.and([eb('shop_id', '=', r.shop_id), eb('id', '=', r.id)]))))
        .execute()
    }
  },

  /** The notifications of claimed deliveries. */
  async notifications(db: Db, keys: readonly { shop_id: string; notification_id: string }[]): Promise<NotificationRow[]> {
    if (keys.length === 0) return []
    return db
      .selectFrom('notifications')
      .selectAll()
      .where((eb) =>
        eb(
          eb.refTuple('shop_id', 'id'),
          'in',
          keys.map((k) => eb.tuple(k.shop_id, k.notification_id)),
        ),
      )
      .execute()
  },

  /** The contacts (e-mail) and opt-outs of the owners of these notifications, read now. */
  async owners(db: Db, owners: readonly { shop_id: string; owner_type: OwnerType; owner_id: string }[]) {
    if (owners.length === 0) return { contacts: [], optOuts: [] }
    const match = <T extends 'notification_contacts' | 'notification_opt_outs'>(table: T) =>
      db.selectFrom(table as 'notification_contacts').where((eb) =>
        eb(
          eb.refTuple('shop_id', 'owner_type', 'owner_id'),
          'in',
          owners.map((o) => eb.tuple(o.shop_id, o.owner_type, o.owner_id)),
        ),
      )
    const contacts = await match('notification_contacts').select(['shop_id', 'owner_type', 'owner_id', 'email']).execute()
    const optOuts = await match('notification_opt_outs').select(['shop_id', 'owner_type', 'owner_id']).execute()
    return { contacts, optOuts }
  },

  /** The shops' Klaviyo connections (sealed key and its state). */
  klaviyoConnections(db: Db, shopIds: readonly string[]) {
    if (shopIds.length === 0) return Promise.resolve([])
    return db
      .selectFrom('notification_channels')
      .select(['shop_id', 'secret', 'check_state'])
      .where('channel', '=', 'klaviyo')
      .where('shop_id', 'in', [...shopIds])
      .execute()
  },

  /**
   * Klaviyo refused the key (401/403): the channel is recorded invalid, which holds back the
   * shop's Klaviyo deliveries and erasures, unless the key was replaced meanwhile (`sealed`
   * is the key the request was made with).
   */
  async recordKeyRefused(db: Db, shopId: string, sealed: string, reason: string, at: number): Promise<void> {
    await db
      .updateTable('notification_channels')
      .set({ check_state: 'invalid', check_error: reason, checked_at: at, updated_at: at })
      .where('shop_id', '=', shopId)
      .where('channel', '=', 'klaviyo')
      .where('secret', '=', sealed)
      .execute()
  },

  /** Writes an attempt's outcome, only while the caller still holds the claim (an erased owner's delivery is gone). */
  async settle(
    db: Db,
    d: { shop_id: string; id: string; claimToken: string },
    patch: {
      state: NotificationDeliveryRow['state']
      attempts: number
      next_attempt_at: number
      last_error: string | null
      sent_at: number | null
    },
  ): Promise<boolean> {
    const res = await db
      .updateTable('notification_deliveries')
      .set({ ...patch, lease_owner: null, lease_until: null })
      .where('shop_id', '=', d.shop_id)
      .where('id', '=', d.id)
      .where('lease_owner', '=', d.claimToken)
      .executeTakeFirst()
    return Number(res.numUpdatedRows) > 0
  },

  // ---- profile deletions of erased shoppers ----

  async hasDueErasure(db: Db, at: number, skipShops?: readonly string[]): Promise<boolean> {
    return (await dueErasures(db, at, 1, skipShops).executeTakeFirst()) !== undefined
  },

  claimErasures(
    db: Db,
    q: { at: number; limit: number; leaseMs: number; claimToken: string; skipShops?: readonly string[] },
  ): Promise<ErasureRow[]> {
    const due = lockSkippingLocked(dueErasures(db, q.at, q.limit, q.skipShops), backendOf(db))
    return db
      .updateTable('notification_erasures')
      .set({ lease_until: q.at + q.leaseMs, lease_owner: q.claimToken })
      .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', due.$asTuple('shop_id', 'id')))
      .returningAll()
      .execute()
  },

  /** The channel took the deletion (or there is no channel to ask any more): the row, and the e-mail in it, goes. */
  async erasureDone(db: Db, e: { shop_id: string; id: string }, claimToken: string): Promise<void> {
    await db
      .deleteFrom('notification_erasures')
      .where('shop_id', '=', e.shop_id)
      .where('id', '=', e.id)
      .where('lease_owner', '=', claimToken)
      .execute()
  },

  async erasureRetry(
    db: Db,
    e: { shop_id: string; id: string },
    claimToken: string,
    patch: { attempts: number; next_attempt_at: number; last_error: string },
  ) {
    await db
      .updateTable('notification_erasures')
      .set({ ...patch, lease_owner: null, lease_until: null })
      .where('shop_id', '=', e.shop_id)
      .where('id', '=', e.id)
      .where('lease_owner', '=', claimToken)
      .execute()
  },

  // ---- who sends on a Klaviyo key ----

  /**
   * Takes or renews the lease of a key (`name`: its hash) until `until`, in one statement on
   * both backends: a new row, or the row taken over where it is `holder`'s already or expired
   * by `at`. True when `holder` holds it now; false while another holder's lease runs.
   */
  async takeSendLease(db: Db, q: { name: string; holder: string; at: number; until: number }): Promise<boolean> {
    const row = await db
      .insertInto('notification_send_leases')
      .values({ shop_id: SEND_LEASE_SHOP, name: q.name, holder: q.holder, expires_at: q.until })
      .onConflict((oc) =>
        oc
          .columns(['shop_id', 'name'])
          .doUpdateSet({ holder: q.holder, expires_at: q.until })
          .where((eb) =>
            eb.or([eb('notification_send_leases.holder', '=', q.holder), eb('notification_send_leases.expires_at', '<=', q.at)]),
          ),
      )
      .returning('holder')
      .executeTakeFirst()
    return row?.holder === q.holder
  },

  /** A key's lease as it stands (undefined: none). */
  sendLease(db: Db, name: string): Promise<{ holder: string; expires_at: number } | undefined> {
    return db
      .selectFrom('notification_send_leases')
      .select(['holder', 'expires_at'])
      .where('shop_id', '=', SEND_LEASE_SHOP)
      .where('name', '=', name)
      .executeTakeFirst()
  },

  /** Brings `holder`'s lease of a key forward to `until` (a stopping worker's hand-over); never lengthens it. */
  async shortenSendLease(db: Db, q: { name: string; holder: string; until: number }): Promise<void> {
    await db
      .updateTable('notification_send_leases')
      .set({ expires_at: q.until })
      .where('shop_id', '=', SEND_LEASE_SHOP)
      .where('name', '=', q.name)
      .where('holder', '=', q.holder)
      .where('expires_at', '>', q.until)
      .execute()
  },

  /** Deletes the leases expired before `before` (an expired lease and no lease are the same to every worker). */
  async purgeSendLeases(db: Db, before: number): Promise<number> {
    const res = await db.deleteFrom('notification_send_leases').where('expires_at', '<', before).executeTakeFirst()
    return Number(res.numDeletedRows)
  },

  // ---- retention ----

  async hasSettledBefore(db: Db, cutoff: number): Promise<boolean> {
    return (await settledBefore(db, cutoff).limit(1).executeTakeFirst()) !== undefined
  },

  /** Deletes up to `limit` notifications past the retention, none pending, with their deliveries (PostgreSQL: skipping rows locked). Run it in a transaction. */
  async purgeSettled(trx: Db, cutoff: number, limit: number): Promise<number> {
    const oldest = await lockSkippingLocked(settledBefore(trx, cutoff).orderBy('n.created_at').limit(limit), backendOf(trx)).execute()
    if (oldest.length === 0) return 0
    const keys = byKeys(oldest)
    await trx
      .deleteFrom('notification_deliveries')
      .where((eb) =>
        eb(
          eb.refTuple('shop_id', 'notification_id'),
          'in',
          keys.map(([s, i]) => eb.tuple(s, i)),
        ),
      )
      .execute()
    await trx
      .deleteFrom('notifications')
      .where((eb) =>
        eb(
          eb.refTuple('shop_id', 'id'),
          'in',
          keys.map(([s, i]) => eb.tuple(s, i)),
        ),
      )
      .execute()
    return oldest.length
  },
}
