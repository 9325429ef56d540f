/**
 * Kysely queries of privacy requests (docs/api.md, "Privacy and export"): one customer's
 * data, its erasure, the shop's item export. Per-owner tables are listed once (OWNER_TABLES).
 */
import { type ExpressionBuilder, sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { backendOf, inBatches, lockedForUpdate } from '../../db/dialect.js'
import type { Database } from '../../db/schema.js'
import type { Owner } from '../auth/auth.types.js'
import { ownedBy } from '../../db/owner-scope.js'

/**
 * Per-owner tables and what erasure does to them: `delete` (children before parents), or
 * `pseudonymize` (figures keep their counts: one random pseudonym per erasure keeps
 * distinct-shopper figures exact).
 */
export const OWNER_TABLES = {
  share_links: 'delete',
  wishlist_items: 'delete',
  wishlist_lists: 'delete',
  wishlist_owners: 'delete',
  analytics_events: 'pseudonymize',
  analytics_inbox: 'pseudonymize',
  analytics_shoppers: 'pseudonymize',
  analytics_shopper_days: 'pseudonymize',
  analytics_pending_adds: 'pseudonymize',
  analytics_releases: 'delete',
} as const satisfies Partial<Record<keyof Database, 'delete' | 'pseudonymize'>>

export type OwnerTable = keyof typeof OWNER_TABLES

/**
 * Rows of the customer: linked to its id, or linked to nobody and carrying one of `emails`
 * (addresses an order proved, or the one the merchant named). A row linked to another
 * customer is never the customer's, whatever address it carries.
 */
function ofCustomer<T extends 'reviews' | 'purchases' | 'review_invitations'>(
  eb: ExpressionBuilder<Database, T>,
  customerId: string,
  emailColumn: 'customer_email' | 'email',
  emails: string[],
) {
  // Each of the three tables has `customer_id`; the builder of one table is narrowed to the common column.
  const e = eb as unknown as ExpressionBuilder<Database, 'reviews' | 'purchases' | 'review_invitations'>
  const byId = e('customer_id', '=', customerId)
  if (emails.length === 0) return byId
  return e.or([byId, e.and([e('customer_id', 'is', null), e(sql.ref<string>(emailColumn), 'in', emails)])])
}

/** One CSV row of the shop export, before formatting. */
export interface ExportRow {
  owner_type: Owner['type']
  owner_id: string
  list_id: string
  list_name: string | null
  product_id: string
  variant_id: string | null
  handle: string | null
  added_at: number
  quantity: number
  note: string | null
  priority: string
  purchased_at: number | null
}

/** Rows per round trip of the shop export. */
export const EXPORT_BATCH = 1_000

function exportQuery(db: Db, shopId: string) {
  return (
    db
      .selectFrom('wishlist_items as i')
      .leftJoin('wishlist_lists as l', (j) =>
        j
          .onRef('l.shop_id', '=', 'i.shop_id')
          .onRef('l.owner_type', '=', 'i.owner_type')
          .onRef('l.owner_id', '=', 'i.owner_id')
          .onRef('l.id', '=', 'i.list_id'),
      )
      .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
      .select((eb) => [
        'i.owner_type',
        'i.owner_id',
        'i.list_id',
        'l.name as list_name',
        'i.product_id',
        eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'),
        'i.handle',
        'i.added_at',
        'i.quantity',
        'i.note',
        'i.priority',
        'i.purchased_at',
      ])
      .where('i.shop_id', '=', shopId)
      // Primary-key order: customers by id, each customer's lists together.
      .orderBy('i.owner_type')
      .orderBy('i.owner_id')
      .orderBy('i.list_id')
      .orderBy('i.product_id')
  )
}

export const privacyRepo = {
  // ---- one customer ----

  /** `lock`: FOR UPDATE on PostgreSQL, as every wishlist writer locks the owner row first. */
  owner(db: Db, shopId: string, owner: Owner, opts: { lock?: boolean } = {}) {
    const q = db.selectFrom('wishlist_owners').select(['item_count', 'created_at', 'updated_at']).where(ownedBy(shopId, owner))
    return (opts.lock ? lockedForUpdate(q, backendOf(db)) : q).executeTakeFirst()
  },

  lists(db: Db, shopId: string, owner: Owner) {
    return db
      .selectFrom('wishlist_lists')
      .select(['id', 'name', 'created_at', 'updated_at'])
      .where(ownedBy(shopId, owner))
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  },

  /** All items of the owner (at most 2,500), variant resolved like the API. */
  items(db: Db, shopId: string, owner: Owner) {
    return db
      .selectFrom('wishlist_items as i')
      .leftJoin('catalog_products as c', (j) => j.onRef('c.shop_id', '=', 'i.shop_id').onRef('c.product_id', '=', 'i.product_id'))
      .select((eb) => [
        'i.list_id',
        'i.product_id',
        eb.fn.coalesce('i.variant_id', 'c.default_variant_id').as('variant_id'),
        'i.handle',
        'i.metadata',
        'i.added_at',
        'i.quantity',
        'i.note',
        'i.priority',
        'i.purchased_at',
      ])
      .where(ownedBy(shopId, owner, 'i'))
      .orderBy('i.added_at', 'desc')
      .orderBy('i.product_id', 'desc')
      .execute()
  },

  shareLinks(db: Db, shopId: string, owner: Owner) {
    return db
      .selectFrom('share_links')
      .select(['token', 'list_id', 'created_at', 'expires_at', 'revoked_at'])
      .where(ownedBy(shopId, owner))
      .orderBy('created_at')
      .execute()
  },

  /** The e-mail notifications go to, where it came from and the consent given (docs/notifications.md). */
  notificationContact(db: Db, shopId: string, owner: Owner) {
    return db
      .selectFrom('notification_contacts')
      .select(['email', 'source', 'consent_text', 'consented_at'])
      .where(ownedBy(shopId, owner))
      .executeTakeFirst()
  },

  notificationOptOut(db: Db, shopId: string, owner: Owner) {
    return db.selectFrom('notification_opt_outs').select(['opted_out_at']).where(ownedBy(shopId, owner)).executeTakeFirst()
  },

  /** The notifications the owner was due (sent, waiting or suppressed), each with its deliveries per channel, oldest first. */
  async notifications(db: Db, shopId: string, owner: Owner) {
    const rows = await db
      .selectFrom('notifications')
      .select(['id', 'signal', 'product_id', 'variant_id', 'state', 'reason', 'created_at'])
      .where(ownedBy(shopId, owner))
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    const deliveries =
      rows.length === 0
        ? []
        : await db
            .selectFrom('notification_deliveries')
            .select(['notification_id', 'channel', 'state', 'sent_at'])
            .where('shop_id', '=', shopId)
            .where(
              'notification_id',
              'in',
              rows.map((r) => r.id),
            )
            .orderBy('channel')
            .execute()
    return rows.map((r) => ({ ...r, deliveries: deliveries.filter((d) => d.notification_id === r.id) }))
  },

  analyticsEvents(db: Db, shopId: string, owner: Owner) {
    return db
      .selectFrom('analytics_events')
      .select(['type', 'product_id', 'occurred_at'])
      .where(ownedBy(shopId, owner))
      .orderBy('occurred_at')
      .orderBy('id')
      .execute()
  },

  /**
   * E-mail addresses an order of the customer (`order.created` with its id) gave. Never the
   * address typed into a review: anyone may type any address.
   */
  async emailsOf(db: Db, shopId: string, customerId: string): Promise<string[]> {
    const rows = await db
      .selectFrom('purchases')
      .select('email')
      .where('shop_id', '=', shopId)
      .where('customer_id', '=', customerId)
      .where('email', 'is not', null)
      .execute()
    return [...new Set(rows.map((r) => r.email).filter((e): e is string => e !== null))].sort()
  },

  /**
   * Reviews linked to the customer, and unlinked ones by `emails`: only the address the merchant named (a review's address is typed, an
   * order's is not).
   */
  reviews(db: Db, shopId: string, customerId: string, emails: string[]) {
    return db
      .selectFrom('reviews')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where((eb) => ofCustomer(eb, customerId, 'customer_email', emails))
      .orderBy('created_at')
      .orderBy('id')
      .execute()
  },

  invitations(db: Db, shopId: string, customerId: string, emails: string[]) {
    return db
      .selectFrom('review_invitations')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where((eb) => ofCustomer(eb, customerId, 'email', emails))
      .orderBy('created_at')
      .orderBy('token')
      .execute()
  },

  votes(db: Db, shopId: string, customerId: string) {
    return db
      .selectFrom('review_votes')
      .select(['review_id', 'created_at'])
      .where('shop_id', '=', shopId)
      .where('voter_type', '=', 'customer')
      .where('voter_id', '=', customerId)
      .orderBy('created_at')
      .orderBy('review_id')
      .execute()
  },

  purchases(db: Db, shopId: string, customerId: string, emails: string[]) {
    return db
      .selectFrom('purchases')
      .select(['product_id', 'buyer', 'customer_id', 'email', 'created_at'])
      .where('shop_id', '=', shopId)
      .where((eb) => ofCustomer(eb, customerId, 'email', emails))
      .orderBy('created_at')
      .orderBy('product_id')
      .orderBy('buyer')
      .execute()
  },

  // ---- erasure (inside the caller's transaction) ----

  async deleteOwnerRows(trx: Db, shopId: string, table: OwnerTable, owner: Owner): Promise<number> {
    const res = await trx.deleteFrom(table).where(ownedBy(shopId, owner)).executeTakeFirst()
    return Number(res.numDeletedRows)
  },

  async pseudonymizeOwnerRows(trx: Db, shopId: string, table: OwnerTable, owner: Owner, pseudonym: string): Promise<number> {
    const res = await trx.updateTable(table).set({ owner_id: pseudonym }).where(ownedBy(shopId, owner)).executeTakeFirst()
    return Number(res.numUpdatedRows)
  },

  /** Name "Anonymous", no e-mail, no customer link; status, rating, verified and helpful count stay (aggregates unchanged). */
  async anonymizeReviews(trx: Db, shopId: string, customerId: string, emails: string[], at: number): Promise<number> {
    const res = await trx
      .updateTable('reviews')
      .set({ customer_name: 'Anonymous', customer_email: null, customer_id: null, updated_at: at })
      .where('shop_id', '=', shopId)
      .where((eb) => ofCustomer(eb, customerId, 'customer_email', emails))
      .executeTakeFirst()
    return Number(res.numUpdatedRows)
  },

  /** The vote rows go; reviews keep their helpfulCount (a count no longer tied to anyone). */
  async deleteVotes(trx: Db, shopId: string, customerId: string): Promise<number> {
    const res = await trx
      .deleteFrom('review_votes')
      .where('shop_id', '=', shopId)
      .where('voter_type', '=', 'customer')
      .where('voter_id', '=', customerId)
      .executeTakeFirst()
    return Number(res.numDeletedRows)
  },

  /**
   * The customer's purchases or review invitations (used or not: a used invitation's review
   * stays, anonymized), as exported.
   */
  async deleteOrderRows(
    trx: Db,
    shopId: string,
    table: 'purchases' | 'review_invitations',
    customerId: string,
    emails: string[],
  ): Promise<number> {
    const res = await trx
      .deleteFrom(table)
      .where('shop_id', '=', shopId)
      .where((eb) => ofCustomer(eb, customerId, 'email', emails))
      .executeTakeFirst()
    return Number(res.numDeletedRows)
  },

  // ---- the shop's item export ----

  /** Every item of the shop in primary-key order, in keyset pages of EXPORT_BATCH rows (`inBatches`), each query through `run`. */
  exportRows: (db: Db, shopId: string, run?: (query: () => Promise<ExportRow[]>) => Promise<ExportRow[]>): AsyncGenerator<ExportRow[]> =>
    inBatches<ExportRow>(
      EXPORT_BATCH,
      (after) =>
        after === undefined
          ? exportQuery(db, shopId)
          : exportQuery(db, shopId).where((eb) =>
              eb(
                eb.refTuple('i.owner_type', 'i.owner_id', 'i.list_id', 'i.product_id'),
                '>',
                eb.tuple(after.owner_type, after.owner_id, after.list_id, after.product_id),
              ),
            ),
      run,
    ),
}
