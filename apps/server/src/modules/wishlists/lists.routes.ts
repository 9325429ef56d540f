/** Multi-wishlist (lists) and move. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import type { ListsService } from './lists.service.js'
import { ListNameBody, ListParams, ListRecord, MoveBody, OwnerParams } from './wishlists.schemas.js'
import { ownerRoute } from './wishlists.routes.js'

export const listRoutes: FastifyPluginAsyncTypebox<{ lists: ListsService }> = async (app, { lists }) => {
  const tags = ['lists']
  const config = ownerRoute()

  app.get(
    '/v1/wishlists/:customerId/lists',
    {
      config,
      schema: {
        tags,
        params: OwnerParams,
        response: { 200: Ok(Type.Object({ wishlists: Type.Array(ListRecord) })), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => ({ ok: true as const, data: { wishlists: await lists.lists(request.ctx, request.owner) } }),
  )

  app.post(
    '/v1/wishlists/:customerId/lists',
    {
      config,
      schema: {
        tags,
        params: OwnerParams,
        body: ListNameBody,
        response: { 201: Ok(Type.Object({ wishlist: ListRecord })), ...errors(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      const wishlist = await lists.create(request.ctx, request.owner, request.body.name)
      reply.code(201)
      return { ok: true as const, data: { wishlist } }
    },
  )

  app.put(
    '/v1/wishlists/:customerId/lists/:listId',
    {
      config,
      schema: {
        tags,
        params: ListParams,
        body: ListNameBody,
        response: { 200: Ok(Type.Object({ updated: Type.Boolean() })), ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      await lists.rename(request.ctx, request.owner, request.params.listId, request.body.name)
      return { ok: true as const, data: { updated: true } }
    },
  )

  app.delete(
    '/v1/wishlists/:customerId/lists/:listId',
    {
      config,
      schema: {
        tags,
        params: ListParams,
        response: { 200: Ok(Type.Object({ deleted: Type.Boolean() })), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      await lists.remove(request.ctx, request.owner, request.params.listId)
      return { ok: true as const, data: { deleted: true } }
    },
  )

  app.post(
    '/v1/wishlists/:customerId/items/move',
    {
      config,
      schema: {
        tags,
        params: OwnerParams,
        body: MoveBody,
        response: { 200: Ok(Type.Object({ moved: Type.Boolean() })), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      await lists.move(request.ctx, request.owner, request.body)
      return { ok: true as const, data: { moved: true } }
    },
  )
}
