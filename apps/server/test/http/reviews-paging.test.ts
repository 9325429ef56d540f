/**
 * Every sort order is total and stable: paging through 137 reviews with equal ratings,
 * timestamps and helpful counts never repeats or misses one, whatever the sort and page
 * size. Also checks that each sort is answered by an index walk, without a sort step.
 */
import fc from 'fast-check'
import { CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BACKEND } from '../helpers/db.js'
import { type ReviewSort, reviewsRepo } from '../../src/modules/reviews/reviews.repo.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

const N = 137
const PRODUCT = '700700'
const SORTS: ReviewSort[] = ['newest', 'oldest', 'highest', 'lowest', 'most_helpful']

let t: TestApp
let shop: TestShop
let ids: number[] // ascending

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('free', { reviews_auto_approve: true })
  const headers = { 'x-storefront-key': shop.storefrontKey }
  ids = []
  for (let i = 0; i < N; i++) {
    const res = await t.call('POST', '/api/v1/reviews', {
      headers,
      body: { productId: PRODUCT, customerEmail: `p${i}@example.com`, customerName: `R${i}`, rating: 4, body: 'Same as the others.' },
    })
    expect(res.status).toBe(201)
    expect(res.body.status).toBe('approved')
    ids.push(res.body.id)
  }
  // Reviews of another product must never leak into the pages.
  for (let i = 0; i < 3; i++) {
    await t.call('POST', '/api/v1/reviews', {
      headers,
      body: { productId: '700701', customerEmail: `q${i}@example.com`, customerName: 'Q', rating: 4, body: 'Other.' },
    })
  }
  // A shop with many products, as in production: the listing's product must be selective.
  const at = Date.UTC(2025, 5, 1)
  const filler = Array.from({ length: 1000 }, (_, i) => ({
    shop_id: shop.id,
    product_id: String(800_000 + (i % 100)),
    customer_email: `f${i}@example.com`,
    customer_id: null,
    customer_name: 'F',
    rating: 1 + (i % 5),
    title: '',
    body: 'Filler.',
    photos: '[]',
    has_photos: 0,
    verified: 0,
    helpful_count: i % 7,
    status: 'approved' as const,
    reply_body: null,
    replied_at: null,
    created_at: at + i * 1000,
    updated_at: at,
  }))
  await t.storage.db.insertInto('reviews').values(filler).execute()
  // The same second for every review: only the id can break ties.
  await t.storage.db
    .updateTable('reviews')
    .set({ created_at: Date.UTC(2026, 0, 2, 3, 4, 5) })
    .where('shop_id', '=', shop.id)
    .where('product_id', 'in', [PRODUCT, '700701'])
    .execute()
  ids.sort((a, b) => a - b)
})
afterAll(() => t.close())

async function pageThrough(sort: ReviewSort, perPage: number): Promise<number[]> {
  const seen: number[] = []
  for (let page = 1; ; page++) {
    const res = await t.call('GET', `/api/v1/products/${PRODUCT}/reviews?sort=${sort}&per_page=${perPage}&page=${page}`, {
      headers: { 'x-storefront-key': shop.storefrontKey },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ page, perPage, total: N })
    expect(res.body.data.length).toBeLessThanOrEqual(perPage)
    for (const r of res.body.data) {
      expect(r.createdAt).toBe('2026-01-02T03:04:05Z')
      seen.push(r.id)
    }
    expect(res.body.hasMore).toBe(seen.length < N)
    if (!res.body.hasMore) return seen
    expect(res.body.data).toHaveLength(perPage)
  }
}

describe('paging through equal reviews', () => {
  it('never repeats or misses a review, for every sort and page size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SORTS), fc.integer({ min: 1, max: 50 }), async (sort, perPage) => {
        const seen = await pageThrough(sort, perPage)
        expect(new Set(seen).size).toBe(seen.length)
        expect(seen).toHaveLength(N)
        // The tie-breaker is the id: ascending for oldest, descending for the rest.
        expect(seen).toEqual(sort === 'oldest' ? ids : [...ids].reverse())
      }),
      {
        numRuns: 20,
        examples: [
          ['newest', 1],
          ['oldest', 50],
          ['most_helpful', 10],
          ['lowest', 7],
          ['highest', 137 % 50],
        ],
      },
    )
  })
})

describe('indexes', () => {
  /** The plan of one listing page; sorting must come from an index, never a sort step. */
  async function plan(sort: ReviewSort, filters: { rating?: number } = {}): Promise<string> {
    const compiled = reviewsRepo.approvedPage(t.storage.db, shop.id, PRODUCT, filters, sort, 10, 20).compile()
    if (BACKEND === 'sqlite') {
      const res = await t.storage.db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
      )
      return res.rows.map((r) => r.detail).join('\n')
    }
    await sql`analyze reviews`.execute(t.storage.db)
    return t.storage.db.transaction().execute(async (trx) => {
      // Tiny tables make a sequential scan look cheap; the question is whether an index can give the order.
      await sql`set local enable_seqscan = off`.execute(trx)
      await sql`set local enable_sort = off`.execute(trx)
      const res = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]))
      return res.rows.map((r) => r['QUERY PLAN']).join('\n')
    })
  }

  it.each(SORTS)('answers sort=%s with an index walk and no sort step', async (sort) => {
    for (const filters of [{}, { rating: 4 }]) {
      const p = await plan(sort, filters)
      // An index range of this product's approved reviews, already in the requested order.
      if (BACKEND === 'sqlite') {
        expect(p).toMatch(/USING INDEX reviews_by_\w+ \(shop_id=\? AND product_id=\? AND status=\?/)
        expect(p).not.toMatch(/TEMP B-TREE/)
      } else {
        expect(p).toMatch(/Index Cond: .*product_id = .*status = /)
        expect(p).not.toMatch(/Sort/)
      }
    }
  })
})
