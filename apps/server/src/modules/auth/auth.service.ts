import { randomUUID } from 'node:crypto'
import { decodeJwt, errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import { LRUCache } from 'lru-cache'
import type { Db } from '../../db/types.js'
import type { KeyScope } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import { platformIdOf } from '../../lib/platform-ids.js'
import { hashSecret, secretMatches } from '../../lib/secrets.js'
import { now } from '../../lib/time.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { Shop } from '../shops/shops.types.js'
import { apiKeysRepo } from './api-keys.repo.js'
import type { AccessClaims, Actor, RequestContext } from './auth.types.js'

export const TOKEN_TTL_SECONDS = 86_400
export const JWT_ISSUER = 'wishlist-service'
export const JWT_AUDIENCE = 'wishlist-api'
const ALGORITHM = 'HS256'
const TOKEN_TYPE = 'at+jwt'
// Spent on an unknown key id so that the two 401 paths cost the same.
const DUMMY_HASH = hashSecret('sk_unknown-key-placeholder')
// last_used_at is advisory; write it at most once a minute per key.
const TOUCH_INTERVAL_MS = 60_000

export interface IssuedToken {
  token: string
  expires_in: number
  token_type: 'Bearer'
  scope: KeyScope
}

interface KeyStatus {
  shopId: string
  revoked: boolean
}

const invalidToken = (message = 'The access token is invalid') => new AppError('INVALID_TOKEN', message)

export type BearerContext = RequestContext & { keyId: string }

function checkKey(claims: AccessClaims, status: KeyStatus | undefined): void {
  if (!status || status.revoked || status.shopId !== claims.shop)
    throw invalidToken('The API key behind this token is unknown or was revoked')
}

function bearerContext(claims: AccessClaims, shop: Shop | undefined, requestId: string): BearerContext {
  if (!shop) throw invalidToken()
  const actor: Actor =
    claims.customerId === null
      ? { kind: 'admin', keyId: claims.kid }
      : { kind: 'customer', keyId: claims.kid, customerId: claims.customerId }
  return { shop, actor, requestId, keyId: claims.kid }
}

export function createAuthService(deps: { db: Db; jwtSecret: string; shops: ShopsService; cacheTtlMs: number }) {
  const secret = new TextEncoder().encode(deps.jwtSecret)
  // Concurrent loads of one key share one query (`fetch`); a cache TTL of 0 keeps nothing past a millisecond.
  const keyStatus = new LRUCache<string, KeyStatus>({
    max: 10_000,
    ttl: Math.max(1, deps.cacheTtlMs),
    ignoreFetchAbort: true,
    fetchMethod: async (keyId) => {
      const row = await apiKeysRepo.byId(deps.db, keyId)
      return row && { shopId: row.shop_id, revoked: row.revoked_at !== null }
    },
  })
  // Verifying an HMAC and parsing claims on every request is measurable; a token is
  // immutable, so its verified claims are cached (until it expires: checked on every hit).
  const verified = new LRUCache<string, AccessClaims>({ max: 50_000, ttl: TOKEN_TTL_SECONDS * 1000 })

  /** The claims of a token verified before, if it was; throws once it has expired. */
  function cachedClaims(token: string, at: number): AccessClaims | undefined {
    const claims = verified.get(token)
    if (claims !== undefined && claims.exp * 1000 <= at) throw new AppError('TOKEN_EXPIRED', 'The access token has expired')
    return claims
  }

  async function verifyJwt(token: string): Promise<AccessClaims> {
    const cached = cachedClaims(token, now())
    if (cached) return cached
    let payload
    try {
      ;({ payload } = await jwtVerify(token, secret, {
        algorithms: [ALGORITHM],
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        typ: TOKEN_TYPE,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      }))
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AppError('TOKEN_EXPIRED', 'The access token has expired')
      throw invalidToken()
    }
    const { sub, shop, kid, scope, exp } = payload as Record<string, unknown>
    if (typeof sub !== 'string' || typeof shop !== 'string' || typeof kid !== 'string' || typeof exp !== 'number') throw invalidToken()
    let customerId: string | null = null
    if (scope === 'customer') {
      if (!sub.startsWith('customer:')) throw invalidToken()
      customerId = sub.slice('customer:'.length)
    } else if (scope !== 'admin' || sub !== `key:${kid}`) {
      throw invalidToken()
    }
    const claims: AccessClaims = { sub, shop, kid, scope, customerId, exp }
    verified.set(token, claims)
    return claims
  }

  async function issue(shopId: string, keyId: string, customerId: string | null): Promise<IssuedToken> {
    const scope: KeyScope = customerId === null ? 'admin' : 'customer'
    const iat = Math.floor(now() / 1000)
    const token = await new SignJWT({ shop: shopId, kid: keyId, scope })
      .setProtectedHeader({ alg: ALGORITHM, typ: TOKEN_TYPE })
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setSubject(customerId === null ? `key:${keyId}` : `customer:${customerId}`)
      .setIssuedAt(iat)
      .setExpirationTime(iat + TOKEN_TTL_SECONDS)
      .setJti(randomUUID())
      .sign(secret)
    return { token, expires_in: TOKEN_TTL_SECONDS, token_type: 'Bearer', scope }
  }

  return {
    /** POST /v1/auth/token. Unknown key and wrong secret are indistinguishable. */
    async exchange(input: { api_key: string; api_secret: string; customer_id?: string | undefined }): Promise<IssuedToken> {
      const row = await apiKeysRepo.byId(deps.db, input.api_key)
      const ok = secretMatches(input.api_secret, row?.secret_hash ?? DUMMY_HASH)
      if (!row || !ok || row.revoked_at !== null) {
        throw new AppError('INVALID_CREDENTIALS', 'The API key or secret is wrong')
      }
      let customerId: string | null = null
      if (input.customer_id !== undefined) {
        customerId = platformIdOf(input.customer_id, 'Customer', 'body.customer_id')
        // Shoppers of a shop the app is uninstalled from are refused (their tokens too); the merchant's admin tokens are not.
        const shop = await deps.shops.get(row.shop_id)
        if (shop !== undefined && shop.uninstalledAt !== null) throw new AppError('FORBIDDEN', 'The app is uninstalled from this shop')
      } else if (row.scope !== 'admin') {
        throw new AppError('FORBIDDEN', 'A customer-scope key can only mint customer tokens (send customer_id)')
      }
      const issued = await issue(row.shop_id, row.id, customerId)
      const at = now()
      if (at - (row.last_used_at ?? 0) > TOUCH_INTERVAL_MS) await apiKeysRepo.touch(deps.db, row.shop_id, row.id, at)
      return issued
    },

    /**
     * An admin token of the shop minted from one of its active admin keys without its secret:
     * the Shopify session token exchange, whose proof is Shopify's signature instead.
     */
    async issueAdminToken(shopId: string, keyId: string): Promise<IssuedToken> {
      const row = await apiKeysRepo.byId(deps.db, keyId)
      if (!row || row.shop_id !== shopId || row.revoked_at !== null || row.scope !== 'admin')
        throw invalidToken('The API key is unknown or was revoked')
      return issue(shopId, keyId, null)
    },

    /** Verifies a bearer token and loads its shop; throws the documented 401s. */
    async authenticateBearer(token: string, requestId: string): Promise<BearerContext> {
      const claims = await verifyJwt(token)
      const status = await keyStatus.fetch(claims.kid)
      checkKey(claims, status)
      return bearerContext(claims, await deps.shops.get(claims.shop), requestId)
    },

    /**
     * `authenticateBearer` answered from the caches alone (a token verified before, its key's
     * status, its shop), with the same 401s; undefined when one of them has to be read.
     * Lets the request hook stay synchronous on almost every request.
     */
    authenticateCached(token: string, requestId: string): BearerContext | undefined {
      const claims = cachedClaims(token, now())
      if (claims === undefined) return undefined
      const status = keyStatus.get(claims.kid)
      if (status === undefined) return undefined
      checkKey(claims, status)
      const shop = deps.shops.cached(claims.shop)
      return shop && bearerContext(claims, shop, requestId)
    },

    /**
     * Whether a bearer token is one of the service's own (its issuer, read without verifying);
     * anything that is not a JWT counts as one, to be refused as such.
     */
    isOwnToken(token: string): boolean {
      try {
        return decodeJwt(token).iss === JWT_ISSUER
      } catch {
        return true
      }
    },

    /** Revokes a key: its tokens stop working at once here, within the cache TTL elsewhere. */
    async revokeKey(shopId: string, keyId: string): Promise<boolean> {
      const revoked = await apiKeysRepo.revoke(deps.db, shopId, keyId, now())
      if (revoked) keyStatus.delete(keyId)
      return revoked
    },
  }
}

export type AuthService = ReturnType<typeof createAuthService>
