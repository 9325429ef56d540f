/**
 * Kysely queries of the reviews module. Every query filters by `shop_id`; functions take
 * the connection or the open transaction (`Db`) as their first argument.
 */
import type { Db } from '../../db/types.js'
import { backendOf, lockedForUpdate } from '../../db/dialect.js'
import { precompiled } from '../../db/precompiled.js'
import type { PurchasesTable, ReviewAggregateRow, ReviewRow, ReviewStatus, ReviewsTable, VoterType } from '../../db/schema.js'
import type { Insertable } from 'kysely'
import { sql } from 'kysely'

export type ReviewSort = 'newest' | 'oldest' | 'highest' | 'lowest' | 'most_helpful'

export interface ReviewFilters {
  rating?: number | undefined
  verified?: boolean | undefined
  withPhotos?: boolean | undefined
}

/** A count of `review_aggregates` (or two, `take − minus`) that is the total of one filter. */
type AggregateCount =
  'review_count' | 'rating_1' | 'rating_2' | 'rating_3' | 'rating_4' | 'rating_5' | 'verified_count' | 'with_photos_count'
export interface AggregateTotal {
  take: AggregateCount
  minus?: AggregateCount
}

/** What one review adds to its product's aggregate while it is approved. */
export interface Contribution {
  rating: number
  verified: number
  has_photos: number
}

/** The columns a public review shows (`publicView`): a listed page reads these only. */
export const PUBLIC_COLUMNS = [
  'id',
  'product_id',
  'customer_name',
  'rating',
  'title',
  'body',
  'photos',
  'verified',
  'helpful_count',
  'reply_body',
  'replied_at',
  'created_at',
] as const
export type PublicReviewRow = Pick<ReviewRow, (typeof PUBLIC_COLUMNS)[number]>

/** `approvedPage` ordered by `sort`. */
function ordered<Q extends { orderBy: (column: 'created_at' | 'id' | 'rating' | 'helpful_count', direction: 'asc' | 'desc') => Q }>(
  q: Q,
  sort: ReviewSort,
): Q {
  if (sort === 'oldest') return q.orderBy('created_at', 'asc').orderBy('id', 'asc')
  if (sort === 'highest' || sort === 'lowest') q = q.orderBy('rating', sort === 'highest' ? 'desc' : 'asc')
  if (sort === 'most_helpful') q = q.orderBy('helpful_count', 'desc')
  // Newest first, and so every other order's ties.
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc')
}

/** The filters as the columns hold them (`verified`, `has_photos`: 0 or 1); absent ones are not set. */
type FilterColumns = Partial<Record<'rating' | 'verified' | 'has_photos', number>>
function filterColumns(f: ReviewFilters): FilterColumns {
  const c: FilterColumns = {}
  if (f.rating !== undefined) c.rating = f.rating
  if (f.verified !== undefined) c.verified = f.verified ? 1 : 0
  if (f.withPhotos !== undefined) c.has_photos = f.withPhotos ? 1 : 0
  return c
}

/** The named parameters of a page-with-total statement; `filters` holds the values of the statement's filter columns. */
interface PageParams {
  shopId: string
  productId: string
  limit: number
  offset: number
  filters: FilterColumns
}

type PageWithTotal = (db: Db, p: PageParams) => Promise<(PublicReviewRow & { total_n: number | string | null })[]>

/**
 * The page-with-total statements, compiled once per shape (sort, which filters, which
 * aggregate columns: a few dozen at most; db/precompiled.ts): the listing is the reviews'
 * hot read, and on PostgreSQL a precompiled text goes as a named prepared statement.
 */
const pagesWithTotal = new Map<string, PageWithTotal>()

