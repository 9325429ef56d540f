import { type TSchema, Type } from 'typebox'
import { httpUrlPattern, type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { WEBHOOK_EVENTS } from '../events/outbox.js'

export const MAX_WEBHOOKS_PER_SHOP = 20

export const WebhookIdParams = Type.Object({ webhookId: Type.String({ minLength: 1, maxLength: 64 }) })

const WEBHOOK_URL = 'https URL of the receiver'

export const CreateWebhook = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: WEBHOOK_URL }),
    events: Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), { minItems: 1, maxItems: WEBHOOK_EVENTS.length * 2 }),
  },
  { additionalProperties: false },
)

export const WebhookView = Type.Object({
  webhookId: Type.String({ description: '`wh_…`' }),
  url: Type.String({ description: 'The receiver' }),
  events: Type.Array(Type.String(), { description: 'The events it receives' }),
  createdAt: Timestamp,
})

export const CreatedWebhook = Type.Object({
  webhookId: Type.String({ description: '`wh_…`' }),
  url: Type.String({ description: 'The receiver' }),
  events: Type.Array(Type.String(), { description: 'The events it receives, duplicates dropped' }),
  createdAt: Timestamp,
  secret: Type.String({ description: 'whsec_…: shown only in this response' }),
})

export const DeliveryView = Type.Object({
  id: Type.String({ description: 'Also the webhook-id header of every attempt' }),
  event: Type.String({ description: 'The event name (`webhook.test` for test deliveries)' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempts: Type.Integer({ description: 'Attempts made so far (at most 8)' }),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status of the last answer; null when none came' }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last attempt failed: "timeout", "HTTP 500", "target not allowed", …',
  }),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due; null unless pending' }),
  createdAt: Timestamp,
})

export const DeliveriesQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })) },
  { additionalProperties: false },
)

const ADMIN = 'Admin token, every plan.'
const delivery = {
  id: 'dlv_019bd1a2b3c4Xk2m9Qp4Rt7sVw',
  event: 'wishlist.item.added',
  status: 'succeeded',
  attempts: 1,
  lastStatusCode: 200,
  lastError: null,
  nextAttemptAt: null,
  createdAt: '2026-01-02T03:04:05.678Z',
}

/** OpenAPI metadata of the webhook routes (plugins/openapi.ts). */
export const webhooksOperations: OperationDocs = {
  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    summary: 'Register a webhook endpoint',
    description: `\`url\`: an absolute \`https\` URL of at most 2,048 characters without user:password (\`http\` only when the server runs with \`WEBHOOK_ALLOW_INSECURE=true\`); IP literals that are not public unicast, \`localhost\`, \`*.local\`, \`*.internal\`, \`*.localdomain\` and single-label names are refused at creation (400 at \`body.url\`), and the name is resolved again at every delivery. \`events\`: 1..14 names from the seven events (duplicates dropped). Unknown body fields are refused. At most ${MAX_WEBHOOKS_PER_SHOP} endpoints per shop (400 WEBHOOK_LIMIT). The signing \`secret\` is in this response only. An endpoint receives only events that happen after it was created; there is no update: delete and create again. ${ADMIN}`,
    responses: { 201: 'The endpoint, with its signing secret (shown once)' },
    requestExample: { url: 'https://hooks.example.com/wishlist', events: ['wishlist.item.added', 'wishlist.product.price_dropped'] },
    examples: {
      201: {
        ok: true,
        data: {
          webhookId: 'wh_4d5e6f7a8b9c0d1e',
          url: 'https://hooks.example.com/wishlist',
          events: ['wishlist.item.added', 'wishlist.product.price_dropped'],
          createdAt: '2026-01-02T03:04:05.678Z',
          secret: 'whsec_…',
        },
      },
    },
    document: {
      body: Type.Object(
        {
          url: Type.String({
            minLength: 1,
            maxLength: 2048,
            pattern: httpUrlPattern(true),
            description: `${WEBHOOK_URL}: trimmed, then parsed as a browser does (WHATWG URL); the rules it must keep are in the operation's description`,
          }),
          events: CreateWebhook.properties.events,
        },
        { additionalProperties: false },
      ),
    },
  },
  'GET /v1/webhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints',
    description: `Every endpoint of the shop, without secrets. Endpoints disabled because the receiver answered 410 Gone stay listed (and count towards the ${MAX_WEBHOOKS_PER_SHOP}). ${ADMIN}`,
    responses: { 200: 'The endpoints' },
    examples: {
      200: {
        ok: true,
        data: {
          webhooks: [
            {
              webhookId: 'wh_4d5e6f7a8b9c0d1e',
              url: 'https://hooks.example.com/wishlist',
              events: ['wishlist.item.added'],
              createdAt: '2026-01-02T03:04:05.678Z',
            },
          ],
        },
      },
    },
  },
  'DELETE /v1/webhooks/:webhookId': {
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description: `Deletes the endpoint, its deliveries and their log; nothing is sent to it afterwards. Unknown: 404. ${ADMIN}`,
    responses: { 200: 'Deleted' },
    examples: { 200: { ok: true, data: { deleted: true } } },
  },
  'GET /v1/webhooks/:webhookId/deliveries': {
    operationId: 'listWebhookDeliveries',
    summary: "An endpoint's recent deliveries",
    description: `Newest first, \`limit\` 1..100 (default 50). \`status\`: \`pending\` (\`nextAttemptAt\` says when), \`succeeded\` or \`failed\` (after 8 attempts, or at once on 410 Gone). \`lastStatusCode\` is null when no HTTP answer came; \`lastError\` says why the last attempt failed (\`timeout\`, \`HTTP 500\`, \`target not allowed\`, \`cancelled: customer erased\`, a connection error) and is null after a success. Settled deliveries are kept 30 days by default. ${ADMIN}`,
    responses: { 200: 'The deliveries' },
    examples: { 200: { ok: true, data: { deliveries: [delivery] } } },
  },
  'POST /v1/webhooks/:webhookId/test': {
    operationId: 'testWebhook',
    summary: 'Send a test event',
    description: `Sends a signed \`webhook.test\` event to the endpoint at once (one attempt, no retries, also to a disabled endpoint) and answers 200 whatever the receiver said: \`delivered\`, \`durationMs\`, \`error\` and the delivery's log entry. ${ADMIN}`,
    responses: { 200: 'The outcome of the attempt' },
    examples: {
      200: { ok: true, data: { delivery: { ...delivery, event: 'webhook.test' }, delivered: true, durationMs: 84, error: null } },
    },
  },
}

