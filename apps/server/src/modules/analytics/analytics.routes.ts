import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import {
  Conversions,
  Daily,
  Overview,
  PeriodQuery,
  ProductParams,
  ProductStats,
  TopProducts,
  TopProductsQuery,
} from './analytics.schemas.js'
import type { AnalyticsService } from './analytics.service.js'

/** docs/api.md, "Analytics": admin analytics. Admin tokens only, every plan. */
export const analyticsRoutes: FastifyPluginAsyncTypebox<{ analytics: AnalyticsService }> = async (app, { analytics }) => {
  const config = { access: ['admin' as const] }
  const tags = ['analytics']

  app.get(
    '/v1/analytics/overview',
    { config, schema: { tags, querystring: PeriodQuery, response: { 200: Ok(Overview), ...errors(400, 401, 403, 429) } } },
    async (request) => ({ ok: true as const, data: await analytics.overview(request.ctx, request.query.period) }),
  )

  app.get(
    '/v1/analytics/top-products',
    { config, schema: { tags, querystring: TopProductsQuery, response: { 200: Ok(TopProducts), ...errors(400, 401, 403, 429) } } },
    async (request) => ({
      ok: true as const,
      data: { products: await analytics.topProducts(request.ctx, request.query.limit, request.query.sort) },
    }),
  )

  app.get(
    '/v1/analytics/product/:productId',
    { config, schema: { tags, params: ProductParams, response: { 200: Ok(ProductStats), ...errors(400, 401, 403, 429) } } },
    async (request) => ({ ok: true as const, data: await analytics.productStats(request.ctx, request.params.productId) }),
  )

  // The contract's path, and the same read beside the other analytics reads.
  for (const url of ['/v1/admin/analytics/conversions', '/v1/analytics/conversions']) {
    app.get(
      url,
      { config, schema: { tags, querystring: PeriodQuery, response: { 200: Ok(Conversions), ...errors(400, 401, 403, 429) } } },
      async (request) => ({ ok: true as const, data: await analytics.conversions(request.ctx, request.query.period) }),
    )
  }

  app.get(
    '/v1/analytics/daily',
    { config, schema: { tags, querystring: PeriodQuery, response: { 200: Ok(Daily), ...errors(400, 401, 403, 429) } } },
    async (request) => ({ ok: true as const, data: { days: await analytics.daily(request.ctx, request.query.period) } }),
  )
}
