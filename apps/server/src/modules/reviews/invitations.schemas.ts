/** TypeBox schemas of review invitations: the storefront's lookup and the merchant's list. */
import { type Static, Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { platformIdPattern } from '../../lib/platform-ids.js'

export const INVITATION_TOKEN_PATTERN = '^[A-Za-z0-9_-]{16,128}$'

export const InvitationToken = Type.String({
  pattern: INVITATION_TOKEN_PATTERN,
  description: 'The token of a review invitation (the last segment of its reviewUrl)',
})

export const InvitationParams = Type.Object({ token: InvitationToken })

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, seconds precision: 2026-01-02T03:04:05Z' })

/** What anyone holding the link may see: enough to build the review form, nothing about the buyer. */
export const InvitationLookup = Type.Object(
  {
    productId: Type.String(),
    expiresAt: Iso,
    usable: Type.Boolean({ description: 'false once used or expired' }),
  },
  { additionalProperties: false },
)

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

/** The merchant's view, the `review.requested` webhook's `data` and a customer's export entry. */
export const Invitation = Type.Object(
  {
    token: Type.String(),
    orderId: Nullable(Type.String()),
    customerId: Nullable(Type.String()),
    email: Nullable(Type.String()),
    productId: Type.String(),
    reviewUrl: Type.String({
      description:
        'The review form: `https://{shop}/apps/wishlist/reviews/new?invitation={token}` for a Shopify shop in Shopify app mode, else `PUBLIC_BASE_URL/reviews/new?invitation={token}`',
    }),
    expiresAt: Timestamp,
    usedAt: Nullable(Timestamp),
  },
  { additionalProperties: false },
)
export type InvitationView = Static<typeof Invitation>

export const InvitationListQuery = Type.Object({
  order_id: Type.Optional(Type.String({ pattern: platformIdPattern('Order'), description: 'The platform order id: digits or a GID' })),
  email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'The order e-mail (any case)' })),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Newest first' }),
})

export const InvitationList = Type.Object({ invitations: Type.Array(Invitation) }, { additionalProperties: false })

/** OpenAPI metadata of the review invitation routes (plugins/openapi.ts). */
export const invitationsOperations: OperationDocs = {
  'GET /api/v1/review-invitations/:token': {
    operationId: 'getReviewInvitation',
    summary: 'Look up a review invitation',
    description:
      'No credentials: the token is the proof. Enough for a storefront page to build its review form (the product, the expiry, whether it can still be used), nothing about the buyer; the form then posts the review with `invitation` and the storefront key. Unknown token: 404. Counted per client address.',
    responses: { 200: 'The invitation' },
    examples: { 200: { productId: '7001', expiresAt: '2026-04-02T03:04:05Z', usable: true } },
  },
  'GET /reviews/new': {
    operationId: 'reviewInvitationPage',
    summary: 'The review form of an invitation (HTML page)',
    description:
      "Where `reviewUrl` points for a shop that is not on Shopify: a page (no script) with the product's review form, rating as a radio group, title, review, name, and e-mail when the order gave none. In the shopper's language: `locale`, else `Accept-Language` (English, French, German, Spanish, Italian, Dutch, Brazilian Portuguese, Japanese). Used, expired and unknown invitations answer 200 with a page saying so.",
    responses: { 200: 'The page' },
  },
  'POST /reviews/new': {
    operationId: 'submitReviewInvitationPage',
    summary: 'Submit the review form of an invitation (HTML page)',
    description:
      "The form of `GET /reviews/new`, posted as `application/x-www-form-urlencoded`: the review is submitted as `POST /api/v1/reviews` with `invitation` would be (verified, linked to the order's customer). Answers 200 with a thank-you page (saying when the review awaits moderation), or the form again with each field's problem; a used or expired invitation gets a page saying so.",
    responses: { 200: 'The page' },
  },
  'GET /v1/admin/review-invitations': {
    operationId: 'listReviewInvitations',
    summary: "List review invitations of the shop's orders",
    description:
      'Newest first. Each product of an `order.created` event gets one invitation: single use, valid 90 days. `order_id` (digits or an order GID) and `email` (any case) filter, combined with AND; `limit` 1..500 (default 100). Admin token, every plan.',
    responses: { 200: 'The invitations' },
    examples: {
      200: {
        ok: true,
        data: {
          invitations: [
            {
              token: 'Q2x9…',
              orderId: '5001',
              customerId: null,
              email: 'ann@example.com',
              productId: '7001',
              reviewUrl: 'https://wishlist.example.com/reviews/new?invitation=Q2x9…',
              expiresAt: '2026-04-02T03:04:05.000Z',
              usedAt: null,
            },
          ],
        },
      },
    },
  },
}
