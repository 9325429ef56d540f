import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import type { Delivery, WebhooksService } from './webhooks.service.js'
import { CreatedWebhook, CreateWebhook, DeliveriesQuery, DeliveryView, WebhookIdParams, WebhookView } from './webhooks.schemas.js'

const deliveryView = (d: Delivery) => ({
  id: d.id,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  lastStatusCode: d.lastStatusCode,
  lastError: d.lastError,
  nextAttemptAt: d.nextAttemptAt === null ? null : isoMillis(d.nextAttemptAt),
  createdAt: isoMillis(d.createdAt),
})

/** docs/api.md, "Webhooks": webhook endpoints, admin tokens only. */
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  const config = { access: ['admin' as const] }
  const tags = ['webhooks']

  app.post(
    '/v1/webhooks',
    {
      config: { ...config, batches: ['events'] },
      schema: { tags, body: CreateWebhook, response: { 201: Ok(CreatedWebhook), ...errors(400, 401, 403, 429) } },
    },
    async (request, reply) => {
      const created = await webhooks.create(request.ctx, request.body)
      // The signing secret is shown only here: `private, no-store` like every admin answer (plugins/caching.ts).
      reply.code(201)
      return { ok: true as const, data: { ...created, createdAt: isoMillis(created.createdAt) } }
    },
  )

  app.get(
    '/v1/webhooks',
    { config, schema: { tags, response: { 200: Ok(Type.Object({ webhooks: Type.Array(WebhookView) })), ...errors(401, 403, 429) } } },
    async (request) => ({
      ok: true as const,
      data: { webhooks: (await webhooks.list(request.ctx)).map((w) => ({ ...w, createdAt: isoMillis(w.createdAt) })) },
    }),
  )

  app.delete(
    '/v1/webhooks/:webhookId',
    {
      config,
      schema: {
        tags,
        params: WebhookIdParams,
        response: { 200: Ok(Type.Object({ deleted: Type.Literal(true) })), ...errors(401, 403, 404, 429) },
      },
    },
    async (request) => {
      await webhooks.remove(request.ctx, request.params.webhookId)
      return { ok: true as const, data: { deleted: true as const } }
    },
  )

  app.get(
    '/v1/webhooks/:webhookId/deliveries',
    {
      config,
      schema: {
        tags,
        params: WebhookIdParams,
        querystring: DeliveriesQuery,
        response: { 200: Ok(Type.Object({ deliveries: Type.Array(DeliveryView) })), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const list = await webhooks.deliveries(request.ctx, request.params.webhookId, request.query.limit ?? 50)
      return { ok: true as const, data: { deliveries: list.map(deliveryView) } }
    },
  )

  app.post(
    '/v1/webhooks/:webhookId/test',
    {
      config,
      schema: {
        tags,
        params: WebhookIdParams,
        response: {
          200: Ok(
            Type.Object({
              delivery: DeliveryView,
              delivered: Type.Boolean(),
              durationMs: Type.Integer(),
              error: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
          ...errors(401, 403, 404, 429),
        },
      },
    },
    async (request) => {
      const sent = await webhooks.sendTest(request.ctx, request.params.webhookId)
      if (sent.refusal) request.log.warn({ webhookId: request.params.webhookId, refusal: sent.refusal }, 'webhook test target not allowed')
      return {
        ok: true as const,
        data: { delivery: deliveryView(sent), delivered: sent.status === 'succeeded', durationMs: sent.durationMs, error: sent.error },
      }
    },
  )
}
