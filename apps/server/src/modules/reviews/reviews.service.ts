/**
 * Product reviews (docs/api.md, "Reviews"): listing, summary, submit, moderation and helpful votes.
 * Every method takes the request context first. Aggregates (approved reviews only) change
 * in the same transaction as the review write that changes them.
 */
import { primaryReads, type Reads } from '../../db/replica.js'
import type { Db } from '../../db/types.js'
import { isUniqueViolation } from '../../db/dialect.js'
import type { ReviewRow, ReviewStatus, ReviewVerification, VoterType } from '../../db/schema.js'
import { AppError, type ErrorDetail, invalid, notFound } from '../../lib/errors.js'
import { normalizePlatformId, platformIdOf, platformIdRule } from '../../lib/platform-ids.js'
import { codePointLength, isEmailAddress } from '../../lib/text.js'
import { pseudonymousAddress } from '../../lib/client-address.js'
import { DAY_MS, isoSeconds, now } from '../../lib/time.js'
import type { RequestContext } from '../auth/auth.types.js'
import { claimInvitation } from './invitations.service.js'
import { invitationsRepo } from './invitations.repo.js'
import { normalizeEmail } from './purchases.js'
import {
  type AggregateTotal,
  contributionOf,
  type PublicReviewRow,
  type ReviewFilters,
  type ReviewSort,
  reviewsRepo as repo,
} from './reviews.repo.js'
import {
  type AdminReviewView,
  type PublicReviewView,
  RATING_MAX,
  RATING_MIN,
  REVIEW_LIMITS as LIMITS,
  type SubmitInput,
} from './reviews.schemas.js'

/** Guest helpful votes for one review from one client address (keyed as `clientAddressKey`) within 24 h. */
export const GUEST_VOTES_PER_ADDRESS = 5

// Lengths are counted in Unicode code points (codePointLength), after trimming.

/** Review times are whole seconds: the order clients see (seconds precision) is the order we sort by. */
const toSeconds = (ms: number): number => Math.floor(ms / 1000) * 1000

export function publicView(row: PublicReviewRow): PublicReviewView {
  return {
    id: Number(row.id),
    productId: row.product_id,
    customerName: row.customer_name,
    rating: row.rating,
    title: row.title,
    body: row.body,
    photos: JSON.parse(row.photos) as string[],
    verifiedPurchase: row.verified === 1,
    helpfulCount: Number(row.helpful_count),
    replyBody: row.reply_body,
    repliedAt: row.replied_at === null ? null : isoSeconds(Number(row.replied_at)),
    createdAt: isoSeconds(Number(row.created_at)),
  }
}

export function adminView(row: ReviewRow): AdminReviewView {
  return {
    ...publicView(row),
    verifiedBy: row.verified === 1 ? row.verified_by : null,
    customerEmail: row.customer_email,
    customerId: row.customer_id,
    status: row.status,
  }
}

export interface Page<T> {
  data: T[]
  page: number
  perPage: number
  total: number
  hasMore: boolean
}

const productIdOf = (raw: string, path: string): string => platformIdOf(raw.trim(), 'Product', path)

interface CleanSubmission {
  productId: string
  email: string
  name: string
  rating: number
  title: string
  body: string
  photos: string[]
  invitation: string | undefined
}

/** Trims every string, then applies the submission rules of docs/api.md, "Reviews"; all failures are reported together. */
function cleanSubmission(input: SubmitInput): CleanSubmission {
  const details: ErrorDetail[] = []
  const fail = (path: string, message: string) => details.push({ path, message })
  const productId = normalizePlatformId(input.productId.trim(), 'Product')
  if (productId === null) fail('body.productId', platformIdRule('Product'))
  const email = normalizeEmail(input.customerEmail)
  if (codePointLength(email) > LIMITS.email) fail('body.customerEmail', `must be at most ${LIMITS.email} characters`)
  else if (!isEmailAddress(email)) fail('body.customerEmail', 'must be an e-mail address')
  const name = input.customerName.trim()
  if (codePointLength(name) < 1 || codePointLength(name) > LIMITS.name) fail('body.customerName', `must be 1 to ${LIMITS.name} characters`)
  const title = (input.title ?? '').trim()
  if (codePointLength(title) > LIMITS.title) fail('body.title', `must be at most ${LIMITS.title} characters`)
  const body = input.body.trim()
  if (codePointLength(body) < 1 || codePointLength(body) > LIMITS.body) fail('body.body', `must be 1 to ${LIMITS.body} characters`)
  const photos = (input.photos ?? []).map((p) => p.trim())
  photos.forEach((p, i) => {
    let ok: boolean
    try {
      ok = p.length <= LIMITS.photoUrl && new URL(p).protocol === 'https:'
    } catch {
      ok = false
    }
    if (!ok) details.push({ path: `body.photos.${i}`, message: `must be an https URL of at most ${LIMITS.photoUrl} characters`, index: i })
  })
  if (details.length > 0) throw invalid(details)
  return { productId: productId as string, email, name, rating: input.rating, title, body, photos, invitation: input.invitation }
}

