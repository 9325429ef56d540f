/**
 * What erasing a customer does to their notifications (docs/notifications.md, "Delivery"), in
 * the erasing transaction (privacy.service.ts, `eraseCustomer`): their contact (the e-mail),
 * their notifications and every delivery of them are deleted, so nothing waiting is sent
 * after the erasure commits; and for a shop with Klaviyo connected, one profile deletion is
 * queued (`notification_erasures`: the e-mail the shop knew and the customer id), which the
 * notification worker asks of Klaviyo, again until Klaviyo takes it.
 *
 * The opt-out stays: it holds no e-mail, only that this customer id of the shop wants no
 * message, and it must still hold should the id come back (an old order's e-mail recorded
 * again as a contact).
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../../db/types.js'

/** A profile deletion's id. */
export const newErasureId = (): string => `ner_${randomBytes(12).toString('base64url')}`

export interface NotificationErasure {
  /** Notifications deleted (with their deliveries). */
  notifications: number
  /** Profile deletions queued for the shop's channels. */
  profileDeletions: number
}

export async function eraseCustomerFromNotifications(
  trx: Db,
  shopId: string,
  customerId: string,
  at: number,
): Promise<NotificationErasure> {
  const contact = await trx
    .deleteFrom('notification_contacts')
    .where('shop_id', '=', shopId)
    .where('owner_type', '=', 'customer')
    .where('owner_id', '=', customerId)
    .returning('email')
    .executeTakeFirst()
  const ids = trx
    .selectFrom('notifications')
    .select('id')
    .where('shop_id', '=', shopId)
    .where('owner_type', '=', 'customer')
    .where('owner_id', '=', customerId)
  // A delivery being sent now finishes on its own; the profile deletion waits for its lease to end.
  const inFlight = await trx
    .selectFrom('notification_deliveries')
    .select((eb) => eb.fn.max('lease_until').as('until'))
    .where('shop_id', '=', shopId)
    .where('state', '=', 'pending')
    .where('notification_id', 'in', ids)
    .executeTakeFirst()
  await trx.deleteFrom('notification_deliveries').where('shop_id', '=', shopId).where('notification_id', 'in', ids).execute()
  const gone = await trx
    .deleteFrom('notifications')
    .where('shop_id', '=', shopId)
    .where('owner_type', '=', 'customer')
    .where('owner_id', '=', customerId)
    .executeTakeFirst()

  const klaviyo = await trx
    .selectFrom('notification_channels')
    .select('channel')
    .where('shop_id', '=', shopId)
    .where('channel', '=', 'klaviyo')
    .executeTakeFirst()
  if (klaviyo !== undefined) {
    const leaseEnd = Number(inFlight?.until ?? 0)
    await trx
      .insertInto('notification_erasures')
      .values({
        shop_id: shopId,
        id: newErasureId(),
        channel: 'klaviyo',
        email: contact?.email ?? null,
        external_id: customerId,
        attempts: 0,
        next_attempt_at: Math.max(at, leaseEnd),
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: at,
      })
      .execute()
  }
  return { notifications: Number(gone.numDeletedRows), profileDeletions: klaviyo === undefined ? 0 : 1 }
}
