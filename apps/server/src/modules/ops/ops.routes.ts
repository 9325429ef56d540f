import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Redis } from 'ioredis'
import { Type } from 'typebox'
import type { Storage } from '../../db/connect.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'

/** Liveness, readiness, Prometheus metrics and the OpenAPI document. Not rate limited. */
export const opsRoutes: FastifyPluginAsyncTypebox<{ storage: Storage; redis?: Redis | undefined }> = async (app, { storage, redis }) => {
  const config = { access: ['public' as const], rateLimit: false as const }
  const tags = ['operations']

  app.get('/healthz', { config, schema: { tags, response: { 200: Ok(Type.Object({ status: Type.Literal('ok') })) } } }, async () => ({
    ok: true as const,
    data: { status: 'ok' as const },
  }))

  app.get(
    '/readyz',
    {
      config,
      schema: {
        tags,
        response: { 200: Ok(Type.Object({ database: Type.String(), redis: Type.String() })), ...errors(503) },
      },
    },
    async () => {
      try {
        await storage.ping()
      } catch {
        throw new AppError('UNAVAILABLE', 'The database is unavailable')
      }
      if (redis) {
        try {
          await redis.ping()
        } catch {
          throw new AppError('UNAVAILABLE', 'Redis is unavailable')
        }
      }
      return { ok: true as const, data: { database: storage.backend, redis: redis ? 'ok' : 'not configured' } }
    },
  )

  app.get('/metrics', { config, schema: { tags, hide: true } }, async (_request, reply) => {
    reply.type(app.metrics.contentType)
    return app.metrics.metrics()
  })

  app.get('/v1/openapi.json', { config, schema: { tags, hide: true } }, async () => app.swagger())
}
