/** Share links (starter+, any mode) and the public shared read. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import { sendCachedRead } from './page-cache.js'
import type { ShareService } from './share.service.js'
import { ListQuery, OwnerParams, SharedTokenParams, SharedWishlist, ShareLinkView } from './wishlists.schemas.js'
import { ownerRoute } from './wishlists.routes.js'

/**
 * A shared list is public, but its owner edits it and may revoke the link at any time: a cache
 * may keep a copy but asks again before each use (no-cache). The answer depends on the URL
 * alone (and Origin, which CORS adds).
 */
const SHARED_READ = { control: 'no-cache', vary: [] }

export const shareRoutes: FastifyPluginAsyncTypebox<{ share: ShareService }> = async (app, { share }) => {
  const tags = ['share']
  const config = { ...ownerRoute(), plan: 'starter' as const }

  app.get(
    '/v1/wishlists/:customerId/share',
    {
      config,
      schema: {
        tags,
        params: OwnerParams,
        querystring: ListQuery,
        response: { 200: Ok(ShareLinkView), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({ ok: true as const, data: await share.link(request.ctx, request.owner, request.query.wishlist_id) }),
  )

  app.delete(
    '/v1/wishlists/:customerId/share',
    {
      config,
      schema: {
        tags,
        params: OwnerParams,
        querystring: ListQuery,
        response: { 200: Ok(Type.Object({ revoked: Type.Boolean() })), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({ ok: true as const, data: await share.revoke(request.ctx, request.owner, request.query.wishlist_id) }),
  )

  // A static segment: find-my-way matches it before the `:customerId` routes.
  app.get(
    '/v1/wishlists/shared/:shareToken',
    {
      config: { access: ['public'], cache: SHARED_READ },
      schema: { tags, params: SharedTokenParams, response: { 200: Ok(SharedWishlist), ...errors(403, 404, 410, 429) } },
    },
    // Serialized once per owner version (page-cache.ts); the typed reply only takes the object.
    async (request, reply) => sendCachedRead(reply as FastifyReply, await share.read(request.params.shareToken)),
  )
}
