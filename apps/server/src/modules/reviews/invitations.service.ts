/**
 * Review invitations: how a buyer, guest checkout included, gets a verified review. Every
 * product of an `order.created` gets a single-use token valid 90 days, announced by the
 * `review.requested` webhook event; a review submitted with it is verified and linked to
 * the order's customer, if any. The token is the only proof: an e-mail proves nothing.
 * The invitation's review page (review-page.ts: the service's own, or a platform's inside
 * the shop) reads and submits its form through `page` and `submitPage`.
 */
import { randomBytes } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Database, ReviewInvitationRow } from '../../db/schema.js'
import { AppError, type ErrorDetail, invalid, notFound } from '../../lib/errors.js'
import type { PageStringKey } from '../../lib/page-strings.js'
import { DAY_MS, isoMillis, isoSeconds, now } from '../../lib/time.js'
import type { RequestContext } from '../auth/auth.types.js'
import { enqueueWebhookEvents } from '../events/outbox.js'
import { INVITATION_TOKEN_PATTERN, type InvitationView } from './invitations.schemas.js'
import { invitationsRepo as repo } from './invitations.repo.js'
import { normalizeEmail } from './purchases.js'
import type { ReviewField, ReviewForm, ReviewPageState, ReviewValues } from './review-page.schemas.js'
import { RATING_MAX, RATING_MIN } from './reviews.schemas.js'
import type { ReviewsService } from './reviews.service.js'
import { type Platform, platformOf } from '../../platforms/platform.js'
import { type StorefrontPaths, storefrontPaths } from '../storefront/storefront-paths.service.js'

export const INVITATION_TTL_MS = 90 * DAY_MS
export const INVITATION_PATH = '/api/v1/review-invitations/'
/** The review form of an invitation: the service's own page, or the shop's app-proxy page in Shopify app mode. */
export const REVIEW_PAGE_PATH = '/reviews/new'
/**
 * Where an invitation's page is, beyond the shop: the buyer's language from the order, and
 * where the shop's storefront serves the service's pages (`storefront_paths`) when known.
 */
export interface ReviewLinkPlace {
  locale: string | null
  proxyPath: string | null
  primaryLocale: string | null
}
export const NO_PLACE: ReviewLinkPlace = { locale: null, proxyPath: null, primaryLocale: null }

/** A shop domain, an invitation token and its place → the link a buyer opens to write the review. */
export type ReviewUrlOf = (shopDomain: string, token: string, place?: ReviewLinkPlace) => string

/**
 * A shop of a configured platform gets the form inside its own storefront (Shopify:
 * `https://{shop}/apps/wishlist/reviews/new?invitation=…`, under the buyer's language's
 * subfolder when it is not the shop's primary one); any other shop the service's page,
 * `PUBLIC_BASE_URL/reviews/new?invitation=…&locale=…` (the page speaks that language).
 */
export function reviewUrlMaker(publicBaseUrl: string, platforms: readonly Platform[]): ReviewUrlOf {
  return (shopDomain, token, place = NO_PLACE) => {
    const query = `?invitation=${encodeURIComponent(token)}`
    return (
      platformOf(platforms, shopDomain)?.reviewPageUrl(shopDomain, query, place) ??
      `${publicBaseUrl}${REVIEW_PAGE_PATH}${query}${place.locale === null ? '' : `&locale=${encodeURIComponent(place.locale)}`}`
    )
  }
}

/** A language tag as an order may name it (`fr`, `pt-BR`, `zh-Hant-TW`); anything else is not kept. */
export const LOCALE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/

/** 192 random bits, base64url. */
const newInvitationToken = (): string => randomBytes(24).toString('base64url')

export function invitationView(
  row: ReviewInvitationRow,
  shopDomain: string,
  reviewUrl: ReviewUrlOf,
  paths?: Pick<StorefrontPaths, 'proxy_path' | 'primary_locale'>,
): InvitationView {
  const place = { locale: row.locale ?? null, proxyPath: paths?.proxy_path ?? null, primaryLocale: paths?.primary_locale ?? null }
  return {
    token: row.token,
    orderId: row.order_id,
    customerId: row.customer_id,
    email: row.email,
    productId: row.product_id,
    reviewUrl: reviewUrl(shopDomain, row.token, place),
    expiresAt: isoMillis(Number(row.expires_at)),
    usedAt: row.used_at === null ? null : isoMillis(Number(row.used_at)),
  }
}

export interface InvitedOrder {
  orderId: string | null
  customerId: string | null
  email: string | null
  productIds: string[]
  /** The buyer's language, as the order named it; null when it did not. */
  locale?: string | null
}

