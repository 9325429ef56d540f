/**
 * The platform events intake (docs/api.md, "Platform events"). The body schema checks the envelope (≤ 500
 * flat objects with a known `type`); each event is then checked against the schema of its
 * type, so an error names the failing event's `index` and the exact field.
 */
import { type Static, Type } from 'typebox'
import type { OperationDocs } from '../../lib/http-schemas.js'
import { GUEST_ID_PATTERN, type PlatformKind, platformIdPattern } from '../../lib/platform-ids.js'
import { MAX_LINE_QUANTITY, MAX_MINOR_DIGITS, MAX_PRICE_INTEGER_DIGITS } from '../../lib/money.js'

export const MAX_EVENTS_PER_BATCH = 500
/**
 * Order line items across one request. Each can write a review invitation (announced as
 * `review.requested`) and a remove-on-purchase removal (`wishlist.item.removed`), so a
 * request stays within 10,000 webhook events (outbox rows) and bounded work.
 */
export const MAX_ORDER_LINE_ITEMS_PER_BATCH = 5_000
export const EVENT_TYPES = ['cart.item_added', 'product.updated', 'order.created'] as const

const PlatformId = (kind: PlatformKind) =>
  Type.String({ pattern: platformIdPattern(kind), description: `1..32 digits or a platform GID of a ${kind}` })
/** A decimal string such as "19.99"; a JSON number is accepted too. */
const Price = Type.Union([Type.String({ pattern: '^[0-9]{1,15}(\\.[0-9]{1,6})?$' }), Type.Number({ minimum: 0, maximum: 1e15 })])
/**
 * An order line's unit price (lib/money.ts): at most 9 integer digits and 4 decimals here;
 * the service then holds the decimals to the order currency's minor-unit digits.
 */
const LinePrice = Type.Union(
  [
    Type.String({
      pattern: `^[0-9]{1,${MAX_PRICE_INTEGER_DIGITS}}(\\.[0-9]{1,${MAX_MINOR_DIGITS}})?$`,
      maxLength: MAX_PRICE_INTEGER_DIGITS + 1 + MAX_MINOR_DIGITS,
    }),
    Type.Number({ minimum: 0, exclusiveMaximum: 1_000_000_000 }),
  ],
  {
    description:
      'Unit price in `currency`: a decimal string such as "19.99", or a non-negative JSON number; at most 999,999,999 with at most the currency\'s ISO 4217 minor-unit digits (999999999.99 EUR, 999999999 JPY, 999999999.999 KWD), else 400 at this field',
  },
)

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
  title: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: "The product's title, kept by the catalog (the dashboard's top products show it)",
    }),
  ),
  image_url: Type.Optional(
    Type.String({
      maxLength: 2048,
      pattern: '^https?://[^\\s]+$',
      description: "The product's image (an http or https URL), kept by the catalog: shopper notifications carry it",
    }),
  ),
  updated_at: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'When the platform last changed the product. When given, an update not newer than the last one applied for the product (by this field) is ignored: no catalog change, no signal. Platforms deliver updates late and out of order; send it',
    }),
  ),
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
  locale: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$',
      maxLength: 35,
      description: "The buyer's language (`fr`, `pt-BR`): its review invitations' links open the review page in it",
    }),
  ),
  currency: Type.Optional(
    Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code (three capital letters); required when a line has a price' }),
  ),
  occurred_at: Type.Optional(
    Type.String({ format: 'date-time', description: "The order's time; now when omitted (a later time is taken as now)" }),
  ),
  line_items: Type.Array(
    Type.Object({
      product_id: PlatformId('Product'),
      variant_id: Type.Optional(PlatformId('ProductVariant')),
      // The price first: a line with both out of bounds reports the price (the first error).
      price: Type.Optional(LinePrice),
      quantity: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY, default: 1, description: 'Units bought, 1..10,000; default 1' }),
      ),
    }),
    { minItems: 1, maxItems: 1000 },
  ),
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

/**
 * The body as the document states it: each event exactly as the service checks it (a
 * union discriminated by `type`). The route schema checks only the envelope, so that a bad
 * event is reported with its `index`; the service then checks each event against its type.
 */
const EventsBodyDoc = Type.Object(
  {
    events: Type.Array(
      Type.Union(
        [
          {
            ...CartItemAdded,
            title: 'CartItemAddedEvent',
            description:
              'cart.item_added: a shopper added a product to the cart (feeds wishlistToCartRate). Exactly one of customer_id and guest_id. occurred_at defaults to now',
            oneOf: [
              Type.Object({ customer_id: CartItemAdded.properties.customer_id }, { required: ['customer_id'] }),
              Type.Object({ guest_id: CartItemAdded.properties.guest_id }, { required: ['guest_id'] }),
            ],
          },
          {
            ...ProductUpdated,
            title: 'ProductUpdatedEvent',
            description:
              "product.updated: a product's variants (the first is the default variant), compared with the last known state: back_in_stock, price_dropped and low_stock signals for products some list holds. No variant twice",
          },
          {
            ...OrderCreated,
            title: 'OrderCreatedEvent',
            description:
              "order.created: an order: review invitations for its products, verified purchases of its customer, the customer's wishlisted items marked bought (or removed with remove_on_purchase), attribution (conversions). `currency` is required when a line has a price. An order_id the shop sent before is applied once. At most 5,000 line items across the orders of one request",
          },
        ],
        { discriminator: { propertyName: 'type' } },
      ),
      { maxItems: MAX_EVENTS_PER_BATCH },
    ),
  },
  { additionalProperties: false },
)

/** OpenAPI metadata of the events intake (plugins/openapi.ts). */
export const eventsOperations: OperationDocs = {
  'POST /v1/events': {
    operationId: 'postPlatformEvents',
    summary: 'Send platform events (carts, products, orders)',
    description:
      "Admin token, every plan. Up to 500 events, validated as a whole: an unknown `type` or a missing or malformed field fails the batch with 400 VALIDATION_ERROR whose `details` carry the event's `index` and a path such as `body.events.2.variants.0.price` (at most 50 details). Then the events are applied in order in one transaction. Unknown fields of an event are ignored. Ids accept platform GIDs; prices are decimal strings (`\"19.99\"`) or non-negative JSON numbers: a variant's with at most 6 decimals, an order line's at most 999,999,999 with at most its currency's minor-unit digits (`quantity` at most 10,000). One request emits at most one webhook event per (product, variant, signal); product signals are queued and written by the webhook worker, so the answer's time does not depend on how many shoppers hold a product.",
    responses: { 200: 'The number of events accepted' },
    requestExample: {
      events: [
        {
          type: 'product.updated',
          product_id: '7001',
          handle: 'classic-leather-bag',
          title: 'Classic leather bag',
          variants: [{ variant_id: '70011', price: '89.00', inventory_quantity: 3 }],
        },
        { type: 'cart.item_added', customer_id: '1001', product_id: '7001', occurred_at: '2026-01-02T10:00:00Z' },
        {
          type: 'order.created',
          order_id: '5001',
          customer_id: '1001',
          email: 'ann@example.com',
          currency: 'EUR',
          occurred_at: '2026-01-03T09:30:00Z',
          line_items: [{ product_id: '7001', variant_id: '70011', quantity: 2, price: '89.00' }],
        },
      ],
    },
    examples: { 200: { ok: true, data: { accepted: 3 } } },
    document: { body: EventsBodyDoc },
  },
}
