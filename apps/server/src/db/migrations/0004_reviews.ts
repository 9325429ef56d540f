/**
 * Product reviews (docs/api.md, "Reviews"), aggregates, helpful votes and purchases. Each of
 * the listing's five orders has an index (shop_id, product_id, status, …sort keys), so a
 * page is an index range walk, never a sort.
 */
import { type Kysely, sql } from 'kysely'
import type { Backend } from '../types.js'
import { withAutoId } from '../dialect.js'

export async function up(db: Kysely<unknown>, backend: Backend): Promise<void> {
  // A global auto id (the API's review `id` is an integer); lookups by id always add `shop_id = ?`.
  await withAutoId(db.schema.createTable('reviews'), backend)
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('customer_email', 'text')
    .addColumn('customer_id', 'text')
    .addColumn('customer_name', 'text', (c) => c.notNull())
    .addColumn('rating', 'integer', (c) => c.notNull().check(sql`rating between 1 and 5`))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('photos', 'text', (c) => c.notNull())
    .addColumn('has_photos', 'integer', (c) => c.notNull())
    .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('helpful_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reply_body', 'text')
    .addColumn('replied_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()

  // One review per shop, product and e-mail (409 DUPLICATE_REVIEW); NULL (erased) e-mails never collide.
  await db.schema.createIndex('reviews_one_per_email').on('reviews').columns(['shop_id', 'product_id', 'customer_email']).unique().execute()
  // newest (backward walk) and oldest (forward walk).
  await db.schema.createIndex('reviews_by_time').on('reviews').columns(['shop_id', 'product_id', 'status', 'created_at', 'id']).execute()
  // highest: rating desc, created_at desc, id desc (backward walk); also `rating=` + newest/oldest.
  await db.schema
    .createIndex('reviews_by_rating')
    .on('reviews')
    .columns(['shop_id', 'product_id', 'status', 'rating', 'created_at', 'id'])
    .execute()
  // lowest: rating asc, then newest (mixed directions need their own index).
  await db.schema
    .createIndex('reviews_by_rating_low')
    .on('reviews')
    .columns(['shop_id', 'product_id', 'status', 'rating', 'created_at desc', 'id desc'])
    .execute()
  // most_helpful: helpful_count desc, created_at desc, id desc (backward walk).
  await db.schema
    .createIndex('reviews_by_helpful')
    .on('reviews')
    .columns(['shop_id', 'product_id', 'status', 'helpful_count', 'created_at', 'id'])
    .execute()
  // Moderation queue across products.
  await db.schema.createIndex('reviews_moderation').on('reviews').columns(['shop_id', 'status', 'created_at', 'id']).execute()
  // order.created: the reviews of one buyer (by e-mail or linked customer).
  await db.schema.createIndex('reviews_by_email').on('reviews').columns(['shop_id', 'customer_email']).execute()
  await db.schema.createIndex('reviews_by_customer').on('reviews').columns(['shop_id', 'customer_id']).execute()

  await db.schema
    .createTable('review_aggregates')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('review_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_sum', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_1', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_2', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_3', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_4', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rating_5', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('verified_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('with_photos_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('review_aggregates_pk', ['shop_id', 'product_id'])
    .execute()

  await db.schema
    .createTable('review_votes')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('review_id', 'bigint', (c) => c.notNull())
    .addColumn('voter_type', 'text', (c) => c.notNull())
    .addColumn('voter_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('review_votes_pk', ['shop_id', 'review_id', 'voter_type', 'voter_id'])
    .execute()

  await db.schema
    .createTable('purchases')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('product_id', 'text', (c) => c.notNull())
    .addColumn('buyer', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text')
    .addColumn('email', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('purchases_pk', ['shop_id', 'product_id', 'buyer'])
    .execute()
  // A review submitted without a token is linked to the customer an order tied its e-mail to.
  await db.schema.createIndex('purchases_by_email').on('purchases').columns(['shop_id', 'email']).execute()
}
