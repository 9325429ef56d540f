/**
 * TypeBox schemas of the reviews interface (docs/api.md, "Reviews"). Bodies are strictly typed
 * (a rating of "5" or 4.5 is refused by the schema); trimming and the length rules that
 * depend on it are applied by the service after trimming.
 */
import { type Static, type TSchema, Type } from 'typebox'
import { httpUrlPattern, type OperationDocs, TrimmedText } from '../../lib/http-schemas.js'
import { platformIdPattern } from '../../lib/platform-ids.js'
import { INVITATION_TOKEN_PATTERN } from './invitations.schemas.js'

/**
 * The limits of a submission and a reply, in characters (code points) after trimming: the
 * schemas, their descriptions and the service's checks (reviews.service.ts) all read them here.
 */
export const REVIEW_LIMITS = { email: 254, name: 100, title: 150, body: 5000, reply: 5000, photos: 5, photoUrl: 2048 } as const
export const RATING_MIN = 1 as const
export const RATING_MAX = 5 as const
const RATING = `${RATING_MIN}..${RATING_MAX}`
/** 5,000 rather than 5000, as the descriptions write numbers. */
const count = (n: number): string => n.toLocaleString('en-US')

const Iso = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, seconds precision: 2026-01-02T03:04:05Z' })

/** What anyone with the storefront key may see. Never carries the e-mail. */
export const PublicReview = Type.Object(
  {
    id: Type.Integer(),
    productId: Type.String(),
    customerName: Type.String({ description: 'As submitted (trimmed); "Anonymous" after the customer\'s erasure' }),
    rating: Type.Integer({ minimum: RATING_MIN, maximum: RATING_MAX }),
    title: Type.String({ description: 'Empty string when none was given' }),
    body: Type.String({ description: 'Plain text: whoever renders it escapes it' }),
    photos: Type.Array(Type.String(), { description: 'https URLs; empty when none' }),
    verifiedPurchase: Type.Boolean({
      description: 'Decided by the service only: the linked customer bought the product, or the review came with an invitation',
    }),
    helpfulCount: Type.Integer(),
    replyBody: Type.Union([Type.String(), Type.Null()], { description: "The merchant's reply; null when none" }),
    repliedAt: Type.Union([Iso, Type.Null()], { description: 'null when there is no reply' }),
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
      description:
        "How verifiedPurchase was proven: the linked customer's order holds the product, or a review invitation of an order was used; null when not verified",
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

/** Page sizes of the storefront's listing and the admin's moderation view. */
export const PER_PAGE = { storefront: { max: 50, default: 10 }, admin: { max: 100, default: 20 } } as const

export const ListQuery = Type.Object({
  page: Page,
  per_page: Type.Integer({ minimum: 1, maximum: PER_PAGE.storefront.max, default: PER_PAGE.storefront.default }),
  sort: ReviewSortSchema,
  rating: Type.Optional(Type.Integer({ minimum: RATING_MIN, maximum: RATING_MAX, description: 'Only reviews with this rating' })),
  verified: Type.Optional(Type.Boolean({ description: 'true: only verified purchases; false: only unverified' })),
  with_photos: Type.Optional(Type.Boolean({ description: 'true: only reviews with photos; false: only without' })),
})

export const Paged = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    page: Type.Integer(),
    perPage: Type.Integer(),
    total: Type.Integer({ description: 'Reviews matching the filters' }),
    hasMore: Type.Boolean({ description: '(page − 1) × perPage + data.length < total' }),
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
  bestRating: Type.Literal(RATING_MAX),
  worstRating: Type.Literal(RATING_MIN),
})

const CUSTOMER_EMAIL = `E-mail address, at most ${REVIEW_LIMITS.email} characters after trimming; stored lower-cased, never shown publicly. It proves nothing: it never links the review to a customer or verifies it`

export const SubmitBody = Type.Object({
  productId: Type.String({ description: '1..32 digits or a platform GID' }),
  customerEmail: Type.String({ description: CUSTOMER_EMAIL }),
  customerName: Type.String({ description: `1..${REVIEW_LIMITS.name} characters after trimming` }),
  rating: Type.Integer({ minimum: RATING_MIN, maximum: RATING_MAX, description: `A JSON integer ${RATING}` }),
  title: Type.Optional(Type.String({ description: `At most ${REVIEW_LIMITS.title} characters after trimming` })),
  body: Type.String({ description: `1..${REVIEW_LIMITS.body} characters after trimming` }),
  photos: Type.Optional(
    Type.Array(Type.String(), { maxItems: REVIEW_LIMITS.photos, description: `At most ${REVIEW_LIMITS.photos} https URLs` }),
  ),
  invitation: Type.Optional(
    Type.String({
      pattern: INVITATION_TOKEN_PATTERN,
      description:
        "A review invitation token (single use): the review is verified and linked to the customer of the invitation's order, if any. productId must be the invited product",
    }),
  ),
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
  per_page: Type.Integer({ minimum: 1, maximum: PER_PAGE.admin.max, default: PER_PAGE.admin.default }),
})