function pageWithTotalStatement(filters: FilterColumns, sort: ReviewSort, total: AggregateTotal): PageWithTotal {
  const used = Object.keys(filters) as (keyof FilterColumns)[]
  const key = `${sort}|${used.join(',')}|${total.take}|${total.minus ?? ''}`
  let statement = pagesWithTotal.get(key)
  if (statement === undefined) {
    const column = (name: AggregateCount) => sql<number>`a.${sql.ref(name)}`
    const expr = total.minus === undefined ? column(total.take) : sql<number>`${column(total.take)} - ${column(total.minus)}`
    statement = precompiled((db, p: PageParams) =>
      ordered(approvedWhere(db, p.shopId, p.productId, Object.fromEntries(used.map((c) => [c, p.filters[c]]))).select(PUBLIC_COLUMNS), sort)
        .limit(p.limit)
        .offset(p.offset)
        .select((eb) =>
          eb
            .selectFrom('review_aggregates as a')
            .select(expr.as('n'))
            .where('a.shop_id', '=', p.shopId)
            .where('a.product_id', '=', p.productId)
            .as('total_n'),
        ),
    ) as PageWithTotal
    pagesWithTotal.set(key, statement)
  }
  return statement
}

/** A product's approved reviews whose columns hold these values. */
function approvedWhere(db: Db, shopId: string, productId: string, c: FilterColumns) {
  let q = db.selectFrom('reviews').where('shop_id', '=', shopId).where('product_id', '=', productId).where('status', '=', 'approved')
  for (const [column, value] of Object.entries(c) as [keyof FilterColumns, number][]) q = q.where(column, '=', value)
  return q
}

/** A product's approved reviews that pass the filters. */
const approvedOf = (db: Db, shopId: string, productId: string, f: ReviewFilters) => approvedWhere(db, shopId, productId, filterColumns(f))

type AdminFilters = { status?: ReviewStatus | undefined; productId?: string | undefined }

/** The shop's reviews, of one status and/or product when given. */
function moderatedOf(db: Db, shopId: string, f: AdminFilters) {
  let q = db.selectFrom('reviews').where('shop_id', '=', shopId)
  if (f.status !== undefined) q = q.where('status', '=', f.status)
  if (f.productId !== undefined) q = q.where('product_id', '=', f.productId)
  return q
}

