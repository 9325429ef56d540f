/**
 * What erasing a customer does to the webhook events that wait to be sent (outbox rows and
 * pending deliveries): an event about them (`data.customerId`) is cancelled (outbox row
 * deleted; delivery failed with "cancelled: customer erased", body emptied); a list naming
 * them among others (`data.customerIds`) loses their id and stays pending, cancelled when
 * they were its only id (and it was not `truncated`). Queued product signals name nobody
 * yet: their holders are read after the erasure.
 */
import { sql, type Transaction } from 'kysely'
import type { Backend } from '../../db/types.js'
import { lockedForUpdate } from '../../db/dialect.js'
import type { Database } from '../../db/schema.js'
import { createWebhooksRepo } from './webhooks.repo.js'

export const CANCELLED_BY_ERASURE = 'cancelled: customer erased'

type Data = Record<string, unknown>

/** The event's data without the customer, `null` when the event is about them, `undefined` when it does not name them. */
export function withoutCustomer(data: Data, customerId: string): Data | null | undefined {
  if (data.customerId === customerId) return null
  const ids = data.customerIds
  if (!Array.isArray(ids) || !ids.includes(customerId)) return undefined
  const rest = ids.filter((id) => id !== customerId)
  return rest.length === 0 && data.truncated !== true ? null : { ...data, customerIds: rest }
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Cancels or rewrites, in the erasing transaction, what waits to be sent about the customer.
 * Returns the number of pending deliveries cancelled or rewritten.
 */
export async function eraseCustomerFromWebhooks(trx: Transaction<Database>, backend: Backend, shopId: string, customerId: string, at: number): Promise<number> {
  // PostgreSQL: the shop's row lock waits for the worker writing queued signals of this shop
  // (it holds the row FOR SHARE, product-fan-out.ts) and keeps the next one from reading
  // the holders before this erasure commits.
  await createWebhooksRepo(trx, backend).lockShop(trx, shopId)
  const mentions = sql.lit(`%${escapeLike(JSON.stringify(customerId))}%`)
  // A cheap prefilter on the text; each match is then checked on the parsed JSON.
  const named = (column: 'payload' | 'body') => sql<boolean>`${sql.ref(column)} like ${mentions} escape '\\'`

  const outbox = await lockedForUpdate(
    trx.selectFrom('outbox').select(['id', 'payload']).where('shop_id', '=', shopId).where('dispatched', '=', 0).where(named('payload')),
    backend,
  ).execute()
  for (const row of outbox) {
    const data = withoutCustomer(JSON.parse(row.payload) as Data, customerId)
    if (data === undefined) continue
    if (data === null) await trx.deleteFrom('outbox').where('shop_id', '=', shopId).where('id', '=', row.id).execute()
    else await trx.updateTable('outbox').set({ payload: JSON.stringify(data) }).where('shop_id', '=', shopId).where('id', '=', row.id).execute()
  }

  const deliveries = await lockedForUpdate(
    trx.selectFrom('webhook_deliveries').select(['id', 'body']).where('shop_id', '=', shopId).where('status', '=', 'pending').where(named('body')),
    backend,
  ).execute()
  let changed = 0
  for (const row of deliveries) {
    const body = JSON.parse(row.body) as { data: Data }
    const data = withoutCustomer(body.data, customerId)
    if (data === undefined) continue
    changed++
    const update = trx.updateTable('webhook_deliveries').where('shop_id', '=', shopId).where('id', '=', row.id)
    if (data !== null) await update.set({ body: JSON.stringify({ ...body, data }), updated_at: at }).execute()
    else {
      // The lease goes too: an attempt in flight cannot settle (and so revive) it.
      await update
        .set({ status: 'failed', body: '', next_attempt_at: null, locked_until: null, locked_by: null, last_error: CANCELLED_BY_ERASURE, updated_at: at })
        .execute()
    }
  }
  return changed
}