export const ReplyBody = Type.Object({
  body: Type.String({ description: `1..${REVIEW_LIMITS.reply} characters after trimming` }),
})

export const HelpfulCount = Type.Object({ helpfulCount: Type.Integer() })
export const Deleted = Type.Object({ deleted: Type.Literal(true) })

const CREDENTIALS =
  'Credentials: `X-Storefront-Key` (optionally with a guest id), a customer token or an admin token; none is 401. Every plan.'
const ADMIN = 'Admin token (moderation), every plan. Unknown ids and ids of another shop are 404.'
const review = {
  id: 42,
  productId: '7001',
  customerName: 'Ann',
  rating: 5,
  title: 'Lovely bag',
  body: 'Sturdy and soft.',
  photos: ['https://cdn.example.com/p/42-1.jpg'],
  verifiedPurchase: true,
  helpfulCount: 3,
  replyBody: null,
  repliedAt: null,
  createdAt: '2026-01-02T03:04:05Z',
}
const adminReview = { ...review, verifiedBy: 'customer_order', customerEmail: 'ann@example.com', customerId: '1001', status: 'approved' }
const page = <T>(data: T[], perPage: number) => ({ data, page: 1, perPage, total: data.length, hasMore: false })
/** The submission as the document states it: the rules the service applies after trimming. */
const SubmitBodyDoc = Type.Object({
  productId: Type.String({
    pattern: `^\\s*(${platformIdPattern('Product').slice(1, -1)})\\s*$`,
    description: '1..32 digits or a platform GID of a Product (trimmed)',
  }),
  customerEmail: Type.String({
    pattern: '^\\s*[^\\s@]+@[^\\s@]+\\.[^\\s@]+\\s*$',
    description: `${CUSTOMER_EMAIL}. Trimmed and lower-cased, then something@something.tld without whitespace, at most ${REVIEW_LIMITS.email} characters`,
  }),
  customerName: TrimmedText(1, REVIEW_LIMITS.name, `1..${REVIEW_LIMITS.name} characters`),
  rating: SubmitBody.properties.rating,
  title: Type.Optional(TrimmedText(0, REVIEW_LIMITS.title, `At most ${REVIEW_LIMITS.title} characters`)),
  body: TrimmedText(1, REVIEW_LIMITS.body, `1..${count(REVIEW_LIMITS.body)} characters`),
  photos: Type.Optional(
    Type.Array(
      Type.String({
        pattern: httpUrlPattern(false),
        description: `Trimmed, then an absolute https URL (as a browser parses it) of at most ${count(REVIEW_LIMITS.photoUrl)} characters`,
      }),
      {
        maxItems: REVIEW_LIMITS.photos,
        description: `At most ${REVIEW_LIMITS.photos} absolute https URLs of at most ${count(REVIEW_LIMITS.photoUrl)} characters`,
      },
    ),
  ),
  invitation: SubmitBody.properties.invitation,
})