/**
 * The invitation `review` names, marked used in the caller's transaction (a failed review
 * rolls it back). Unknown, foreign, used and expired invitations are 400 VALIDATION_ERROR.
 */
export async function claimInvitation(trx: Db, shopId: string, token: string, productId: string, at: number): Promise<ReviewInvitationRow> {
  const claimed = await repo.claim(trx, shopId, token, at)
  const refuse = (path: string, message: string) => invalid([{ path, message }])
  if (!claimed) {
    const row = await repo.ofShop(trx, shopId, token)
    if (!row) throw refuse('body.invitation', 'is not a review invitation of this shop')
    throw refuse('body.invitation', row.used_at !== null ? 'has already been used' : 'has expired')
  }
  if (claimed.product_id !== productId) throw refuse('body.productId', `must be the invited product (${claimed.product_id})`)
  return claimed
}

const INVITATION_TOKEN = new RegExp(INVITATION_TOKEN_PATTERN)

/**
 * A refused submission as the form's states: each field's sentence, a duplicate, or the notice an unusable invitation gets; null for any
 * other error.
 */
function formProblems(
  err: unknown,
): { errors: Partial<Record<ReviewField, PageStringKey>>; duplicate: boolean; notice?: 'used' | 'expired' | 'unknown' } | null {
  if (!(err instanceof AppError)) return null
  if (err.code === 'DUPLICATE_REVIEW') return { errors: {}, duplicate: true }
  if (err.code !== 'VALIDATION_ERROR') return null
  const errors: Partial<Record<ReviewField, PageStringKey>> = {}
  const details = (Array.isArray(err.details) ? err.details : []) as ErrorDetail[]
  for (const d of details) {
    const path = d.path
    if (path.startsWith('body.invitation'))
      return {
        errors,
        duplicate: false,
        notice: d.message.includes('used') ? 'used' : d.message.includes('expired') ? 'expired' : 'unknown',
      }
    if (path.startsWith('body.rating')) errors.rating = 'errorRating'
    else if (path.startsWith('body.body')) errors.body = 'errorBody'
    else if (path.startsWith('body.customerName')) errors.name = 'errorName'
    else if (path.startsWith('body.customerEmail')) errors.email = 'errorEmail'
    else if (path.startsWith('body.title')) errors.title = 'errorTitle'
  }
  return { errors, duplicate: false }
}

