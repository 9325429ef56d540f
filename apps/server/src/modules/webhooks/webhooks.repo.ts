/**
 * Kysely queries of webhook endpoints, deliveries and attempts, and of the outbox rows the
 * worker fans out. Tenant reads and writes filter by shop_id; the worker's queries span shops
 * on purpose (one worker serves every shop) and are marked as such.
 */
import { type Insertable, type Selectable, sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { backendOf, lockedForUpdate, lockShopRow, lockSkippingLocked } from '../../db/dialect.js'
import type { DeliveryStatus, WebhookDeliveriesTable, WebhookEndpointsTable } from '../../db/schema.js'
import { newOrderedId } from '../../lib/ids.js'

export type EndpointRow = Selectable<WebhookEndpointsTable>
export type DeliveryRow = Selectable<WebhookDeliveriesTable>

/** A new pending delivery: no attempt made, no lease (`locked_by` only for a test delivery its request attempts itself). */
export const newDelivery = (
  d: Pick<DeliveryRow, 'shop_id' | 'webhook_id' | 'message_id' | 'event' | 'body' | 'next_attempt_at'> & { locked_by?: string },
  at: number,
): DeliveryRow => ({
  shop_id: d.shop_id,
  id: newOrderedId('dlv'),
  webhook_id: d.webhook_id,
  message_id: d.message_id,
  event: d.event,
  body: d.body,
  status: 'pending',
  attempts: 0,
  next_attempt_at: d.next_attempt_at,
  locked_until: null,
  locked_by: d.locked_by ?? null,
  last_status_code: null,
  last_error: null,
  created_at: at,
  updated_at: at,
})

/**
 * Due deliveries: pending, their time come, no live lease, their shop not uninstalled
 * (Shopify app mode: they wait until it is installed again); `skipWebhooks` and `skipShops`:
 * endpoints and shops that already have as many attempts in flight as they may.
 */
interface DueQuery {
  at: number
  limit: number
  skipWebhooks?: string[]
  skipShops?: string[]
}

const dueDeliveries = (db: Db, opts: DueQuery) => {
  const skip = opts.skipWebhooks ?? []
  const skipShops = opts.skipShops ?? []
  return (
    db
      .selectFrom('webhook_deliveries')
      .select(['shop_id', 'id'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', opts.at)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', opts.at)]))
      .$if(skip.length > 0, (qb) => qb.where('webhook_id', 'not in', skip))
      .$if(skipShops.length > 0, (qb) => qb.where('shop_id', 'not in', skipShops))
      // A shop whose Shopify app is uninstalled gets nothing until it is installed again.
      .where('shop_id', 'not in', db.selectFrom('shops').select('id').where('uninstalled_at', 'is not', null))
      .orderBy('next_attempt_at')
      .limit(opts.limit)
  )
}

// Spelled with the literal, as the partial index webhook_deliveries_settled is (migration 0009).
const settledBefore = (db: Db, cutoff: number) =>
  db.selectFrom('webhook_deliveries').select(['shop_id', 'id']).where('status', '<>', sql.lit('pending')).where('updated_at', '<', cutoff)

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/** A cheap prefilter on a text column: it contains `customerId` as a JSON string (each match is then checked on the parsed JSON). */
const naming = (column: 'payload' | 'body', customerId: string) =>
  sql<boolean>`${sql.ref(column)} like ${sql.lit(`%${escapeLike(JSON.stringify(customerId))}%`)} escape '\\'`

