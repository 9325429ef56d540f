import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, Ok } from '../../lib/http-schemas.js'
import { TokenRequest, TokenResponse } from './auth.schemas.js'
import type { AuthService } from './auth.service.js'

export const authRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  app.post(
    '/v1/auth/token',
    {
      // A bearer credential: no cache may keep it (RFC 6749 §5.1): `private, no-store` (plugins/caching.ts).
      config: { access: ['public'], cache: 'private' },
      schema: {
        tags: ['auth'],
        body: TokenRequest,
        response: { 200: Ok(TokenResponse), ...errors(400, 401, 403, 429) },
      },
    },
    async (request) => ({ ok: true as const, data: await auth.exchange(request.body) }),
  )
}