export function createInvitationsService(deps: {
  db: Db
  reviewUrl: ReviewUrlOf
  reviews: Pick<ReviewsService, 'submit'>
  clock?: () => number
}) {
  const { db, reviewUrl, reviews } = deps
  const clock = deps.clock ?? now

  /**
   * The review page of an invitation token: its form, or the notice the page shows instead
   * (used, expired, unknown). `shopId`: that shop's invitations only (a platform's page inside the shop).
   */
  async function page(token: string | undefined, shopId?: string): Promise<ReviewPageState> {
    if (token === undefined || !INVITATION_TOKEN.test(token)) return { kind: 'notice', which: 'unknown' }
    const row = shopId === undefined ? await repo.byToken(db, token) : await repo.ofShop(db, shopId, token)
    if (!row) return { kind: 'notice', which: 'unknown' }
    if (row.used_at !== null) return { kind: 'notice', which: 'used', shopId: row.shop_id }
    if (Number(row.expires_at) <= clock()) return { kind: 'notice', which: 'expired', shopId: row.shop_id }
    return {
      kind: 'form',
      invitation: {
        token: row.token,
        shopId: row.shop_id,
        productId: row.product_id,
        handle: await repo.productHandle(db, row.shop_id, row.product_id),
        email: row.email,
      },
      values: {},
      errors: {},
    }
  }

  return {
    /**
     * In the events intake's transaction: one invitation per product of the order, written in
     * one statement, each announced as `review.requested`. A redelivered order (same
     * `order_id`) invites nobody again.
     */
    async forOrder(trx: Transaction<Database>, shop: { id: string; domain: string }, order: InvitedOrder, at: number): Promise<number> {
      const shopId = shop.id
      if (order.productIds.length === 0) return 0
      // Whole seconds: the storefront's lookup shows seconds, the merchant's list milliseconds, of one instant.
      const created = Math.floor(at / 1000) * 1000
      const email = order.email === null ? null : normalizeEmail(order.email) || null
      const rows = await repo.insert(
        trx,
        order.productIds.map((productId) => ({
          shop_id: shopId,
          token: newInvitationToken(),
          order_id: order.orderId,
          customer_id: order.customerId,
          email,
          product_id: productId,
          created_at: created,
          expires_at: created + INVITATION_TTL_MS,
          used_at: null,
          review_id: null,
          locale: order.locale !== undefined && order.locale !== null && LOCALE_TAG.test(order.locale) ? order.locale : null,
        })),
      )
      const paths = await storefrontPaths.get(trx, shopId)
      await enqueueWebhookEvents(
        trx,
        shopId,
        rows.map((row) => ({
          event: 'review.requested' as const,
          occurredAt: at,
          data: invitationView(row, shop.domain, reviewUrl, paths),
        })),
      )
      return rows.length
    },

    /** No credentials: the token is the proof. Unknown → 404. */
    async lookup(token: string) {
      const row = await repo.byToken(db, token)
      if (!row) throw notFound('Review invitation')
      const expiresAt = Number(row.expires_at)
      return { productId: row.product_id, expiresAt: isoSeconds(expiresAt), usable: row.used_at === null && expiresAt > clock() }
    },

    async list(
      ctx: RequestContext,
      q: { orderId?: string | undefined; email?: string | undefined; limit: number },
    ): Promise<{ invitations: InvitationView[] }> {
      const rows = await repo.list(
        db,
        ctx.shop.id,
        { orderId: q.orderId, email: q.email === undefined ? undefined : normalizeEmail(q.email) },
        q.limit,
      )
      const paths = await storefrontPaths.get(db, ctx.shop.id)
      return { invitations: rows.map((r) => invitationView(r, ctx.shop.domain, reviewUrl, paths)) }
    },

    page,

    /**
     * The page a browser is sent to after its review went in (`done`): the thank-you page
     * while the invitation is the one used for a review (saying whether the review awaits
     * moderation), else what `page` shows.
     */
    async thanks(token: string | undefined, shopId?: string): Promise<ReviewPageState> {
      if (token === undefined || !INVITATION_TOKEN.test(token)) return page(token, shopId)
      const row = shopId === undefined ? await repo.byToken(db, token) : await repo.ofShop(db, shopId, token)
      if (row?.review_id === null || row?.review_id === undefined) return page(token, shopId)
      const review = await db
        .selectFrom('reviews')
        .select('status')
        .where('shop_id', '=', row.shop_id)
        .where('id', '=', row.review_id)
        .executeTakeFirst()
      if (review === undefined) return page(token, shopId)
      return {
        kind: 'thanks',
        status: review.status === 'approved' ? 'approved' : 'pending',
        handle: await repo.productHandle(db, row.shop_id, row.product_id),
        shopId: row.shop_id,
      }
    },

    /**
     * Submits an invitation's review form as the reviews API would (`POST /api/v1/reviews`
     * with `invitation`), for the shop of `ctx` (its storefront, or a platform's proxied
     * shopper): the same rules and errors, as the page's states. A rating that is not 1..5 is
     * reported with the other fields' problems, nothing written.
     */
    async submitPage(ctx: RequestContext, form: ReviewForm): Promise<ReviewPageState> {
      const state = await page(form.invitation, ctx.shop.id)
      if (state.kind !== 'form') return state
      const invitation = state.invitation
      const values: ReviewValues = {
        rating: form.rating,
        title: form.title ?? '',
        body: form.body ?? '',
        name: form.name ?? '',
        email: form.email ?? '',
      }
      const chosen = /^[0-9]$/.test(form.rating ?? '') ? Number(form.rating) : undefined
      const rating = chosen !== undefined && chosen >= RATING_MIN && chosen <= RATING_MAX ? chosen : undefined
      const input = {
        // Without a valid rating, an invalid product id makes the service report the other fields and write nothing.
        productId: rating === undefined ? '' : invitation.productId,
        customerEmail: invitation.email ?? values.email ?? '',
        customerName: values.name ?? '',
        rating: rating ?? 1,
        title: values.title,
        body: values.body ?? '',
        invitation: invitation.token,
      }
      try {
        const done = await reviews.submit(ctx, input)
        return { kind: 'thanks', status: done.status, handle: invitation.handle }
      } catch (err) {
        const found = formProblems(err)
        if (found === null) throw err
        if (found.notice !== undefined) return { kind: 'notice', which: found.notice }
        const errors = rating === undefined ? { ...found.errors, rating: 'errorRating' as const } : found.errors
        return { kind: 'form', invitation, values, errors, duplicate: found.duplicate }
      }
    },
  }
}

export type InvitationsService = ReturnType<typeof createInvitationsService>
