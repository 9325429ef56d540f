/**
 * What erasing a customer does to the webhook events that wait to be sent (outbox rows and
 * pending deliveries): an event about them (`data.customerId`) is cancelled (outbox row
 * deleted; delivery failed with "cancelled: customer erased", body emptied); a list naming
 * them among others (`data.customerIds`) loses their id and stays pending, cancelled when
 * they were its only id (and it was not `truncated`). Queued product signals name nobody
 * yet: their holders are read after the erasure.
 */
import type { Db } from '../../db/types.js'
import { webhooksRepo } from './webhooks.repo.js'

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

/**
 * Cancels or rewrites, in the erasing transaction, what waits to be sent about the customer.
 * Returns the number of pending deliveries cancelled or rewritten.
 */
export async function eraseCustomerFromWebhooks(trx: Db, shopId: string, customerId: string, at: number): Promise<number> {
  // PostgreSQL: the shop's row lock waits for the worker writing queued signals of this shop
  // (it holds the row FOR SHARE, product-fan-out.ts) and keeps the next one from reading
  // the holders before this erasure commits.
  await webhooksRepo.lockShop(trx, shopId)

  for (const row of await webhooksRepo.outboxNaming(trx, shopId, customerId)) {
    const data = withoutCustomer(JSON.parse(row.payload) as Data, customerId)
    if (data === undefined) continue
    if (data === null) await webhooksRepo.deleteOutboxRow(trx, shopId, row.id)
    else await webhooksRepo.setOutboxPayload(trx, shopId, row.id, JSON.stringify(data))
  }

  let changed = 0
  for (const row of await webhooksRepo.pendingNaming(trx, shopId, customerId)) {
    const body = JSON.parse(row.body) as { data: Data }
    const data = withoutCustomer(body.data, customerId)
    if (data === undefined) continue
    changed++
    if (data !== null) await webhooksRepo.setDeliveryBody(trx, shopId, row.id, JSON.stringify({ ...body, data }), at)
    else await webhooksRepo.cancelDelivery(trx, shopId, row.id, CANCELLED_BY_ERASURE, at)
  }
  return changed
}
