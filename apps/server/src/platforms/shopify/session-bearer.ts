/**
 * Session tokens as bearer credentials (docs/api.md, "Session tokens"): the embedded dashboard
 * sends a fresh one from App Bridge with every call, and it acts as an admin token of its
 * shop's session key (the same key, and so the same rate-limit bucket, as the admin token the
 * exchange mints). A token is verified once (embedded-admin.service.ts: signature, claims, the
 * shop installed and not uninstalled after the token was issued) and its verdict cached until
 * it expires, as the service's own tokens are: a repeated token is answered from memory.
 */
import { LRUCache } from 'lru-cache'
import { AppError } from '../../lib/errors.js'
import { now } from '../../lib/time.js'
import type { BearerContext } from '../../modules/auth/auth.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import type { PlatformBearerAuthenticator } from '../platform.js'
import { createEmbeddedAdmin, type EmbeddedAdminDeps } from './embedded-admin.service.js'
import { isSessionTokenShaped, SESSION_TOKEN_LEEWAY_SECONDS } from './session-token.js'

interface Verified {
  shopId: string
  keyId: string
  /** When the token stops being accepted, in ms (its `exp` and the leeway). */
  until: number
}

const contextOf = (shop: Shop, keyId: string, requestId: string): BearerContext => ({
  shop,
  actor: { kind: 'admin', keyId },
  requestId,
  keyId,
})

export function createSessionBearer(deps: EmbeddedAdminDeps): PlatformBearerAuthenticator {
  const admin = createEmbeddedAdmin(deps)
  // Session tokens live a minute; the entries go once they have expired (checked on every hit too).
  const verified = new LRUCache<string, Verified>({ max: 20_000 })

  /** The cached verdict of a token that has not expired yet. */
  function unexpired(token: string): Verified | undefined {
    const entry = verified.get(token)
    if (entry === undefined || entry.until > now()) return entry
    verified.delete(token)
    return undefined
  }

  return {
    // A shop uninstalled since (or not cached) goes to `authenticate`, where installing it decides.
    cached(token, requestId) {
      const entry = unexpired(token)
      const shop = entry && deps.shops.cached(entry.shopId)
      return shop?.uninstalledAt === null ? contextOf(shop, entry!.keyId, requestId) : undefined
    },

    async authenticate(token, requestId) {
      if (!isSessionTokenShaped(token)) return undefined
      const entry = unexpired(token)
      const shop = entry && (await deps.shops.get(entry.shopId))
      if (shop?.uninstalledAt === null) return contextOf(shop, entry!.keyId, requestId)
      // A bearer credential that does not hold is the API's 401 INVALID_TOKEN, whoever issued it.
      const session = await admin.session(token).catch((err: unknown) => {
        throw err instanceof AppError && err.code === 'INVALID_SIGNATURE' ? new AppError('INVALID_TOKEN', err.message) : err
      })
      const until = (session.proof.expiresAt + SESSION_TOKEN_LEEWAY_SECONDS) * 1000
      verified.set(token, { shopId: session.shop.id, keyId: session.keyId, until }, { ttl: Math.max(1, until - now()) })
      return contextOf(session.shop, session.keyId, requestId)
    },
  }
}
