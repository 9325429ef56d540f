import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import { Accepted, EventsBody } from './events.schemas.js'
import type { EventsService } from './events.service.js'

/** docs/api.md, "Platform events": `POST /v1/events`, admin tokens only. */
export const eventsRoutes: FastifyPluginAsyncTypebox<{ events: EventsService }> = async (app, { events }) => {
  app.post(
    '/v1/events',
    {
      config: { access: ['admin'], batches: ['events'] },
      schema: { tags: ['events'], body: EventsBody, response: { 200: Ok(Accepted), ...errors(400, 401, 403, 413, 415, 429) } },
    },
    async (request) => ({ ok: true as const, data: { accepted: (await events.ingest(request.ctx, request.body.events)).accepted } }),
  )
}
