/** docs/api.md, "Privacy and export": privacy requests and the shop's CSV export. Admin tokens only. */
import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import { platformIdOf } from '../../lib/platform-ids.js'
import { CustomerExport, CustomerParams, EmailQuery, ErasedCounts } from './privacy.schemas.js'
import type { PrivacyService } from './privacy.service.js'

/** The body is a stream of CSV text; typed as what the handler sends. */
const CsvBody = Type.Unsafe<Readable>({ type: 'string', description: 'CSV text' })

const customerIdOf = (raw: string): string => platformIdOf(raw, 'Customer', 'params.customerId')

export const privacyRoutes: FastifyPluginAsyncTypebox<{ privacy: PrivacyService }> = async (app, { privacy }) => {
  const config = { access: ['admin' as const] }
  const tags = ['privacy']

  app.get(
    '/v1/admin/customers/:customerId/export',
    {
      config,
      schema: {
        tags,
        params: CustomerParams,
        querystring: EmailQuery,
        response: { 200: Ok(CustomerExport), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => {
      const customerId = customerIdOf(request.params.customerId)
      const leave = await privacy.enterExport(request.ctx.shop.id)
      try {
        return { ok: true as const, data: await privacy.exportCustomer(request.ctx, { customerId, email: request.query.email }) }
      } finally {
        leave()
      }
    },
  )

  app.delete(
    '/v1/admin/customers/:customerId',
    {
      config,
      schema: {
        tags,
        params: CustomerParams,
        querystring: EmailQuery,
        response: { 200: Ok(ErasedCounts), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => ({
      ok: true as const,
      data: await privacy.eraseCustomer(request.ctx, { customerId: customerIdOf(request.params.customerId), email: request.query.email }),
    }),
  )

  app.get(
    '/v1/admin/export/wishlists.csv',
    {
      config,
      schema: {
        tags,
        response: {
          200: {
            description: 'customer_id,wishlist_id,list_name,product_id,variant_id,handle,added_at',
            content: { 'text/csv': { schema: CsvBody } },
          },
          ...errors(401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      // One of the shop's two export places, held until the response has ended or its connection closed.
      const leave = await privacy.enterExport(request.ctx.shop.id)
      reply.raw.once('close', leave)
      const date = new Date().toISOString().slice(0, 10)
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="wishlists-${date}.csv"`)
      // Readable.from pulls the next chunk only when the socket has drained (backpressure).
      return reply.send(Readable.from(privacy.csv(request.ctx), { objectMode: false }))
    },
  )
}
