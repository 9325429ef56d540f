/**
 * The platform events intake (docs/api.md, "Platform events"). The body schema checks the envelope (≤ 500
 * flat objects with a known `type`); each event is then checked against the schema of its
 * type, so an error names the failing event's `index` and the exact field.
 */
import { type Static, Type } from 'typebox'
import { GUEST_ID_PATTERN, type PlatformKind, platformIdPattern } from '../../lib/platform-ids.js'

export const MAX_EVENTS_PER_BATCH = 500
/**
 * Order line items across one request. Each can write a review invitation (announced as
 * `review.requested`) and a remove-on-purchase removal (`wishlist.item.removed`), so a
 * request stays within 10,000 webhook events (outbox rows) and bounded work.
 */
export const MAX_ORDER_LINE_ITEMS_PER_BATCH = 5_000
export const EVENT_TYPES = ['cart.item_added', 'product.updated', 'order.created'] as const

const PlatformId = (kind: PlatformKind) => Type.String({ pattern: platformIdPattern(kind), description: `1..32 digits or a platform GID of a ${kind}` })
/** A decimal string such as "19.99"; a JSON number is accepted too. */
const Price = Type.Union([
  Type.String({ pattern: '^[0-9]{1,15}(\\.[0-9]{1,6})?$' }),
  Type.Number({ minimum: 0, maximum: 1e15 }),
])

// Unknown fields are ignored: platforms send richer objects than the ones we read.
export const CartItemAdded = Type.Object({
  type: Type.Literal('cart.item_added'),
  customer_id: Type.Optional(PlatformId('Customer')),
  guest_id: Type.Optional(Type.String({ pattern: GUEST_ID_PATTERN })),
  product_id: PlatformId('Product'),
  variant_id: Type.Optional(PlatformId('ProductVariant')),
  occurred_at: Type.Optional(Type.String({ format: 'date-time' })),
})

export const ProductUpdated = Type.Object({
  type: Type.Literal('product.updated'),
  product_id: PlatformId('Product'),
  handle: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  variants: Type.Array(
    Type.Object({
      variant_id: PlatformId('ProductVariant'),
      price: Price,
      inventory_quantity: Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 }),
    }),
    { minItems: 1, maxItems: 2048 },
  ),
})

export const OrderCreated = Type.Object({
  type: Type.Literal('order.created'),
  order_id: Type.Optional(PlatformId('Order')),
  customer_id: Type.Optional(PlatformId('Customer')),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
  line_items: Type.Array(Type.Object({ product_id: PlatformId('Product'), variant_id: Type.Optional(PlatformId('ProductVariant')) }), { minItems: 1, maxItems: 1000 }),
})

export type CartItemAddedEvent = Static<typeof CartItemAdded>
export type ProductUpdatedEvent = Static<typeof ProductUpdated>
export type OrderCreatedEvent = Static<typeof OrderCreated>
export type PlatformEvent = CartItemAddedEvent | ProductUpdatedEvent | OrderCreatedEvent

export const EVENT_SCHEMAS = { 'cart.item_added': CartItemAdded, 'product.updated': ProductUpdated, 'order.created': OrderCreated } as const

export const EventsBody = Type.Object(
  {
    events: Type.Array(
      Type.Object(
        { type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))) },
        { additionalProperties: true, description: 'cart.item_added | product.updated | order.created, with the fields of its type' },
      ),
      { maxItems: MAX_EVENTS_PER_BATCH },
    ),
  },
  { additionalProperties: false },
)

export const Accepted = Type.Object({ accepted: Type.Integer() })
