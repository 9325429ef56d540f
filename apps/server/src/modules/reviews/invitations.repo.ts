/**
 * Kysely queries of review invitations. Every query but the storefront's lookup by token
 * filters by `shop_id`; functions take the connection or the open transaction first.
 */
import type { Insertable } from 'kysely'
import type { Db } from '../../db/types.js'
import type { ReviewInvitationRow, ReviewInvitationsTable } from '../../db/schema.js'

export const invitationsRepo = {
  /** Inserts the rows; an order redelivered with its `order_id` adds nothing. Returns the rows written. */
  insert(db: Db, rows: Insertable<ReviewInvitationsTable>[]): Promise<ReviewInvitationRow[]> {
    return db
      .insertInto('review_invitations')
      .values(rows)
      .onConflict((oc) => oc.columns(['shop_id', 'order_id', 'product_id']).doNothing())
      .returningAll()
      .execute()
  },

  /** The storefront's lookup: the token is the credential (shops never share a token in practice: 192 random bits). */
  byToken(db: Db, token: string): Promise<ReviewInvitationRow | undefined> {
    return db.selectFrom('review_invitations').selectAll().where('token', '=', token).executeTakeFirst()
  },

  ofShop(db: Db, shopId: string, token: string): Promise<ReviewInvitationRow | undefined> {
    return db.selectFrom('review_invitations').selectAll().where('shop_id', '=', shopId).where('token', '=', token).executeTakeFirst()
  },

  /** The catalog's handle of an invited product (the review page's heading); null when the shop's events never told it. */
  async productHandle(db: Db, shopId: string, productId: string): Promise<string | null> {
    const row = await db
      .selectFrom('catalog_products')
      .select('handle')
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
      .executeTakeFirst()
    return row?.handle ?? null
  },

  /** Marks the invitation used when it is still usable at `at`; undefined when it is not (or is not the shop's). */
  claim(db: Db, shopId: string, token: string, at: number): Promise<ReviewInvitationRow | undefined> {
    return db
      .updateTable('review_invitations')
      .set({ used_at: at })
      .where('shop_id', '=', shopId)
      .where('token', '=', token)
      .where('used_at', 'is', null)
      .where('expires_at', '>', at)
      .returningAll()
      .executeTakeFirst()
  },

  async setReview(db: Db, shopId: string, token: string, reviewId: number): Promise<void> {
    await db
      .updateTable('review_invitations')
      .set({ review_id: reviewId })
      .where('shop_id', '=', shopId)
      .where('token', '=', token)
      .execute()
  },

  list(
    db: Db,
    shopId: string,
    f: { orderId?: string | undefined; email?: string | undefined },
    limit: number,
  ): Promise<ReviewInvitationRow[]> {
    let q = db.selectFrom('review_invitations').selectAll().where('shop_id', '=', shopId)
    if (f.orderId !== undefined) q = q.where('order_id', '=', f.orderId)
    if (f.email !== undefined) q = q.where('email', '=', f.email)
    return q.orderBy('created_at', 'desc').orderBy('token').limit(limit).execute()
  },
}
