/** TypeBox schemas of privacy requests and the shop export (docs/api.md, "Privacy and export"). */
import { Type } from 'typebox'
import { Timestamp } from '../../lib/http-schemas.js'
import { platformIdPattern } from '../../lib/platform-ids.js'
import { Invitation } from '../reviews/invitations.schemas.js'
import { AdminReview } from '../reviews/reviews.schemas.js'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

export const CustomerParams = Type.Object({
  customerId: Type.String({ pattern: platformIdPattern('Customer'), description: 'Digits or a URL-encoded platform GID' }),
})

export const EmailQuery = Type.Object({
  email: Type.Optional(
    Type.String({ minLength: 3, maxLength: 254, description: 'Also covers reviews and purchases by this e-mail address, which nothing ties to the customer id' }),
  ),
})

const ExportItem = Type.Object(
  {
    productId: Type.String(),
    variantId: Nullable(Type.String()),
    handle: Nullable(Type.String()),
    metadata: Nullable(Type.Object({}, { additionalProperties: true })),
    addedAt: Timestamp,
  },
  { additionalProperties: false },
)

const ExportList = Type.Object(
  { wishlistId: Type.String(), name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp, itemCount: Type.Integer(), items: Type.Array(ExportItem) },
  { additionalProperties: false },
)

export const CustomerExport = Type.Object(
  {
    generatedAt: Timestamp,
    customerId: Type.String(),
    emails: Type.Array(Type.String(), { description: 'E-mail addresses attributed to the customer: those its orders gave, and `email`. An address typed into a review is never attributed' }),
    wishlistOwner: Nullable(Type.Object({ itemCount: Type.Integer(), createdAt: Timestamp, updatedAt: Timestamp }, { additionalProperties: false })),
    lists: Type.Array(ExportList),
    shareLinks: Type.Array(
      Type.Object(
        { token: Type.String(), shareUrl: Type.String(), wishlistId: Type.String(), createdAt: Timestamp, expiresAt: Timestamp, revokedAt: Nullable(Timestamp) },
        { additionalProperties: false },
      ),
    ),
    reviews: Type.Array(AdminReview),
    helpfulVotes: Type.Array(Type.Object({ reviewId: Type.Integer(), createdAt: Timestamp }, { additionalProperties: false })),
    purchases: Type.Array(
      Type.Object(
        {
          productId: Type.String(),
          identity: Type.Union([Type.Literal('customer'), Type.Literal('email')], { description: 'The buyer identity this record is kept under: an order is recorded once per identity it names' }),
          customerId: Nullable(Type.String()),
          email: Nullable(Type.String()),
          createdAt: Timestamp,
        },
        { additionalProperties: false },
      ),
    ),
    reviewInvitations: Type.Array(Invitation, { description: 'Review invitations of the customer\'s orders (and of orders without a customer by its addresses)' }),
    analyticsEvents: Type.Array(
      Type.Object({ type: Type.String(), productId: Nullable(Type.String()), occurredAt: Timestamp }, { additionalProperties: false }),
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
