/**
 * The e-mail a shop knows for an owner, for notifications (docs/notifications.md, "Who is
 * notified (consent, opt-out)"): from an order of theirs (`order`, an `order.created` event's
 * `email` of a customer), the merchant's own customer record (`merchant`,
 * `PUT /v1/admin/customers/{customerId}/contact`), or typed by the shopper with the consent
 * text they saw (`shopper`, `PUT /v1/wishlists/{customerId}/contact`). An order's e-mail never
 * replaces one the merchant or the shopper gave; the merchant's and the shopper's replace any.
 * E-mails are stored trimmed and lower-cased.
 */
import type { Selectable } from 'kysely'
import type { NotificationContactsTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { isoMillis } from '../../lib/time.js'
import type { Owner } from '../auth/auth.types.js'

export type ContactRow = Selectable<NotificationContactsTable>
export type ContactSource = NotificationContactsTable['source']

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export const contactsRepo = {
  get(db: Db, shopId: string, owner: Owner): Promise<ContactRow | undefined> {
    return db
      .selectFrom('notification_contacts')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', owner.type)
      .where('owner_id', '=', owner.id)
      .executeTakeFirst()
  },

  /** The merchant's or the shopper's e-mail: replaces whatever the shop had for the owner. */
  async put(
    db: Db,
    shopId: string,
    owner: Owner,
    contact: { email: string; source: ContactSource; consentText: string | null },
    at: number,
  ) {
    const values = {
      email: normalizeEmail(contact.email),
      source: contact.source,
      consent_text: contact.consentText,
      consented_at: at,
      updated_at: at,
    }
    await db
      .insertInto('notification_contacts')
      .values({ shop_id: shopId, owner_type: owner.type, owner_id: owner.id, ...values })
      .onConflict((oc) => oc.columns(['shop_id', 'owner_type', 'owner_id']).doUpdateSet(values))
      .execute()
  },

  /** An order's e-mail of a customer: kept when the shop had none, or one from an earlier order only. */
  async fromOrder(db: Db, shopId: string, customerId: string, email: string, at: number): Promise<void> {
    const values = { email: normalizeEmail(email), updated_at: at }
    await db
      .insertInto('notification_contacts')
      .values({
        shop_id: shopId,
        owner_type: 'customer',
        owner_id: customerId,
        source: 'order',
        consent_text: null,
        consented_at: at,
        ...values,
      })
      .onConflict((oc) =>
        oc.columns(['shop_id', 'owner_type', 'owner_id']).doUpdateSet(values).where('notification_contacts.source', '=', 'order'),
      )
      .execute()
  },

  /** True when there was a contact to delete. */
  async remove(db: Db, shopId: string, owner: Owner): Promise<boolean> {
    const res = await db
      .deleteFrom('notification_contacts')
      .where('shop_id', '=', shopId)
      .where('owner_type', '=', owner.type)
      .where('owner_id', '=', owner.id)
      .executeTakeFirst()
    return Number(res.numDeletedRows) > 0
  },
}

/** A contact as the API answers it. */
export const contactView = (row: ContactRow, optedOut: boolean) => ({
  ownerType: row.owner_type,
  ownerId: row.owner_id,
  email: row.email,
  source: row.source,
  consentText: row.consent_text,
  consentedAt: isoMillis(Number(row.consented_at)),
  updatedAt: isoMillis(Number(row.updated_at)),
  optedOut,
})