// ---- Outbound events (the document's `webhooks` section) ----

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const OwnerData = {
  customerId: Nullable(Type.String({ description: 'The customer; null for a guest' })),
  guestId: Type.Optional(Type.String({ description: 'Present (instead of a customer id) when the owner is a guest' })),
}
const ItemData = (removed: boolean) =>
  Type.Object({
    ...OwnerData,
    productId: Type.String(),
    variantId: Nullable(Type.String({ description: "The given or the catalog's default variant; null while unknown" })),
    wishlistId: Type.String({ description: '`default` or a `wl_…` list id' }),
    ...(removed
      ? {
          reason: Type.Optional(
            Type.Literal('purchased', { description: 'Present when remove-on-purchase removed the item (an order.created event)' }),
          ),
        }
      : {}),
  })
const VariantState = Type.Object({
  price: Type.String({ description: 'Decimal string with at least two decimals ("39.00", "7.125")' }),
  inventoryQuantity: Type.Integer(),
})
const ProductSignalData = Type.Object({
  productId: Type.String(),
  variantId: Type.String(),
  handle: Type.Optional(Type.String({ description: 'When known' })),
  before: VariantState,
  after: VariantState,
  wishlistCount: Type.Integer({
    description: 'Distinct owners (customers and guests) holding the product in any list when the event was written',
  }),
  customerIds: Type.Array(Type.String(), { maxItems: 1000, description: 'Customer owners only, in id order, at most 1,000' }),
  truncated: Type.Boolean({
    description: 'true when customerIds does not list every holding customer (over 1,000, or cut to keep the body within 64 KiB)',
  }),
})
const InvitationData = Type.Object({
  token: Type.String(),
  orderId: Nullable(Type.String()),
  customerId: Nullable(Type.String()),
  email: Nullable(Type.String()),
  productId: Type.String(),
  reviewUrl: Type.String({ format: 'uri' }),
  expiresAt: Type.String({ format: 'date-time' }),
  usedAt: Nullable(Type.String({ format: 'date-time' })),
})

