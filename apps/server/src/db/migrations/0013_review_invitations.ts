import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Reviews: identity from proof (docs/api.md, "Verified purchases and invitations").
 * - `review_invitations`: one single-use token per product of an `order.created`; the token
 *   alone is indexed too (the storefront's lookup has no credentials); a redelivered order
 *   meets the unique (shop_id, order_id, product_id) index.
 * - `reviews.verified_by`: `customer_order` | `invitation`.
 * - One review per product per customer (linked) and per e-mail (unlinked): two partial
 *   indexes, so an e-mail typed into an unlinked review never blocks the customer's own.
 * - `review_votes.client_key`: a pseudonymous key of a guest voter's address (per-address cap).
 * Older rows keep `verified` only when a linked customer's order proves it; aggregates recounted.
 */
export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  // Idempotent: a database that has the table has had this migration (tests rerun later migrations).
  const present =
    backend === 'postgres'
      ? await sql<{ n: number }>`select 1 as n where to_regclass('review_invitations') is not null`.execute(db)
      : await sql<{ n: number }>`select 1 as n from sqlite_master where type = 'table' and name = 'review_invitations'`.execute(db)
  if (present.rows.length > 0) return

  await db.schema
    .createTable('review_invitations')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text')
    .addColumn('customer_id', 'text')
    .addColumn('email', 'text')
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('review_id', 'bigint')
    .addPrimaryKeyConstraint('review_invitations_pk', ['shop_id', 'token'])
    .execute()
  await db.schema.createIndex('review_invitations_by_token').on('review_invitations').column('token').execute()
  await db.schema
    .createIndex('review_invitations_one_per_order_product')
    .on('review_invitations')
    .columns(['shop_id', 'order_id', 'product_id'])
    .unique()
    .execute()
  await db.schema.createIndex('review_invitations_by_customer').on('review_invitations').columns(['shop_id', 'customer_id']).execute()
  await db.schema.createIndex('review_invitations_by_email').on('review_invitations').columns(['shop_id', 'email']).execute()

  await db.schema.alterTable('reviews').addColumn('verified_by', 'text').execute()
  await db.schema.alterTable('review_votes').addColumn('client_key', 'text').execute()
  await db.schema
    .createIndex('review_votes_by_client')
    .on('review_votes')
    .columns(['shop_id', 'review_id', 'client_key', 'created_at'])
    .execute()

  // Earlier rules let two linked reviews of one product carry different e-mails: the later ones are unlinked.
  await sql`update reviews set customer_id = null where customer_id is not null and exists (
    select 1 from reviews r2 where r2.shop_id = reviews.shop_id and r2.product_id = reviews.product_id and r2.customer_id = reviews.customer_id and r2.id < reviews.id)`.execute(
    db,
  )
  await db.schema.dropIndex('reviews_one_per_email').execute()
  await db.schema
    .createIndex('reviews_one_per_email')
    .on('reviews')
    .columns(['shop_id', 'product_id', 'customer_email'])
    .unique()
    .where(sql.ref('customer_id'), 'is', null)
    .execute()
  await db.schema
    .createIndex('reviews_one_per_customer')
    .on('reviews')
    .columns(['shop_id', 'product_id', 'customer_id'])
    .unique()
    .where(sql.ref('customer_id'), 'is not', null)
    .execute()

  await sql`update reviews set verified = 0 where verified = 1 and (customer_id is null or not exists (
    select 1 from purchases p where p.shop_id = reviews.shop_id and p.product_id = reviews.product_id and p.buyer = 'customer:' || reviews.customer_id))`.execute(
    db,
  )
  await sql`update reviews set verified_by = 'customer_order' where verified = 1`.execute(db)
  await sql`update review_aggregates set verified_count = (
    select count(*) from reviews r where r.shop_id = review_aggregates.shop_id and r.product_id = review_aggregates.product_id and r.status = 'approved' and r.verified = 1)`.execute(
    db,
  )
}
