/**
 * What the floors (floor-server.ts on SQLite, pg-floor-server.ts on PostgreSQL) share: the
 * cached check of a customer's token and the token route that mints one for a key's shop
 * (no secret check), so the service's scenarios run against a floor unchanged.
 */
import type { FastifyInstance } from 'fastify'
import { jwtVerify, SignJWT } from 'jose'
import { JWT_AUDIENCE, JWT_ISSUER, TOKEN_TTL_SECONDS } from '../../src/modules/auth/auth.service.js'

const secret = new TextEncoder().encode(process.env.JWT_SECRET ?? '')

/** Verified once per token, then a map lookup (the service caches verified claims too). */
const verified = new Map<string, { shopId: string; customerId: string }>()
export async function customerOf(authorization: string | undefined): Promise<{ shopId: string; customerId: string }> {
  const token = authorization?.slice('Bearer '.length) ?? ''
  let claims = verified.get(token)
  if (claims === undefined) {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE })
    claims = { shopId: String(payload.shop), customerId: String(payload.sub).slice('customer:'.length) }
    verified.set(token, claims)
  }
  return claims
}

/** `POST /v1/auth/token` `{api_key, customer_id}`: a customer token of the key's shop (`shopOfKey`). */
export function tokenRoute(app: FastifyInstance, shopOfKey: (keyId: string) => Promise<string> | string): void {
  app.post<{ Body: { api_key: string; customer_id: string } }>('/v1/auth/token', async (request) => {
    const token = await new SignJWT({ shop: await shopOfKey(request.body.api_key), kid: request.body.api_key, scope: 'customer' })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setSubject(`customer:${request.body.customer_id}`)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
      .sign(secret)
    return { ok: true, data: { token, expires_in: TOKEN_TTL_SECONDS, token_type: 'Bearer', scope: 'customer' } }
  })
}
