/** Notification rows written straight into the database, for the delivery tests and the bench. */
import { randomBytes } from 'node:crypto'
import type { Db } from '../../src/db/types.js'
import type { NotificationMessage, NotificationSignal } from '../../src/modules/notifications/channel.js'

let seq = 0

/**
 * A queued notification with its pending delivery through `channel` (Klaviyo by default), and
 * the owner's contact (`c<id>@example.com`): the rows the rule engine (notify.ts) writes.
 * Returns the notification's id.
 */
export async function queueNotification(
  db: Db,
  shopId: string,
  customerId: string,
  opts: { signal?: NotificationSignal; productId?: string; channel?: 'klaviyo' | 'flow'; at?: number } = {},
): Promise<string> {
  const at = opts.at ?? Date.now()
  const id = `ntf_test${String(++seq).padStart(6, '0')}${randomBytes(3).toString('hex')}`
  const productId = opts.productId ?? '8123456789012'
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('notification_contacts')
      .values({
        shop_id: shopId,
        owner_type: 'customer',
        owner_id: customerId,
        email: `c${customerId}@example.com`,
        source: 'merchant',
        consent_text: null,
        consented_at: at,
        updated_at: at,
      })
      .onConflict((oc) => oc.columns(['shop_id', 'owner_type', 'owner_id']).doNothing())
      .execute()
    await trx
      .insertInto('notifications')
      .values({
        shop_id: shopId,
        id,
        owner_type: 'customer',
        owner_id: customerId,
        signal: opts.signal ?? 'back_in_stock',
        product_id: productId,
        variant_id: '45012345678901',
        payload: JSON.stringify({
          productId,
          variantId: '45012345678901',
          title: 'Canvas tote',
          url: 'https://shop.example.com/products/canvas-tote',
          imageUrl: 'https://cdn.example.com/tote.jpg',
          price: '29.90',
          previousPrice: null,
          currency: 'EUR',
          inventoryQuantity: 12,
        }),
        state: 'queued',
        reason: null,
        created_at: at,
      })
      .execute()
    await trx
      .insertInto('notification_deliveries')
      .values({
        shop_id: shopId,
        id: `ndl_${id.slice(4)}${opts.channel ?? 'klaviyo'}`,
        notification_id: id,
        channel: opts.channel ?? 'klaviyo',
        state: 'pending',
        attempts: 0,
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: at,
        sent_at: null,
      })
      .execute()
  })
  return id
}

/** The delivery row of a notification (its channel's one), or undefined. */
export const deliveryOf = (db: Db, shopId: string, notificationId: string) =>
  db
    .selectFrom('notification_deliveries')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('notification_id', '=', notificationId)
    .executeTakeFirst()

/** A channel's message for `signal` (a Canvas tote, Ana's e-mail), as the worker hands it over; fields replaced where given. */
export const sampleMessage = (
  signal: NotificationSignal,
  o: { id?: string; shopId?: string; occurredAt?: number; product?: Partial<NotificationMessage['product']> } = {},
): NotificationMessage => ({
  id: o.id ?? `m-${signal}`,
  shopId: o.shopId ?? 'shop-1',
  signal,
  occurredAt: o.occurredAt ?? Date.UTC(2026, 10, 29),
  shopper: { customerId: '7001234567890', email: 'ana@example.com' },
  product: {
    productId: '8123456789012',
    variantId: '45012345678901',
    title: 'Canvas tote',
    url: 'https://shop.example.com/products/canvas-tote',
    imageUrl: null,
    price: '29.90',
    previousPrice: '39.00',
    currency: 'EUR',
    inventoryQuantity: 3,
    ...o.product,
  },
  optOutUrl: 'https://wishlist.example.com/proxy/notifications/opt-out?token=abc',
})
