/** TypeBox schemas of the token exchange, and its OpenAPI metadata (plugins/openapi.ts). */
import { Type } from 'typebox'
import type { OperationDocs } from '../../lib/http-schemas.js'
import { PLATFORM_ID_MAX_LENGTH, platformIdPattern } from '../../lib/platform-ids.js'

export const TokenRequest = Type.Object({
  api_key: Type.String({ minLength: 1, maxLength: 200 }),
  api_secret: Type.String({ minLength: 1, maxLength: 200 }),
  customer_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: PLATFORM_ID_MAX_LENGTH, description: 'Digits or a platform GID; asks for a customer token' }),
  ),
})

export const TokenResponse = Type.Object({
  token: Type.String({ description: 'The access token (a JWT): send it as `Authorization: Bearer <token>`' }),
  expires_in: Type.Integer({ description: 'Seconds until it expires (86,400)' }),
  token_type: Type.Literal('Bearer'),
  scope: Type.Union([Type.Literal('admin'), Type.Literal('customer')], {
    description: '`admin`, or `customer` when customer_id was given',
  }),
})

export const authOperations: OperationDocs = {
  'POST /v1/auth/token': {
    operationId: 'createToken',
    summary: 'Exchange an API key for an access token',
    description:
      'Without `customer_id`: an admin token (admin-scope keys only; a customer-scope key asking for one is 403 FORBIDDEN). With `customer_id` (digits or a GID): a customer token bound to that customer. Tokens are HS256 JWTs valid for `expires_in` seconds (86,400); rely on the returned value. An unknown key and a wrong secret give the same 401 INVALID_CREDENTIALS. Send the token as `Authorization: Bearer <token>`. Counted per client address.',
    responses: { 200: 'The access token' },
    requestExample: { api_key: 'ak_9f8e7d6c5b4a3210', api_secret: 'sk_…', customer_id: '1001' },
    examples: { 200: { ok: true, data: { token: 'eyJhbGciOiJIUzI1NiJ9.…', expires_in: 86400, token_type: 'Bearer', scope: 'customer' } } },
    document: {
      body: Type.Object({
        api_key: Type.String({ minLength: 1, maxLength: 200, description: 'The key id (`ak_…`)' }),
        api_secret: Type.String({ minLength: 1, maxLength: 200, description: "The key's secret (`sk_…`)" }),
        customer_id: Type.Optional(
          Type.String({
            pattern: platformIdPattern('Customer'),
            maxLength: PLATFORM_ID_MAX_LENGTH,
            description: 'Digits or a platform GID; asks for a customer token',
          }),
        ),
      }),
    },
  },
}