function cleanReply(raw: string): string {
  const body = raw.trim()
  if (codePointLength(body) < 1 || codePointLength(body) > LIMITS.reply)
    throw invalid([{ path: 'body.body', message: `must be 1 to ${LIMITS.reply} characters` }])
  return body
}

function voterOf(ctx: RequestContext): { type: VoterType; id: string } {
  if (ctx.actor.kind === 'customer') return { type: 'customer', id: ctx.actor.customerId }
  if (ctx.actor.kind === 'guest') return { type: 'guest', id: ctx.actor.guestId }
  throw invalid(
    [{ path: 'headers.x-guest-id', message: 'is required without a customer token' }],
    'A helpful vote needs a voter: a customer token, or a guest id (X-Guest-Id header or guest_id query) beside the storefront key',
  )
}

export function createReviewsService(deps: { db: Db; reads?: Reads; clock?: () => number }) {
  const { db } = deps
  const clock = deps.clock ?? now
  const reads = deps.reads ?? primaryReads(db)

  /** A review of the caller's shop, or 404. */
  async function mustGet(trx: Db, shopId: string, id: number, forUpdate = false): Promise<ReviewRow> {
    const row = await repo.byId(trx, shopId, id, { lock: forUpdate })
    if (!row) throw notFound('Review')
    return row
  }

  async function setStatus(ctx: RequestContext, id: number, to: ReviewStatus): Promise<AdminReviewView> {
    const shopId = ctx.shop.id
    return db.transaction().execute(async (trx) => {
      const row = await mustGet(trx, shopId, id, true)
      if (row.status === to) return adminView(row) // the same status again is a harmless 200
      const at = clock()
      const updated = await repo.update(trx, shopId, id, { status: to, updated_at: at })
      if (row.status === 'approved') await repo.applyToAggregate(trx, shopId, row.product_id, contributionOf(row), -1, at)
      if (to === 'approved') await repo.applyToAggregate(trx, shopId, row.product_id, contributionOf(row), 1, at)
      return adminView(updated ?? row)
    })
  }

  /** The aggregate's counts that give the total of these filters; undefined when it cannot (several filters at once). */
  function totalOf(f: ReviewFilters): AggregateTotal | undefined {
    const active = [f.rating !== undefined, f.verified !== undefined, f.withPhotos !== undefined].filter(Boolean).length
    if (active > 1) return undefined
    if (f.rating !== undefined) return { take: `rating_${f.rating}` as AggregateTotal['take'] }
    if (f.verified !== undefined) return f.verified ? { take: 'verified_count' } : { take: 'review_count', minus: 'verified_count' }
    if (f.withPhotos !== undefined)
      return f.withPhotos ? { take: 'with_photos_count' } : { take: 'review_count', minus: 'with_photos_count' }
    return { take: 'review_count' }
  }

  async function approvedTotal(db: Db, shopId: string, productId: string, f: ReviewFilters): Promise<number> {
    const total = totalOf(f)
    if (total === undefined) return repo.countApproved(db, shopId, productId, f)
    const agg = await repo.aggregate(db, shopId, productId)
    if (!agg) return 0
    return Number(agg[total.take]) - (total.minus === undefined ? 0 : Number(agg[total.minus]))
  }

  return {
    /** A public list: the same for every caller of the shop and cached by browsers for minutes, so it may lag (the read replica). */
    async list(
      ctx: RequestContext,
      rawProductId: string,
      q: { page: number; perPage: number; sort: ReviewSort } & ReviewFilters,
    ): Promise<Page<PublicReviewView>> {
      const shopId = ctx.shop.id
      const productId = productIdOf(rawProductId, 'params.productId')
      const filters: ReviewFilters = { rating: q.rating, verified: q.verified, withPhotos: q.withPhotos }
      const offset = (q.page - 1) * q.perPage
      const fromAggregate = totalOf(filters)
      const { db } = reads.reader()
      if (fromAggregate !== undefined) {
        // The page and its total in one statement; past the end (no row), the total alone.
        const rows = await repo.approvedPageWithTotal(db, shopId, productId, filters, q.sort, q.perPage, offset, fromAggregate)
        const [first] = rows
        const total = first === undefined ? await approvedTotal(db, shopId, productId, filters) : Number(first.total_n ?? 0)
        return { data: rows.map(publicView), page: q.page, perPage: q.perPage, total, hasMore: offset + rows.length < total }
      }
      const total = await approvedTotal(db, shopId, productId, filters)
      const rows = offset >= total ? [] : await repo.approvedPage(db, shopId, productId, filters, q.sort, q.perPage, offset).execute()
      return { data: rows.map(publicView), page: q.page, perPage: q.perPage, total, hasMore: offset + rows.length < total }
    },

    /** Public, like `list`: may lag (the read replica). */
    async summary(ctx: RequestContext, rawProductId: string) {
      const productId = productIdOf(rawProductId, 'params.productId')
      const agg = await repo.aggregate(reads.reader().db, ctx.shop.id, productId)
      const count = agg ? Number(agg.review_count) : 0
      const n = (v: number | undefined) => Number(v ?? 0)
      return {
        productId,
        reviewCount: count,
        averageRating: count === 0 || !agg ? null : Math.round((Number(agg.rating_sum) * 100) / count) / 100,
        ratingDistribution: {
          '1': n(agg?.rating_1),
          '2': n(agg?.rating_2),
          '3': n(agg?.rating_3),
          '4': n(agg?.rating_4),
          '5': n(agg?.rating_5),
        },
        verifiedCount: n(agg?.verified_count),
        withPhotosCount: n(agg?.with_photos_count),
        bestRating: RATING_MAX,
        worstRating: RATING_MIN,
      }
    },

    /** Approved only, unless the caller is an admin (who also sees e-mail and status). */
    async get(ctx: RequestContext, id: number): Promise<PublicReviewView | AdminReviewView> {
      const row = await mustGet(db, ctx.shop.id, id)
      if (ctx.actor.kind === 'admin') return adminView(row)
      if (row.status !== 'approved') throw notFound('Review')
      return publicView(row)
    },

    /**
     * The author comes from proof only: an invitation (linked to its order's customer, if
     * any, and verified), else a customer token (verified when the customer's order holds
     * the product), else nobody (never verified). The typed e-mail is stored, nothing more.
     */
    async submit(ctx: RequestContext, input: SubmitInput): Promise<{ id: number; status: 'pending' | 'approved' }> {
      const shopId = ctx.shop.id
      const r = cleanSubmission(input)
      const status = ctx.shop.settings.reviews_auto_approve ? ('approved' as const) : ('pending' as const)
      const at = clock()
      try {
        const id = await db.transaction().execute(async (trx) => {
          let customerId: string | null = null
          let verifiedBy: ReviewVerification | null = null
          if (r.invitation !== undefined) {
            customerId = (await claimInvitation(trx, shopId, r.invitation, r.productId, at)).customer_id
            verifiedBy = 'invitation'
          } else if (ctx.actor.kind === 'customer') {
            customerId = ctx.actor.customerId
            if (await repo.hasPurchased(trx, shopId, r.productId, customerId)) verifiedBy = 'customer_order'
          }
          if (await repo.exists(trx, shopId, r.productId, customerId === null ? { email: r.email } : { customerId })) throw duplicate()
          const row = {
            shop_id: shopId,
            product_id: r.productId,
            customer_email: r.email,
            customer_id: customerId,
            customer_name: r.name,
            rating: r.rating,
            title: r.title,
            body: r.body,
            photos: JSON.stringify(r.photos),
            has_photos: r.photos.length > 0 ? 1 : 0,
            verified: verifiedBy === null ? 0 : 1,
            verified_by: verifiedBy,
            helpful_count: 0,
            status,
            reply_body: null,
            replied_at: null,
            created_at: toSeconds(at),
            updated_at: at,
          }
          const newId = await repo.insert(trx, row)
          if (r.invitation !== undefined) await invitationsRepo.setReview(trx, shopId, r.invitation, newId)
          if (status === 'approved') await repo.applyToAggregate(trx, shopId, r.productId, contributionOf(row), 1, at)
          return newId
        })
        return { id, status }
      } catch (err) {
        // Two submissions racing past the existence check meet the unique index.
        if (isUniqueViolation(err)) throw duplicate()
        throw err
      }
    },

    async adminList(
      ctx: RequestContext,
      q: { status?: ReviewStatus | undefined; productId?: string | undefined; page: number; perPage: number },
    ): Promise<Page<AdminReviewView>> {
      const f = { status: q.status, productId: q.productId === undefined ? undefined : productIdOf(q.productId, 'query.product_id') }
      const total = await repo.adminCount(db, ctx.shop.id, f)
      const offset = (q.page - 1) * q.perPage
      const rows = offset >= total ? [] : await repo.adminPage(db, ctx.shop.id, f, q.perPage, offset).execute()
      return { data: rows.map(adminView), page: q.page, perPage: q.perPage, total, hasMore: offset + rows.length < total }
    },

    approve: (ctx: RequestContext, id: number) => setStatus(ctx, id, 'approved'),
    reject: (ctx: RequestContext, id: number) => setStatus(ctx, id, 'rejected'),

    async reply(ctx: RequestContext, id: number, rawBody: string): Promise<AdminReviewView> {
      const body = cleanReply(rawBody)
      const at = clock()
      const row = await repo.update(db, ctx.shop.id, id, { reply_body: body, replied_at: toSeconds(at), updated_at: at })
      if (!row) throw notFound('Review')
      return adminView(row)
    },

    async deleteReply(ctx: RequestContext, id: number): Promise<AdminReviewView> {
      const row = await repo.update(db, ctx.shop.id, id, { reply_body: null, replied_at: null, updated_at: clock() })
      if (!row) throw notFound('Review')
      return adminView(row)
    },

    async remove(ctx: RequestContext, id: number): Promise<void> {
      const shopId = ctx.shop.id
      await db.transaction().execute(async (trx) => {
        await mustGet(trx, shopId, id, true)
        const row = await repo.delete(trx, shopId, id)
        if (!row) throw notFound('Review')
        if (row.status === 'approved') await repo.applyToAggregate(trx, shopId, row.product_id, contributionOf(row), -1, clock())
      })
    },

    /**
     * Idempotent: a second vote (or un-vote) by the same voter changes nothing. Approved
     * reviews only. Guest ids cost nothing to invent, so a client address casts at most
     * GUEST_VOTES_PER_ADDRESS guest votes for one review within 24 h (429 past it); the
     * review row's lock orders the votes of one review, so the count is exact.
     */
    async vote(ctx: RequestContext, id: number, helpful: boolean, clientAddress: string): Promise<{ helpfulCount: number }> {
      const voter = voterOf(ctx)
      const shopId = ctx.shop.id
      return db.transaction().execute(async (trx) => {
        const row = await mustGet(trx, shopId, id, true)
        if (row.status !== 'approved') throw notFound('Review')
        const at = clock()
        const clientKey = voter.type === 'guest' ? pseudonymousAddress(clientAddress) : null
        const changed = helpful ? await repo.addVote(trx, shopId, id, voter, clientKey, at) : await repo.removeVote(trx, shopId, id, voter)
        if (!changed) return { helpfulCount: Number(row.helpful_count) }
        if (helpful && clientKey !== null) {
          const recent = await repo.votesFromClient(trx, shopId, id, clientKey, at - DAY_MS)
          if (recent.count > GUEST_VOTES_PER_ADDRESS) {
            const retryAfter = Math.max(1, Math.ceil((recent.oldest + DAY_MS - at) / 1000))
            throw new AppError(
              'RATE_LIMITED',
              `At most ${GUEST_VOTES_PER_ADDRESS} guest votes for one review from one address within 24 h; retry in ${retryAfter} s`,
              undefined,
              {
                'retry-after': String(retryAfter),
              },
            )
          }
        }
        return { helpfulCount: await repo.addHelpful(trx, shopId, id, helpful ? 1 : -1, at) }
      })
    },
  }
}

const duplicate = () => new AppError('DUPLICATE_REVIEW', 'This customer or e-mail address has already reviewed this product')

export type ReviewsService = ReturnType<typeof createReviewsService>
