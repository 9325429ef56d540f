/** Wishlist items. `/v1/wishlists/{customerId}` where customerId may be `me`. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Counter } from 'prom-client'
import type { Access } from '../auth/auth.types.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { sendCachedRead } from './page-cache.js'
import type { WishlistsService } from './wishlists.service.js'
import {
  AddItemBody,
  AddItemResult,
  BulkDeleteBody,
  BulkDeleteResult,
  DeleteItemResult,
  DeleteItemParams,
  DeleteItemQuery,
  ItemsPage,
  ItemsQuery,
  ListQuery,
  MergeBody,
  MergeResult,
  OwnerParams,
  PatchItemBody,
  PatchItemResult,
} from './wishlists.schemas.js'

/** Customers, guests and admins on their own wishlist; the headless (bearer) API needs starter+. */
export const ownerRoute = (access: Access[] = ['admin', 'customer', 'guest']) => ({
  access,
  owner: 'customerId',
  bearerPlan: 'starter' as const,
})

/** `pageCacheMetric: false`: a second registration (the app proxy's) leaves the metric to the first. */
export const wishlistRoutes: FastifyPluginAsyncTypebox<{ wishlists: WishlistsService; pageCacheMetric?: boolean }> = async (
  app,
  { wishlists, pageCacheMetric = true },
) => {
  const tags = ['wishlists']
  const { pageCacheStats } = wishlists
  if (pageCacheMetric)
    new Counter({
      name: 'wishlist_page_cache_lookups_total',
      help: 'GET-page cache lookups by result (hit: served from memory at the current owner version)',
      labelNames: ['result'] as const,
      registers: [app.metrics],
      collect() {
        this.reset()
        this.inc({ result: 'hit' }, pageCacheStats.hits)
        this.inc({ result: 'miss' }, pageCacheStats.misses)
      },
    })

  app.get(
    '/v1/wishlists/:customerId',
    {
      config: ownerRoute(),
      schema: { tags, params: OwnerParams, querystring: ItemsQuery, response: { 200: Ok(ItemsPage), ...errors(400, 401, 403, 404, 429) } },
    },
    // Serialized once per owner version (page-cache.ts); the typed reply only takes the object.
    // Not async: a body confirmed by the change stamp is sent without a promise.
    (request, reply) => sendCachedRead(reply as FastifyReply, wishlists.itemsRead(request.ctx, request.owner, request.query)),
  )

  app.post(
    '/v1/wishlists/:customerId/items',
    {
      config: ownerRoute(),
      schema: {
        tags,
        params: OwnerParams,
        querystring: ListQuery,
        body: AddItemBody,
        response: { 200: Ok(AddItemResult), 201: Ok(AddItemResult), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const { created, item, count } = await wishlists.addItem(request.ctx, request.owner, request.query.wishlist_id, request.body)
      reply.code(created ? 201 : 200)
      return { ok: true as const, data: { item, count } }
    },
  )

  app.post(
    '/v1/wishlists/:customerId/items/bulk-delete',
    {
      config: { ...ownerRoute(), batches: ['product_ids', 'handles'] },
      schema: {
        tags,
        params: OwnerParams,
        querystring: ListQuery,
        body: BulkDeleteBody,
        response: { 200: Ok(BulkDeleteResult), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      ok: true as const,
      data: await wishlists.bulkDelete(request.ctx, request.owner, request.query.wishlist_id, request.body),
    }),
  )

  app.delete(
    '/v1/wishlists/:customerId/items/:productId',
    {
      config: ownerRoute(),
      schema: {
        tags,
        params: DeleteItemParams,
        querystring: DeleteItemQuery,
        response: { 200: Ok(DeleteItemResult), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      ok: true as const,
      data: await wishlists.removeItem(request.ctx, request.owner, request.query.wishlist_id, request.params.productId, request.query.by),
    }),
  )

  app.patch(
    '/v1/wishlists/:customerId/items/:productId',
    {
      config: ownerRoute(),
      schema: {
        tags,
        params: DeleteItemParams,
        querystring: DeleteItemQuery,
        body: PatchItemBody,
        response: { 200: Ok(PatchItemResult), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      ok: true as const,
      data: await wishlists.updateItem(
        request.ctx,
        request.owner,
        request.query.wishlist_id,
        request.params.productId,
        request.query.by,
        request.body,
      ),
    }),
  )

  app.post(
    '/v1/wishlists/:customerId/merge',
    {
      config: { ...ownerRoute(['admin', 'customer']), batches: ['guest_items'] },
      schema: {
        tags,
        params: OwnerParams,
        querystring: ListQuery,
        body: MergeBody,
        response: { 200: Ok(MergeResult), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      ok: true as const,
      data: await wishlists.merge(request.ctx, request.owner, request.query.wishlist_id, request.body),
    }),
  )
}