export const reviewsRepo = {
  async insert(db: Db, row: Insertable<ReviewsTable>): Promise<number> {
    const { id } = await db.insertInto('reviews').values(row).returning('id').executeTakeFirstOrThrow()
    return Number(id)
  },

  /** `lock`: FOR UPDATE where the backend has row locks. */
  byId(db: Db, shopId: string, id: number, opts: { lock?: boolean } = {}): Promise<ReviewRow | undefined> {
    const q = db.selectFrom('reviews').selectAll().where('shop_id', '=', shopId).where('id', '=', id)
    return (opts.lock ? lockedForUpdate(q, backendOf(db)) : q).executeTakeFirst()
  },

  /** One review per product per customer (linked reviews) and per e-mail (unlinked ones): the two kinds never meet. */
  async exists(db: Db, shopId: string, productId: string, author: { customerId: string } | { email: string }): Promise<boolean> {
    let q = db.selectFrom('reviews').select('id').where('shop_id', '=', shopId).where('product_id', '=', productId)
    q =
      'customerId' in author
        ? q.where('customer_id', '=', author.customerId)
        : q.where('customer_id', 'is', null).where('customer_email', '=', author.email)
    return (await q.executeTakeFirst()) !== undefined
  },

  /** One page of a product's approved reviews, in one of the five documented orders (each backed by an index). */
  approvedPage(db: Db, shopId: string, productId: string, filters: ReviewFilters, sort: ReviewSort, limit: number, offset: number) {
    return ordered(approvedOf(db, shopId, productId, filters).select(PUBLIC_COLUMNS), sort)
      .limit(limit)
      .offset(offset)
  },

  /**
   * The page with, on each row, the filtered total read from the product's aggregate row in
   * the same statement (`total_n`; `total` names the aggregate's columns to take): one round
   * trip instead of two on PostgreSQL, and one snapshot for both. An empty page carries no
   * total (the caller reads the aggregate then).
   */
  approvedPageWithTotal(
    db: Db,
    shopId: string,
    productId: string,
    filters: ReviewFilters,
    sort: ReviewSort,
    limit: number,
    offset: number,
    total: AggregateTotal,
  ) {
    const columns = filterColumns(filters)
    return pageWithTotalStatement(columns, sort, total)(db, { shopId, productId, limit, offset, filters: columns })
  },

  /** Only for filter combinations the aggregate cannot answer (e.g. rating and verified together). */
  async countApproved(db: Db, shopId: string, productId: string, filters: ReviewFilters): Promise<number> {
    const row = await approvedOf(db, shopId, productId, filters)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  },

  aggregate(db: Db, shopId: string, productId: string): Promise<ReviewAggregateRow | undefined> {
    return db
      .selectFrom('review_aggregates')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
      .executeTakeFirst()
  },

  /** Adds (sign +1) or removes (sign -1) one approved review's contribution to its product's aggregate. */
  async applyToAggregate(db: Db, shopId: string, productId: string, c: Contribution, sign: 1 | -1, at: number): Promise<void> {
    await db
      .insertInto('review_aggregates')
      .values({
        shop_id: shopId,
        product_id: productId,
        review_count: 0,
        rating_sum: 0,
        rating_1: 0,
        rating_2: 0,
        rating_3: 0,
        rating_4: 0,
        rating_5: 0,
        verified_count: 0,
        with_photos_count: 0,
        updated_at: at,
      })
      .onConflict((oc) => oc.columns(['shop_id', 'product_id']).doNothing())
      .execute()
    const r = (n: number) => (c.rating === n ? sign : 0)
    await db
      .updateTable('review_aggregates')
      .set((eb) => ({
        review_count: eb('review_count', '+', sign),
        rating_sum: eb('rating_sum', '+', sign * c.rating),
        rating_1: eb('rating_1', '+', r(1)),
        rating_2: eb('rating_2', '+', r(2)),
        rating_3: eb('rating_3', '+', r(3)),
        rating_4: eb('rating_4', '+', r(4)),
        rating_5: eb('rating_5', '+', r(5)),
        verified_count: eb('verified_count', '+', sign * c.verified),
        with_photos_count: eb('with_photos_count', '+', sign * c.has_photos),
        updated_at: at,
      }))
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
      .execute()
  },

  async addVerifiedToAggregate(db: Db, shopId: string, productId: string, n: number, at: number): Promise<void> {
    await db
      .updateTable('review_aggregates')
      .set((eb) => ({ verified_count: eb('verified_count', '+', n), updated_at: at }))
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
      .execute()
  },

  async update(
    db: Db,
    shopId: string,
    id: number,
    patch: Partial<Pick<ReviewRow, 'status' | 'reply_body' | 'replied_at' | 'updated_at'>>,
  ): Promise<ReviewRow | undefined> {
    return db.updateTable('reviews').set(patch).where('shop_id', '=', shopId).where('id', '=', id).returningAll().executeTakeFirst()
  },

  async delete(db: Db, shopId: string, id: number): Promise<ReviewRow | undefined> {
    await db.deleteFrom('review_votes').where('shop_id', '=', shopId).where('review_id', '=', id).execute()
    return db.deleteFrom('reviews').where('shop_id', '=', shopId).where('id', '=', id).returningAll().executeTakeFirst()
  },

  /** Moderation queue: any status, optionally one status and/or product; pending first when no status is given. */
  adminPage(db: Db, shopId: string, f: AdminFilters, limit: number, offset: number) {
    let q = moderatedOf(db, shopId, f).selectAll()
    if (f.status === undefined) q = q.orderBy(sql`case when status = 'pending' then 0 else 1 end`)
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset)
  },

  async adminCount(db: Db, shopId: string, f: AdminFilters): Promise<number> {
    return Number(
      (
        await moderatedOf(db, shopId, f)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  },

  /** True when the vote is new. */
  async addVote(
    db: Db,
    shopId: string,
    reviewId: number,
    voter: { type: VoterType; id: string },
    clientKey: string | null,
    at: number,
  ): Promise<boolean> {
    const row = await db
      .insertInto('review_votes')
      .values({ shop_id: shopId, review_id: reviewId, voter_type: voter.type, voter_id: voter.id, client_key: clientKey, created_at: at })
      .onConflict((oc) => oc.columns(['shop_id', 'review_id', 'voter_type', 'voter_id']).doNothing())
      .returning('review_id')
      .executeTakeFirst()
    return row !== undefined
  },

  /** Guest votes for the review from one client since `since`, and the time of the oldest. */
  async votesFromClient(
    db: Db,
    shopId: string,
    reviewId: number,
    clientKey: string,
    since: number,
  ): Promise<{ count: number; oldest: number }> {
    const row = await db
      .selectFrom('review_votes')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('shop_id', '=', shopId)
      .where('review_id', '=', reviewId)
      .where('client_key', '=', clientKey)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow()
    return { count: Number(row.n), oldest: Number(row.oldest) }
  },

  /** True when a vote was there to take back. */
  async removeVote(db: Db, shopId: string, reviewId: number, voter: { type: VoterType; id: string }): Promise<boolean> {
    const row = await db
      .deleteFrom('review_votes')
      .where('shop_id', '=', shopId)
      .where('review_id', '=', reviewId)
      .where('voter_type', '=', voter.type)
      .where('voter_id', '=', voter.id)
      .returning('review_id')
      .executeTakeFirst()
    return row !== undefined
  },

  async addHelpful(db: Db, shopId: string, id: number, delta: number, at: number): Promise<number> {
    const row = await db
      .updateTable('reviews')
      .set((eb) => ({ helpful_count: eb('helpful_count', '+', delta), updated_at: at }))
      .where('shop_id', '=', shopId)
      .where('id', '=', id)
      .returning('helpful_count')
      .executeTakeFirstOrThrow()
    return Number(row.helpful_count)
  },

  // ---- purchases (purchases.ts) ----

  /** Records purchases (rows of their shop); a known buyer of a product keeps its row, gaining the customer id or e-mail it lacked. */
  async addPurchases(db: Db, rows: Insertable<PurchasesTable>[]): Promise<void> {
    await db
      .insertInto('purchases')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['shop_id', 'product_id', 'buyer']).doUpdateSet((eb) => ({
          customer_id: eb.fn.coalesce('purchases.customer_id', eb.ref('excluded.customer_id')),
          email: eb.fn.coalesce('purchases.email', eb.ref('excluded.email')),
        })),
      )
      .execute()
  },

  /** Whether an order of the customer contained the product. */
  async hasPurchased(db: Db, shopId: string, productId: string, customerId: string): Promise<boolean> {
    const row = await db
      .selectFrom('purchases')
      .select('buyer')
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
      .where('buyer', '=', `customer:${customerId}`)
      .executeTakeFirst()
    return row !== undefined
  },

  /** Marks the customer's reviews of these products verified by an order; returns the product and status of each review marked. */
  markVerifiedByOrder(
    db: Db,
    shopId: string,
    customerId: string,
    productIds: string[],
    at: number,
  ): Promise<Pick<ReviewRow, 'product_id' | 'status'>[]> {
    return db
      .updateTable('reviews')
      .set({ verified: 1, verified_by: 'customer_order', updated_at: at })
      .where('shop_id', '=', shopId)
      .where('product_id', 'in', productIds)
      .where('verified', '=', 0)
      .where('customer_id', '=', customerId)
      .returning(['product_id', 'status'])
      .execute()
  },
}

export const contributionOf = (row: Pick<ReviewRow, 'rating' | 'verified' | 'has_photos'>): Contribution => ({
  rating: row.rating,
  verified: row.verified,
  has_photos: row.has_photos,
})