export const webhooksRepo = {
  /** The shop's row locked until the transaction `trx` ends (PostgreSQL), against its other writers. */
  async lockShop(trx: Db, shopId: string): Promise<void> {
    await lockShopRow(trx, shopId, 'update')
  },

  async countEndpoints(db: Db, shopId: string): Promise<number> {
    const row = await db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('shop_id', '=', shopId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  },

  async insertEndpoint(db: Db, row: Insertable<WebhookEndpointsTable>): Promise<void> {
    await db.insertInto('webhook_endpoints').values(row).execute()
  },

  listEndpoints(db: Db, shopId: string): Promise<EndpointRow[]> {
    return db.selectFrom('webhook_endpoints').selectAll().where('shop_id', '=', shopId).orderBy('created_at').orderBy('id').execute()
  },

  getEndpoint(db: Db, shopId: string, id: string): Promise<EndpointRow | undefined> {
    return db.selectFrom('webhook_endpoints').selectAll().where('shop_id', '=', shopId).where('id', '=', id).executeTakeFirst()
  },

  /** Removes the endpoint with its deliveries and their attempts; false when unknown. */
  async deleteEndpoint(trx: Db, shopId: string, id: string): Promise<boolean> {
    const deleted = await trx.deleteFrom('webhook_endpoints').where('shop_id', '=', shopId).where('id', '=', id).executeTakeFirst()
    if (Number(deleted.numDeletedRows) === 0) return false
    await trx
      .deleteFrom('webhook_attempts')
      .where('shop_id', '=', shopId)
      .where('delivery_id', 'in', (eb) =>
        eb.selectFrom('webhook_deliveries').select('id').where('shop_id', '=', shopId).where('webhook_id', '=', id),
      )
      .execute()
    await trx.deleteFrom('webhook_deliveries').where('shop_id', '=', shopId).where('webhook_id', '=', id).execute()
    return true
  },

  listDeliveries(db: Db, shopId: string, webhookId: string, limit: number): Promise<DeliveryRow[]> {
    return db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('webhook_id', '=', webhookId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute()
  },

  getDelivery(db: Db, shopId: string, id: string): Promise<DeliveryRow | undefined> {
    return db.selectFrom('webhook_deliveries').selectAll().where('shop_id', '=', shopId).where('id', '=', id).executeTakeFirst()
  },

  /** Inserts deliveries (rows of their shops). */
  async insertDeliveries(db: Db, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
    // Chunked: SQLite allows at most 32,766 bound parameters per statement.
    for (let i = 0; i < rows.length; i += 200) {
      await db
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + 200))
        .execute()
    }
  },

  async recordAttempt(
    trx: Db,
    row: {
      shop_id: string
      delivery_id: string
      attempt: number
      worker_id: string
      started_at: number
      duration_ms: number
      status_code: number | null
      error: string | null
      response_body: string | null
    },
  ): Promise<void> {
    await trx
      .insertInto('webhook_attempts')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .execute()
  },

  /** Writes an attempt's outcome, only while the caller still holds the claim. */
  async settle(
    trx: Db,
    d: { shop_id: string; id: string; claimToken: string },
    patch: {
      status: DeliveryStatus
      attempts: number
      next_attempt_at: number | null
      last_status_code: number | null
      last_error: string | null
      at: number
    },
  ): Promise<boolean> {
    const res = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: patch.status,
        attempts: patch.attempts,
        next_attempt_at: patch.next_attempt_at,
        last_status_code: patch.last_status_code,
        last_error: patch.last_error,
        locked_until: null,
        locked_by: null,
        updated_at: patch.at,
      })
      .where('shop_id', '=', d.shop_id)
      .where('id', '=', d.id)
      .where('locked_by', '=', d.claimToken)
      .executeTakeFirst()
    return Number(res.numUpdatedRows) > 0
  },

  /** 410 Gone: the endpoint takes no new deliveries and its pending ones fail. */
  async disableEndpoint(trx: Db, shopId: string, id: string, reason: string, at: number): Promise<void> {
    await trx
      .updateTable('webhook_endpoints')
      .set({ disabled_at: at, disabled_reason: reason })
      .where('shop_id', '=', shopId)
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .execute()
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null, updated_at: at, last_error: 'webhook disabled (410 Gone)' })
      .where('shop_id', '=', shopId)
      .where('webhook_id', '=', id)
      .where('status', '=', 'pending')
      .where('locked_by', 'is', null)
      .execute()
  },

  // ---- a customer's erasure (customer-erasure.ts), in its transaction ----

  /** The shop's outbox rows whose payload may name the customer, locked (FOR UPDATE on PostgreSQL). */
  outboxNaming(trx: Db, shopId: string, customerId: string) {
    const q = trx
      .selectFrom('outbox')
      .select(['id', 'payload'])
      .where('shop_id', '=', shopId)
      .where('dispatched', '=', 0)
      .where(naming('payload', customerId))
    return lockedForUpdate(q, backendOf(trx)).execute()
  },

  async deleteOutboxRow(trx: Db, shopId: string, id: string): Promise<void> {
    await trx.deleteFrom('outbox').where('shop_id', '=', shopId).where('id', '=', id).execute()
  },

  async setOutboxPayload(trx: Db, shopId: string, id: string, payload: string): Promise<void> {
    await trx.updateTable('outbox').set({ payload }).where('shop_id', '=', shopId).where('id', '=', id).execute()
  },

  /** The shop's pending deliveries whose body may name the customer, locked (FOR UPDATE on PostgreSQL). */
  pendingNaming(trx: Db, shopId: string, customerId: string) {
    const q = trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'body'])
      .where('shop_id', '=', shopId)
      .where('status', '=', 'pending')
      .where(naming('body', customerId))
    return lockedForUpdate(q, backendOf(trx)).execute()
  },

  async setDeliveryBody(trx: Db, shopId: string, id: string, body: string, at: number): Promise<void> {
    await trx.updateTable('webhook_deliveries').set({ body, updated_at: at }).where('shop_id', '=', shopId).where('id', '=', id).execute()
  },

  /** Fails a pending delivery with an empty body; the lease goes too, so an attempt in flight cannot settle (and so revive) it. */
  async cancelDelivery(trx: Db, shopId: string, id: string, reason: string, at: number): Promise<void> {
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', body: '', next_attempt_at: null, locked_until: null, locked_by: null, last_error: reason, updated_at: at })
      .where('shop_id', '=', shopId)
      .where('id', '=', id)
      .execute()
  },

  // ---- the worker (all shops) ----

  /** Undispatched outbox rows of all shops, oldest first, locked against other workers on PostgreSQL. */
  takeOutbox(trx: Db, limit: number) {
    return lockSkippingLocked(
      trx.selectFrom('outbox').selectAll().where('dispatched', '=', 0).orderBy('created_at').orderBy('id').limit(limit),
      backendOf(trx),
    ).execute()
  },

  /** Deletes fanned-out outbox rows (their deliveries hold what is sent): one statement per shop, not per row. */
  async deleteDispatched(trx: Db, rows: { shop_id: string; id: string }[]): Promise<void> {
    const idsByShop = new Map<string, string[]>()
    for (const r of rows) {
      const ids = idsByShop.get(r.shop_id)
      if (ids === undefined) idsByShop.set(r.shop_id, [r.id])
      else ids.push(r.id)
    }
    for (const [shopId, ids] of idsByShop) {
      await trx.deleteFrom('outbox').where('shop_id', '=', shopId).where('id', 'in', ids).execute()
    }
  },

  shopDomains(db: Db, shopIds: string[]) {
    return db.selectFrom('shops').select(['id', 'domain']).where('id', 'in', shopIds).execute()
  },

  activeEndpoints(db: Db, shopIds: string[]) {
    return db
      .selectFrom('webhook_endpoints')
      .select(['shop_id', 'id', 'events', 'created_at'])
      .where('shop_id', 'in', shopIds)
      .where('disabled_at', 'is', null)
      .execute()
  },

  /**
   * Whether a pass has anything to do. Plain reads, so an idle worker writes nothing, which
   * also leaves the page cache's change stamp (db/connect.ts) where it was.
   */
  async hasUndispatched(db: Db): Promise<boolean> {
    return (await db.selectFrom('outbox').select('id').where('dispatched', '=', 0).limit(1).executeTakeFirst()) !== undefined
  },

  async hasDue(db: Db, opts: DueQuery): Promise<boolean> {
    return (await dueDeliveries(db, { ...opts, limit: 1 }).executeTakeFirst()) !== undefined
  },

  /** Claims up to `limit` due deliveries for `leaseMs` in one UPDATE (PostgreSQL: skipping rows other workers hold). */
  claimDue(db: Db, opts: DueQuery & { leaseMs: number; claimToken: string }): Promise<DeliveryRow[]> {
    const due = lockSkippingLocked(dueDeliveries(db, opts), backendOf(db))
    return db
      .updateTable('webhook_deliveries')
      .set({ locked_until: opts.at + opts.leaseMs, locked_by: opts.claimToken, updated_at: opts.at })
      .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', due.$asTuple('shop_id', 'id')))
      .returningAll()
      .execute()
  },

  /** Gives claimed deliveries back unattempted (their endpoint has enough attempts in flight). */
  async release(db: Db, rows: { shop_id: string; id: string }[], claimToken: string): Promise<void> {
    if (rows.length === 0) return
    await db
      .updateTable('webhook_deliveries')
      .set({ locked_until: null, locked_by: null })
      .where('locked_by', '=', claimToken)
      .where((eb) => eb.or(rows.map((r) => eb.and([eb('shop_id', '=', r.shop_id), eb('id', '=', r.id)]))))
      .execute()
  },

  endpointsFor(db: Db, keys: { shop_id: string; webhook_id: string }[]): Promise<EndpointRow[]> {
    if (keys.length === 0) return Promise.resolve([])
    return db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where((eb) => eb.or(keys.map((k) => eb.and([eb('shop_id', '=', k.shop_id), eb('id', '=', k.webhook_id)]))))
      .execute()
  },

  /** Whether any settled delivery was last changed before `cutoff`: a plain read, as hasDue. */
  async hasSettledBefore(db: Db, cutoff: number): Promise<boolean> {
    return (await settledBefore(db, cutoff).limit(1).executeTakeFirst()) !== undefined
  },

  /**
   * Deletes up to `limit` settled (never pending) deliveries last changed before `cutoff`,
   * oldest first, with their attempts (PostgreSQL: skipping rows locked). Run it in a transaction.
   */
  async purgeSettled(trx: Db, cutoff: number, limit: number): Promise<number> {
    const oldest = lockSkippingLocked(settledBefore(trx, cutoff).orderBy('updated_at').limit(limit), backendOf(trx))
    const gone = await trx
      .deleteFrom('webhook_deliveries')
      .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', oldest.$asTuple('shop_id', 'id')))
      .returning(['shop_id', 'id'])
      .execute()
    if (gone.length > 0) {
      await trx
        .deleteFrom('webhook_attempts')
        .where((eb) =>
          eb(
            eb.refTuple('shop_id', 'delivery_id'),
            'in',
            gone.map((d) => eb.tuple(d.shop_id, d.id)),
          ),
        )
        .execute()
    }
    return gone.length
  },
}
