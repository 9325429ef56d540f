/** TypeBox schemas of privacy requests and the shop export (docs/api.md, "Privacy and export"). */
import { Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { platformIdPattern } from '../../lib/platform-ids.js'
import { Invitation } from '../reviews/invitations.schemas.js'
import { AdminReview } from '../reviews/reviews.schemas.js'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

export const CustomerParams = Type.Object({
  customerId: Type.String({ pattern: platformIdPattern('Customer'), description: 'Digits or a URL-encoded platform GID' }),
})

export const EmailQuery = Type.Object({
  email: Type.Optional(
    Type.String({
      minLength: 3,
      maxLength: 254,
      description: 'Also covers reviews and purchases by this e-mail address, which nothing ties to the customer id',
    }),
  ),
})

const ExportItem = Type.Object(
  {
    productId: Type.String(),
    variantId: Nullable(Type.String()),
    handle: Nullable(Type.String()),
    metadata: Nullable(Type.Object({}, { additionalProperties: true })),
    addedAt: Timestamp,
    quantity: Type.Integer({ minimum: 1, maximum: 99 }),
    note: Nullable(Type.String()),
    priority: Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high')]),
    purchasedAt: Nullable(Timestamp),
  },
  { additionalProperties: false },
)

const ExportList = Type.Object(
  {
    wishlistId: Type.String(),
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    itemCount: Type.Integer(),
    items: Type.Array(ExportItem),
  },
  { additionalProperties: false },
)

export const CustomerExport = Type.Object(
  {
    generatedAt: Timestamp,
    customerId: Type.String(),
    emails: Type.Array(Type.String(), {
      description:
        'E-mail addresses attributed to the customer: those its orders gave, and `email`. An address typed into a review is never attributed',
    }),
    wishlistOwner: Nullable(
      Type.Object({ itemCount: Type.Integer(), createdAt: Timestamp, updatedAt: Timestamp }, { additionalProperties: false }),
    ),
    lists: Type.Array(ExportList),
    shareLinks: Type.Array(
      Type.Object(
        {
          token: Type.String(),
          shareUrl: Type.String(),
          wishlistId: Type.String(),
          createdAt: Timestamp,
          expiresAt: Timestamp,
          revokedAt: Nullable(Timestamp),
        },
        { additionalProperties: false },
      ),
    ),
    reviews: Type.Array(AdminReview),
    helpfulVotes: Type.Array(Type.Object({ reviewId: Type.Integer(), createdAt: Timestamp }, { additionalProperties: false })),
    purchases: Type.Array(
      Type.Object(
        {
          productId: Type.String(),
          identity: Type.Union([Type.Literal('customer'), Type.Literal('email')], {
            description: 'The buyer identity this record is kept under: an order is recorded once per identity it names',
          }),
          customerId: Nullable(Type.String()),
          email: Nullable(Type.String()),
          createdAt: Timestamp,
        },
        { additionalProperties: false },
      ),
    ),
    reviewInvitations: Type.Array(Invitation, {
      description: "Review invitations of the customer's orders (and of orders without a customer by its addresses)",
    }),
    analyticsEvents: Type.Array(
      Type.Object({ type: Type.String(), productId: Nullable(Type.String()), occurredAt: Timestamp }, { additionalProperties: false }),
    ),
    notificationContact: Nullable(
      Type.Object(
        {
          email: Type.String(),
          source: Type.Union([Type.Literal('order'), Type.Literal('merchant'), Type.Literal('shopper')]),
          consentText: Nullable(Type.String({ description: 'The consent text the shopper saw (source `shopper`)' })),
          consentedAt: Timestamp,
        },
        { additionalProperties: false, description: 'The e-mail shopper notifications go to (docs/notifications.md), or null' },
      ),
    ),
    notificationOptOut: Nullable(
      Type.Object(
        { optedOutAt: Timestamp },
        { additionalProperties: false, description: 'When the customer stopped every notification, or null' },
      ),
    ),
    notifications: Type.Array(
      Type.Object(
        {
          signal: Type.String(),
          productId: Type.String(),
          variantId: Nullable(Type.String()),
          state: Type.Union([Type.Literal('queued'), Type.Literal('suppressed')]),
          reason: Nullable(Type.String({ description: 'Why a suppressed one was not sent: `cooldown`, `daily_cap`, `opted_out`' })),
          createdAt: Timestamp,
          deliveries: Type.Array(
            Type.Object(
              {
                channel: Type.String(),
                state: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')]),
                sentAt: Nullable(Timestamp),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'The notifications the customer was due, oldest first, each with its delivery per channel' },
    ),
  },
  { additionalProperties: false },
)

export const ErasedCounts = Type.Object(
  {
    wishlists: Type.Integer(),
    items: Type.Integer(),
    shareLinks: Type.Integer(),
    reviewsAnonymized: Type.Integer(),
    helpfulVotes: Type.Integer(),
    purchases: Type.Integer(),
    reviewInvitations: Type.Integer(),
    analyticsEventsPseudonymized: Type.Integer(),
    webhookDeliveries: Type.Integer({ description: 'Pending webhook deliveries cancelled, or rewritten without the customer' }),
  },
  { additionalProperties: false },
)

const WHO =
  "The customer is who the service can prove: wishlists, share links and analytics events of that customer id, votes cast with its token, reviews linked to it (its token, or an invitation of its order), purchases and invitations of its orders and of orders linked to no customer under the addresses its orders gave. `email` adds an address whose reviews linked to nobody, purchases and invitations are covered too (e.g. the address in the platform's redact notification). Guests are not covered. Admin token, every plan."

/** OpenAPI metadata of the privacy routes (plugins/openapi.ts). */
export const privacyOperations: OperationDocs = {
  'GET /v1/admin/customers/:customerId/export': {
    operationId: 'exportCustomer',
    summary: "Export a customer's data",
    description: `Everything held about one customer (a data request) as JSON: lists with their items (hidden named lists too), share links (expired and revoked too), reviews in the moderation view, helpful votes, purchases, review invitations and raw analytics events. A customer with nothing held is 200 with the empty structure (\`wishlistOwner: null\`, empty arrays). It counts among the shop's 2 exports at once (429 RATE_LIMITED with \`Retry-After\` beyond). ${WHO}`,
    responses: { 200: "The customer's data" },
  },
  'DELETE /v1/admin/customers/:customerId': {
    operationId: 'eraseCustomer',
    summary: 'Erase a customer',
    description: `One transaction (a redact request): the customer's lists, items and share links are deleted (shared reads answer 404 at once); reviews are anonymized (name "Anonymous", e-mail and customer link removed; rating, text, status, reply and counts stay); helpful votes, purchases and review invitations are deleted; raw analytics events are pseudonymized (counts and rollups unchanged); pending webhook deliveries that name the customer are cancelled or rewritten without them. Returns the counts; a second call returns zeros. ${WHO}`,
    responses: { 200: 'What was erased' },
    examples: {
      200: {
        ok: true,
        data: {
          wishlists: 2,
          items: 4,
          shareLinks: 1,
          reviewsAnonymized: 1,
          helpfulVotes: 0,
          purchases: 2,
          reviewInvitations: 1,
          analyticsEventsPseudonymized: 9,
          webhookDeliveries: 0,
        },
      },
    },
  },
  'GET /v1/admin/export/wishlists.csv': {
    operationId: 'exportWishlistsCsv',
    summary: 'Export every wishlist item as CSV',
    description:
      "Every item of the shop (every list, hidden named lists included; guests' items last with an empty `customer_id`), ordered by customer id, list id, product id: header `customer_id,wishlist_id,list_name,product_id,variant_id,handle,added_at,note,purchased_at,quantity,priority` (`note` and `purchased_at` empty when unset), RFC 4180 with CRLF, UTF-8 without a byte-order mark. A field that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` (formula injection). Streamed as the client reads, in keyset pages of short queries (no database connection is held while the client is slow; rows written during the export may or may not be in it): an error after the first bytes ends the response without its final chunk. At most 2 exports of a shop (this one, customer exports) run at once: 429 RATE_LIMITED with `Retry-After` beyond. Admin token, every plan.",
    responses: { 200: 'The CSV file (`Content-Disposition: attachment; filename="wishlists-YYYY-MM-DD.csv"`)' },
  },
}
