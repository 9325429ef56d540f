/**
 * Review invitations: the storefront's lookup (no credentials: the token is the proof; the
 * reviews interface's shapes) and the merchant's list (admin token; the `{ok, data}` envelope).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, Ok, reviewErrors } from '../../lib/http-schemas.js'
import { platformIdOf } from '../../lib/platform-ids.js'
import { InvitationList, InvitationListQuery, InvitationLookup, InvitationParams } from './invitations.schemas.js'
import { INVITATION_PATH, type InvitationsService } from './invitations.service.js'

export const invitationsRoutes: FastifyPluginAsyncTypebox<{ invitations: InvitationsService }> = async (app, { invitations }) => {
  app.get(
    `${INVITATION_PATH}:token`,
    {
      // One customer's invitation (and whether it was used): `private, no-store` (plugins/caching.ts).
      config: { access: ['public'], cache: 'private' },
      schema: {
        tags: ['reviews'],
        params: InvitationParams,
        response: { 200: InvitationLookup, ...reviewErrors(400, 404, 429) },
      },
    },
    async (request) => invitations.lookup(request.params.token),
  )

  app.get(
    '/v1/admin/review-invitations',
    {
      config: { access: ['admin'] },
      schema: {
        tags: ['reviews moderation'],
        querystring: InvitationListQuery,
        response: { 200: Ok(InvitationList), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const q = request.query
      const orderId = q.order_id === undefined ? undefined : platformIdOf(q.order_id, 'Order', 'query.order_id')
      return { ok: true as const, data: await invitations.list(request.ctx, { orderId, email: q.email, limit: q.limit }) }
    },
  )
}