const EVENT_DOCS: Record<string, { summary: string; description: string; data: TSchema }> = {
  'wishlist.item.added': {
    summary: 'An item was added',
    description: 'A new item in a list: by add or merge (not by import, nor by re-adding a present product).',
    data: ItemData(false),
  },
  'wishlist.item.removed': {
    summary: 'An item was removed',
    description:
      'By delete, bulk delete, or remove-on-purchase (`reason: "purchased"`). Deleting a list and merging a guest away emit nothing.',
    data: ItemData(true),
  },
  'wishlist.item.purchased': {
    summary: 'A wishlisted product was bought',
    description:
      'An order.created event (or Shopify\'s orders/create) of the customer contained a product one of their lists holds: one event per item (per list). The item gets `purchasedAt`, or is removed when the shop\'s `remove_on_purchase` is on (then `wishlist.item.removed` with `reason: "purchased"` follows). An order repeated with the same order_id emits nothing.',
    data: Type.Object({
      customerId: Type.String(),
      wishlistId: Type.String({ description: '`default` or a `wl_…` list id' }),
      productId: Type.String(),
      variantId: Nullable(Type.String({ description: "The item's variant (or the catalog's default); null while unknown" })),
      orderId: Nullable(Type.String({ description: "The order's id; null when the event gave none" })),
      quantity: Type.Integer({
        minimum: 1,
        description: "The order line's quantity (the sum when the order names the product on several lines)",
      }),
      purchasedAt: Type.String({ format: 'date-time', description: "The order's time (milliseconds)" }),
    }),
  },
  'wishlist.shared': {
    summary: 'A share link was created',
    description: 'A new share link (not when the active one is returned again).',
    data: Type.Object({
      ...OwnerData,
      wishlistId: Type.String(),
      shareUrl: Type.String({ format: 'uri' }),
      expiresAt: Type.String({ format: 'date-time' }),
    }),
  },
  'wishlist.product.back_in_stock': {
    summary: 'A wishlisted variant is back in stock',
    description: 'A variant went from ≤ 0 to > 0 units, for a product some list holds.',
    data: ProductSignalData,
  },
  'wishlist.product.price_dropped': {
    summary: "A wishlisted variant's price fell",
    description: "A variant's price fell (compared exactly as decimals), for a product some list holds.",
    data: ProductSignalData,
  },
  'wishlist.product.low_stock': {
    summary: 'A wishlisted variant is low on stock',
    description: 'A variant went from ≥ 5 to 1..4 units, for a product some list holds.',
    data: ProductSignalData,
  },
  'review.requested': {
    summary: 'A review invitation was created',
    description:
      'One per distinct product of an order.created event (an order repeated with the same order_id creates none), so a mail tool can send `reviewUrl` to the buyer.',
    data: InvitationData,
  },
  'webhook.test': {
    summary: 'A test event',
    description: 'Sent only by `POST /v1/webhooks/{webhookId}/test`; cannot be subscribed to.',
    data: Type.Object({ webhookId: Type.String(), message: Type.String() }),
  },
}

const DELIVERY_HEADERS = [
  {
    name: 'webhook-id',
    description: 'The delivery id (`dlv_…`): the same on every retry of the delivery; deduplicate on it',
    schema: { type: 'string' },
  },
  { name: 'webhook-timestamp', description: 'Unix seconds of this attempt', schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    description:
      "`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the endpoint's `whsec_` secret (Standard Webhooks)",
    schema: { type: 'string' },
  },
]

/**
 * The OpenAPI 3.1 `webhooks` section: what an endpoint receives. Deliveries follow the
 * Standard Webhooks specification; bodies are byte-identical across retries.
 */
export const webhookEventsDocument: Record<string, unknown> = Object.fromEntries(
  Object.entries(EVENT_DOCS).map(([event, doc]) => [
    event,
    {
      post: {
        operationId: `on${event
          .split(/[._]/)
          .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
          .join('')}`,
        summary: doc.summary,
        description: `${doc.description} Signed POST to the endpoint's URL with \`content-type: application/json\` and \`user-agent: wishlist-webhooks/1\`; the body is at most 64 KiB. Any 2xx within 10 s succeeds; other answers, timeouts and connection errors are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then the delivery fails; 410 Gone fails it at once and disables the endpoint; redirects are not followed. At least once, in no guaranteed order.`,
        parameters: DELIVERY_HEADERS.map((h) => ({ ...h, in: 'header', required: true })),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: Type.Object({
                event: Type.Literal(event),
                shopDomain: Type.String({ description: "The merchant's shop domain" }),
                occurredAt: Type.String({ format: 'date-time', description: 'When the change happened (milliseconds)' }),
                data: doc.data,
              }),
            },
          },
        },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery' },
          '410': { description: 'Gone: the delivery fails and the endpoint is disabled' },
        },
        security: [],
      },
    },
  ]),
)
