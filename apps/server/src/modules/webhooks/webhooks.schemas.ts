import { Type } from 'typebox'
import { Timestamp } from '../../lib/http-schemas.js'
import { WEBHOOK_EVENTS } from '../events/outbox.js'

export const MAX_WEBHOOKS_PER_SHOP = 20

export const WebhookIdParams = Type.Object({ webhookId: Type.String({ minLength: 1, maxLength: 64 }) })

export const CreateWebhook = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'https URL of the receiver' }),
    events: Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), { minItems: 1, maxItems: WEBHOOK_EVENTS.length * 2 }),
  },
  { additionalProperties: false },
)

export const WebhookView = Type.Object({
  webhookId: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  createdAt: Timestamp,
})

export const CreatedWebhook = Type.Object({
  webhookId: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  createdAt: Timestamp,
  secret: Type.String({ description: 'whsec_…: shown only in this response' }),
})

export const DeliveryView = Type.Object({
  id: Type.String({ description: 'Also the webhook-id header of every attempt' }),
  event: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed: "timeout", "HTTP 500", "target not allowed", …' }),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
})

export const DeliveriesQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })) },
  { additionalProperties: false },
)
