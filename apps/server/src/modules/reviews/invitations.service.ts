/**
 * Review invitations: how a buyer, guest checkout included, gets a verified review. Every
 * product of an `order.created` gets a single-use token valid 90 days, announced by the
 * `review.requested` webhook event; a review submitted with it is verified and linked to
 * the order's customer, if any. The token is the only proof: an e-mail proves nothing.
 */
import { randomBytes } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Database, ReviewInvitationRow } from '../../db/schema.js'
import { invalid, notFound } from '../../lib/errors.js'
import { DAY_MS, isoMillis, isoSeconds, now } from '../../lib/time.js'
import type { RequestContext } from '../auth/auth.types.js'
import { enqueueWebhookEvents } from '../events/outbox.js'
import type { InvitationView } from './invitations.schemas.js'
import { invitationsRepo as repo } from './invitations.repo.js'
import { normalizeEmail } from './purchases.js'
import { type Platform, platformOf } from '../../platforms/platform.js'

export const INVITATION_TTL_MS = 90 * DAY_MS
export const INVITATION_PATH = '/api/v1/review-invitations/'
/** The review form of an invitation: the service's own page, or the shop's app-proxy page in Shopify app mode. */
export const REVIEW_PAGE_PATH = '/reviews/new'
/** A shop domain and an invitation token → the link a buyer opens to write the review. */
export type ReviewUrlOf = (shopDomain: string, token: string) => string

/**
 * A shop of a configured platform gets the form inside its own storefront (Shopify:
 * `https://{shop}/apps/wishlist/reviews/new?invitation=…`); any other shop the service's page,
 * `PUBLIC_BASE_URL/reviews/new?invitation=…`.
 */
export function reviewUrlMaker(publicBaseUrl: string, platforms: readonly Platform[]): ReviewUrlOf {
  return (shopDomain, token) => {
    const query = `?invitation=${encodeURIComponent(token)}`
    return platformOf(platforms, shopDomain)?.reviewPageUrl(shopDomain, query) ?? `${publicBaseUrl}${REVIEW_PAGE_PATH}${query}`
  }
}

/** 192 random bits, base64url. */
const newInvitationToken = (): string => randomBytes(24).toString('base64url')

export function invitationView(row: ReviewInvitationRow, shopDomain: string, reviewUrl: ReviewUrlOf): InvitationView {
  return {
    token: row.token,
    orderId: row.order_id,
    customerId: row.customer_id,
    email: row.email,
    productId: row.product_id,
    reviewUrl: reviewUrl(shopDomain, row.token),
    expiresAt: isoMillis(Number(row.expires_at)),
    usedAt: row.used_at === null ? null : isoMillis(Number(row.used_at)),
  }
}

export interface InvitedOrder {
  orderId: string | null
  customerId: string | null
  email: string | null
  productIds: string[]
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

export function createInvitationsService(deps: { db: Db; reviewUrl: ReviewUrlOf; clock?: () => number }) {
  const { db, reviewUrl } = deps
  const clock = deps.clock ?? now

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
        })),
      )
      await enqueueWebhookEvents(
        trx,
        shopId,
        rows.map((row) => ({ event: 'review.requested' as const, occurredAt: at, data: invitationView(row, shop.domain, reviewUrl) })),
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

    async list(ctx: RequestContext, q: { orderId?: string | undefined; email?: string | undefined; limit: number }): Promise<{ invitations: InvitationView[] }> {
      const rows = await repo.list(db, ctx.shop.id, { orderId: q.orderId, email: q.email === undefined ? undefined : normalizeEmail(q.email) }, q.limit)
      return { invitations: rows.map((r) => invitationView(r, ctx.shop.domain, reviewUrl)) }
    },
  }
}

export type InvitationsService = ReturnType<typeof createInvitationsService>
