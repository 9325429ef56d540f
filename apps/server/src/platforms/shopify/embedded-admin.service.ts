/**
 * The embedded admin's sessions (docs/api.md, "Session tokens"): a Shopify session token
 * proves its shop; the shop is installed (created, or installed again when the token was
 * issued after the uninstall), and the token acts as the shop's session key: as a bearer
 * credential itself (session-bearer.ts), or exchanged for an admin token of that key. The
 * session key is made on the shop's first session and reused (its secret is never shown).
 * A session of a shop that holds no valid Admin API token exchanges the session token for one
 * (admin-api.ts), waiting at most SESSION_EXCHANGE_WAIT_MS: past it the exchange finishes
 * beside the answer, and a failed one is tried again at a later session.
 */
import type { Plan } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import type { AuthService, IssuedToken } from '../../modules/auth/auth.service.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import type { ShopifyAdmin } from './admin-api.js'
import { type SessionProof, verifySessionToken } from './session-token.js'

/** The admin key session tokens mint from, made on a shop's first session-token exchange. */
export const SESSION_KEY_NAME = 'Shopify embedded admin'

/** How long a session waits for its shop's Admin API token exchange (Shopify answers it in well under a second). */
export const SESSION_EXCHANGE_WAIT_MS = 2_000

export interface EmbeddedAdminDeps {
  secret: string
  apiKey: string | undefined
  defaultPlan: Plan
  shops: ShopsService
  auth: AuthService
  /** The shops' Admin API access: a session grants it when the shop holds no valid token. */
  adminApi: Pick<ShopifyAdmin, 'exchangeSessionToken'>
}

/** What a valid session token is worth: its shop, installed, the shop's session key, and the token's proof. */
export interface EmbeddedSession {
  shop: Shop
  keyId: string
  proof: SessionProof
}

export function createEmbeddedAdmin(deps: EmbeddedAdminDeps) {
  /** The session a valid session token opens; 401 INVALID_SIGNATURE, or 403 for a token issued before the uninstall. */
  async function session(sessionToken: string): Promise<EmbeddedSession> {
    const proof = await verifySessionToken(sessionToken, { secret: deps.secret, apiKey: deps.apiKey })
    const shop = await deps.shops.install(proof.shop, deps.defaultPlan, proof.issuedAt)
    if (shop.uninstalledAt !== null)
      throw new AppError('FORBIDDEN', 'The app was uninstalled from this shop after the session token was issued')
    const keys = await deps.shops.listApiKeys(shop.id)
    const keyId =
      keys.find((k) => k.name === SESSION_KEY_NAME && k.scope === 'admin')?.id ??
      (await deps.shops.createApiKey(shop.id, { name: SESSION_KEY_NAME, scope: 'admin' })).keyId
    await within(deps.adminApi.exchangeSessionToken(shop, sessionToken), SESSION_EXCHANGE_WAIT_MS)
    return { shop, keyId, proof }
  }

  return {
    session,
    /** The admin token a valid session token is worth (`session`'s refusals). */
    async exchange(sessionToken: string): Promise<IssuedToken> {
      const { shop, keyId } = await session(sessionToken)
      return deps.auth.issueAdminToken(shop.id, keyId)
    },
  }
}

export type EmbeddedAdmin = ReturnType<typeof createEmbeddedAdmin>

/** Waits for `work` at most `ms` (it never rejects); it goes on beside after that. */
async function within(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}
