import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import type { AuthService } from './auth.service.js'

const TokenRequest = Type.Object({
  api_key: Type.String({ minLength: 1, maxLength: 200 }),
  api_secret: Type.String({ minLength: 1, maxLength: 200 }),
  customer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Digits or a platform GID; asks for a customer token' })),
})

const TokenResponse = Type.Object({
  token: Type.String(),
  expires_in: Type.Integer(),
  token_type: Type.Literal('Bearer'),
  scope: Type.Union([Type.Literal('admin'), Type.Literal('customer')]),
})

export const authRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  app.post(
    '/v1/auth/token',
    {
      config: { access: ['public'] },
      schema: {
        tags: ['auth'],
        summary: 'Exchange an API key and secret for an access token (admin, or customer with customer_id)',
        body: TokenRequest,
        response: { 200: Ok(TokenResponse), ...errors(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      // A bearer credential: no cache may keep it (RFC 6749 §5.1).
      reply.header('cache-control', 'no-store')
      return { ok: true as const, data: await auth.exchange(request.body) }
    },
  )
}
