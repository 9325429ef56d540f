/**
 * TypeBox schemas of the reviews interface (docs/api.md, "Reviews"). Bodies are strictly typed
 * (a rating of "5" or 4.5 is refused by the schema); trimming and the length rules that
 * depend on it are applied by the service after trimming.
 */
import { type Static, type TSchema, Type } from 'typebox'
import { platformIdPattern } from '../../lib/platform-ids.js'
import { INVITATION_TOKEN_PATTERN } from './invitations.schemas.js'

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, seconds precision: 2026-01-02T03:04:05Z' })

/** What anyone with the storefront key may see. Never carries the e-mail. */
export const PublicReview = Type.Object(
  {
    id: Type.Integer(),
    productId: Type.String(),
    customerName: Type.String(),
    rating: Type.Integer({ minimum: 1, maximum: 5 }),
    title: Type.String({ description: 'Empty string when none was given' }),
    body: Type.String(),
    photos: Type.Array(Type.String()),
    verifiedPurchase: Type.Boolean(),
    helpfulCount: Type.Integer(),
    replyBody: Type.Union([Type.String(), Type.Null()]),
    repliedAt: Type.Union([Iso, Type.Null()]),
    createdAt: Iso,
  },
  { additionalProperties: false },
)

export const ReviewStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')])

/** Moderation view (admin token): adds the e-mail, the linked customer and the status. */
export const AdminReview = Type.Object(
  {
    ...PublicReview.properties,
    verifiedBy: Type.Union([Type.Literal('customer_order'), Type.Literal('invitation'), Type.Null()], {
      description: 'How verifiedPurchase was proven: the linked customer\'s order holds the product, or a review invitation of an order was used; null when not verified',
    }),
    customerEmail: Type.Union([Type.String(), Type.Null()]),
    customerId: Type.Union([Type.String(), Type.Null()]),
    status: ReviewStatusSchema,
  },
  { additionalProperties: false },
)

export type PublicReviewView = Static<typeof PublicReview>
export type AdminReviewView = Static<typeof AdminReview>

export const ReviewSortSchema = Type.Union(
  [Type.Literal('newest'), Type.Literal('oldest'), Type.Literal('highest'), Type.Literal('lowest'), Type.Literal('most_helpful')],
  { default: 'newest' },
)

const Page = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })

export const ProductParams = Type.Object({
  productId: Type.String({ pattern: platformIdPattern('Product'), description: '1..32 digits or a platform GID (URL-encoded)' }),
})

export const ReviewIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })

export const ListQuery = Type.Object({
  page: Page,
  per_page: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
  sort: ReviewSortSchema,
  rating: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, description: 'Only reviews with this rating' })),
  verified: Type.Optional(Type.Boolean({ description: 'true: only verified purchases; false: only unverified' })),
  with_photos: Type.Optional(Type.Boolean({ description: 'true: only reviews with photos; false: only without' })),
})

export const Paged = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    page: Type.Integer(),
    perPage: Type.Integer(),
    total: Type.Integer(),
    hasMore: Type.Boolean(),
  })

export const Summary = Type.Object({
  productId: Type.String(),
  reviewCount: Type.Integer(),
  averageRating: Type.Union([Type.Number(), Type.Null()], { description: '2 decimals, null when there are no approved reviews' }),
  ratingDistribution: Type.Object({
    '1': Type.Integer(),
    '2': Type.Integer(),
    '3': Type.Integer(),
    '4': Type.Integer(),
    '5': Type.Integer(),
  }),
  verifiedCount: Type.Integer(),
  withPhotosCount: Type.Integer(),
  bestRating: Type.Literal(5),
  worstRating: Type.Literal(1),
})

export const SubmitBody = Type.Object({
  productId: Type.String({ description: '1..32 digits or a platform GID' }),
  customerEmail: Type.String({
    description: 'E-mail address, at most 254 characters after trimming; stored lower-cased, never shown publicly. It proves nothing: it never links the review to a customer or verifies it',
  }),
  customerName: Type.String({ description: '1..100 characters after trimming' }),
  rating: Type.Integer({ minimum: 1, maximum: 5, description: 'A JSON integer 1..5' }),
  title: Type.Optional(Type.String({ description: 'At most 150 characters after trimming' })),
  body: Type.String({ description: '1..5000 characters after trimming' }),
  photos: Type.Optional(Type.Array(Type.String(), { maxItems: 5, description: 'At most 5 https URLs' })),
  invitation: Type.Optional(Type.String({
    pattern: INVITATION_TOKEN_PATTERN,
    description: 'A review invitation token (single use): the review is verified and linked to the customer of the invitation\'s order, if any. productId must be the invited product',
  })),
})
export type SubmitInput = Static<typeof SubmitBody>

export const Submitted = Type.Object({
  id: Type.Integer(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('approved')]),
})

export const AdminListQuery = Type.Object({
  status: Type.Optional(ReviewStatusSchema),
  product_id: Type.Optional(Type.String({ pattern: platformIdPattern('Product') })),
  page: Page,
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
})

export const ReplyBody = Type.Object({
  body: Type.String({ description: '1..5000 characters after trimming' }),
})

export const HelpfulCount = Type.Object({ helpfulCount: Type.Integer() })
export const Deleted = Type.Object({ deleted: Type.Literal(true) })