/** OpenAPI metadata of the reviews routes (plugins/openapi.ts). */
export const reviewsOperations: OperationDocs = {
  'GET /api/v1/products/:productId/reviews': {
    operationId: 'listProductReviews',
    summary: "List a product's approved reviews",
    description: `Approved reviews only. \`sort\`: \`newest\` (createdAt desc, id desc; the default), \`oldest\`, \`highest\` and \`lowest\` (rating, then as newest), \`most_helpful\` (helpfulCount desc, then as newest). Filters: \`rating\` (one integer ${RATING}), \`verified\` and \`with_photos\` (\`true\` keeps only those, \`false\` only the others). \`total\` counts the matching approved reviews; \`hasMore\` = (page − 1) × per_page + data.length < total. A page past the end, or a product nobody reviewed, is 200 with \`data: []\`. ${CREDENTIALS}`,
    responses: { 200: 'A page of reviews' },
    examples: { 200: page([review], 10) },
  },
  'GET /api/v1/products/:productId/reviews/summary': {
    operationId: 'getProductReviewSummary',
    summary: "A product's rating summary",
    description: `Over approved reviews: count, \`averageRating\` (sum ÷ count rounded half up to 2 decimals; null when none), the distribution of all five ratings, verified and with-photos counts, and \`bestRating\`/\`worstRating\` for schema.org AggregateRating. ${CREDENTIALS}`,
    responses: { 200: 'The summary' },
    examples: {
      200: {
        productId: '7001',
        reviewCount: 4,
        averageRating: 4.25,
        ratingDistribution: { '1': 0, '2': 0, '3': 1, '4': 1, '5': 2 },
        verifiedCount: 3,
        withPhotosCount: 1,
        bestRating: 5,
        worstRating: 1,
      },
    },
  },
  'GET /api/v1/reviews/:id': {
    operationId: 'getReview',
    summary: 'Read one review',
    description: `The bare review object. Approved only (404 otherwise, so a pending review's existence is not revealed); an admin token sees every status in the moderation view (adds \`verifiedBy\`, \`customerEmail\`, \`customerId\`, \`status\`). ${CREDENTIALS}`,
    responses: { 200: 'The review (the moderation view for an admin token)' },
    examples: { 200: review },
  },
  'POST /api/v1/reviews': {
    operationId: 'submitReview',
    summary: 'Submit a review',
    description: `Strings are trimmed, then checked; every field error is reported together in \`details\` (first missing fields and wrong types, then the rules after trimming). The review is \`approved\` when the shop auto-approves, else \`pending\`. Who wrote it comes from proof, never from \`customerEmail\`: a customer token links it to that customer; \`invitation\` (a single-use review invitation token) links it to the invitation's order's customer and makes it a verified purchase (the invited product only; a used, expired or unknown invitation is 400 at \`body.invitation\`). One review per product per linked customer, and per e-mail among unlinked reviews (409 DUPLICATE_REVIEW, whatever the status). Client-sent \`status\`, \`verifiedPurchase\` and \`helpfulCount\` are ignored. The 201 carries \`Location: /api/v1/reviews/{id}\`. ${CREDENTIALS}`,
    responses: { 201: 'Created: its id and status' },
    requestExample: {
      productId: '7001',
      customerEmail: 'ann@example.com',
      customerName: 'Ann',
      rating: 5,
      title: 'Lovely bag',
      body: 'Sturdy and soft.',
      photos: ['https://cdn.example.com/p/42-1.jpg'],
    },
    examples: { 201: { id: 42, status: 'pending' } },
    document: { body: SubmitBodyDoc },
  },
  'PUT /api/v1/reviews/:id/helpful': {
    operationId: 'voteReviewHelpful',
    summary: 'Vote a review helpful',
    description: `Idempotent, on approved reviews (others are 404). The voter is the customer of a customer token, else the guest id (\`X-Guest-Id\` or \`guest_id\`); a storefront key without a guest id, or an admin token, is 400. One client address casts at most 5 guest votes for one review within 24 hours (a sixth new vote is 429 with \`Retry-After\`). ${CREDENTIALS}`,
    responses: { 200: "The review's helpful count" },
    examples: { 200: { helpfulCount: 4 } },
  },
  'DELETE /api/v1/reviews/:id/helpful': {
    operationId: 'unvoteReviewHelpful',
    summary: 'Take a helpful vote back',
    description: `Idempotent; the voter as for the vote. ${CREDENTIALS}`,
    responses: { 200: "The review's helpful count" },
    examples: { 200: { helpfulCount: 3 } },
  },
  'GET /api/v1/admin/reviews': {
    operationId: 'listReviewsForModeration',
    summary: 'The moderation queue',
    description: `Every status in the moderation view. Without \`status\`: pending first, then newest first; with it: newest first. \`product_id\` filters by product. \`per_page\` 1..${PER_PAGE.admin.max} (default ${PER_PAGE.admin.default}). ${ADMIN}`,
    responses: { 200: 'A page of reviews in the moderation view' },
    examples: { 200: page([adminReview], 20) },
  },
  'POST /api/v1/reviews/:id/approve': {
    operationId: 'approveReview',
    summary: 'Approve (publish) a review',
    description: `pending → approved, or rejected → approved; approving an approved review is a harmless 200. The product's summary changes in the same transaction. ${ADMIN}`,
    responses: { 200: 'The review in the moderation view' },
    examples: { 200: adminReview },
  },
  'POST /api/v1/reviews/:id/reject': {
    operationId: 'rejectReview',
    summary: 'Reject (unpublish) a review',
    description: `pending → rejected, or approved → rejected; the same status again is a harmless 200. ${ADMIN}`,
    responses: { 200: 'The review in the moderation view' },
    examples: { 200: { ...adminReview, status: 'rejected' } },
  },
  'PUT /api/v1/reviews/:id/reply': {
    operationId: 'replyToReview',
    summary: 'Set or replace the merchant reply',
    description: `\`body\`: 1..${count(REVIEW_LIMITS.reply)} characters after trimming. Replacing a reply moves \`repliedAt\`. Allowed in any status. ${ADMIN}`,
    responses: { 200: 'The review in the moderation view' },
    requestExample: { body: 'Thank you, Ann!' },
    examples: { 200: { ...adminReview, replyBody: 'Thank you, Ann!', repliedAt: '2026-01-03T09:00:00Z' } },
    document: { body: Type.Object({ body: TrimmedText(1, REVIEW_LIMITS.reply, `1..${count(REVIEW_LIMITS.reply)} characters`) }) },
  },
  'DELETE /api/v1/reviews/:id/reply': {
    operationId: 'deleteReviewReply',
    summary: 'Remove the merchant reply',
    description: `Removing an absent reply is a harmless 200. ${ADMIN}`,
    responses: { 200: 'The review in the moderation view' },
    examples: { 200: adminReview },
  },
  'DELETE /api/v1/reviews/:id': {
    operationId: 'deleteReview',
    summary: 'Delete a review',
    description: `Deletes the review and its helpful votes; the summary changes in the same transaction. Frees the author's place for another review of the product. ${ADMIN}`,
    responses: { 200: 'Deleted' },
    examples: { 200: { deleted: true } },
  },
}
