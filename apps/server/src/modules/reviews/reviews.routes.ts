/**
 * The reviews interface under /api/v1 (docs/api.md, "Reviews"). No `{ok, data}` envelope here, errors are `{error: {…}}`.
 * Public routes take the storefront key (with or without a guest id), a customer token
 * (which links the review / identifies the voter) or an admin token; moderation is admin only.
 * Reviews are on every plan, so no route has a plan gate.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import { Type } from 'typebox'
import { clientAddress } from '../../plugins/auth.js'
import { reviewErrors } from '../../lib/http-schemas.js'
import type { Access } from '../auth/auth.types.js'
import type { ReviewsService } from './reviews.service.js'
import {
  AdminListQuery,
  AdminReview,
  Deleted,
  HelpfulCount,
  ListQuery,
  Paged,
  ProductParams,
  PublicReview,
  ReplyBody,
  ReviewIdParams,
  SubmitBody,
  Submitted,
  Summary,
} from './reviews.schemas.js'

/** How long a browser or a CDN may keep a product's reviews. */
const REVIEWS_CACHE_CONTROL = 'public, max-age=300'

const allErrors = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, strict: false })

export const reviewsRoutes: FastifyPluginAsyncTypebox<{ reviews: ReviewsService }> = async (app, { reviews }) => {
  const open = { access: ['storefront', 'guest', 'customer', 'admin'] as Access[] }
  /**
   * The public reads: the same answer for every caller of the shop, which the storefront key,
   * the bearer token or the app proxy's URL names (a guest id changes nothing). A browser or a
   * CDN keeps them 5 minutes, so a shopper's product page views ask the service for them once
   * (a review's approval, reply or removal shows within those minutes). Asked with an admin
   * token they are private (plugins/caching.ts).
   */
  const read = { ...open, cache: { control: REVIEWS_CACHE_CONTROL, vary: ['Authorization', 'X-Storefront-Key'] } }
  const admin = { access: ['admin'] as Access[] }
  const tags = ['reviews']
  const modTags = ['reviews moderation']

  app.get(
    '/api/v1/products/:productId/reviews',
    {
      config: read,
      schema: {
        tags,
        params: ProductParams,
        querystring: ListQuery,
        response: { 200: Paged(PublicReview), ...reviewErrors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const q = request.query
      return reviews.list(request.ctx, request.params.productId, {
        page: q.page,
        perPage: q.per_page,
        sort: q.sort,
        rating: q.rating,
        verified: q.verified,
        withPhotos: q.with_photos,
      })
    },
  )

  app.get(
    '/api/v1/products/:productId/reviews/summary',
    {
      config: read,
      schema: {
        tags,
        params: ProductParams,
        response: { 200: Summary, ...reviewErrors(400, 401, 403, 429) },
      },
    },
    async (request) => reviews.summary(request.ctx, request.params.productId),
  )

  app.get(
    '/api/v1/reviews/:id',
    {
      config: read,
      schema: {
        tags,
        params: ReviewIdParams,
        response: { 200: Type.Union([AdminReview, PublicReview]), ...reviewErrors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => reviews.get(request.ctx, request.params.id),
  )

  app.post(
    '/api/v1/reviews',
    {
      config: { ...open, batches: ['photos'] },
      schema: {
        tags,
        body: SubmitBody,
        response: { 201: Submitted, ...reviewErrors(400, 401, 403, 409, 413, 415, 429) },
      },
      // A review form shows every field's problem at once: all schema failures, not the first.
      validatorCompiler: ({ schema }) => allErrors.compile(schema),
    },
    async (request, reply) => {
      const created = await reviews.submit(request.ctx, request.body)
      reply.code(201).header('location', `/api/v1/reviews/${created.id}`)
      return created
    },
  )

  for (const method of ['PUT', 'DELETE'] as const) {
    app.route({
      method,
      url: '/api/v1/reviews/:id/helpful',
      config: open,
      schema: {
        tags,
        params: ReviewIdParams,
        response: { 200: HelpfulCount, ...reviewErrors(400, 401, 403, 404, 429) },
      },
      handler: async (request) => reviews.vote(request.ctx, request.params.id, method === 'PUT', clientAddress(request)),
    })
  }

  app.get(
    '/api/v1/admin/reviews',
    {
      config: admin,
      schema: {
        tags: modTags,
        querystring: AdminListQuery,
        response: { 200: Paged(AdminReview), ...reviewErrors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const q = request.query
      return reviews.adminList(request.ctx, { status: q.status, productId: q.product_id, page: q.page, perPage: q.per_page })
    },
  )

  const moderation = { tags: modTags, params: ReviewIdParams, response: { 200: AdminReview, ...reviewErrors(400, 401, 403, 404, 429) } }

  app.post('/api/v1/reviews/:id/approve', { config: admin, schema: moderation }, async (request) =>
    reviews.approve(request.ctx, request.params.id),
  )

  app.post('/api/v1/reviews/:id/reject', { config: admin, schema: moderation }, async (request) =>
    reviews.reject(request.ctx, request.params.id),
  )

  app.put('/api/v1/reviews/:id/reply', { config: admin, schema: { ...moderation, body: ReplyBody } }, async (request) =>
    reviews.reply(request.ctx, request.params.id, request.body.body),
  )

  app.delete('/api/v1/reviews/:id/reply', { config: admin, schema: moderation }, async (request) =>
    reviews.deleteReply(request.ctx, request.params.id),
  )

  app.delete(
    '/api/v1/reviews/:id',
    {
      config: admin,
      schema: { tags: modTags, params: ReviewIdParams, response: { 200: Deleted, ...reviewErrors(400, 401, 403, 404, 429) } },
    },
    async (request) => {
      await reviews.remove(request.ctx, request.params.id)
      return { deleted: true as const }
    },
  )
}
