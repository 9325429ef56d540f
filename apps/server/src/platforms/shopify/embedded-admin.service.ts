/**
 * The embedded admin's sign-in (docs/api.md, "Session tokens"): a Shopify session token
 * proves its shop; the shop is installed (created, or installed again when the token was
 * issued after the uninstall), and an admin token of the shop's session key is issued. The
 * session key is made on the shop's first exchange and reused (its secret is never shown).
 */
import type { Plan } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import type { AuthService, IssuedToken } from '../../modules/auth/auth.service.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import { verifySessionToken } from './session-token.js'

/** The admin key session tokens mint from, made on a shop's first session-token exchange. */
export const SESSION_KEY_NAME = 'Shopify embedded admin'

export interface EmbeddedAdminDeps {
  secret: string
  apiKey: string | undefined
  defaultPlan: Plan
  shops: ShopsService
  auth: AuthService
}

export function createEmbeddedAdmin(deps: EmbeddedAdminDeps) {
  return {
    /** The admin token a valid session token is worth; 401 INVALID_SIGNATURE, or 403 for a token issued before the uninstall. */
    async exchange(sessionToken: string): Promise<IssuedToken> {
      const proof = await verifySessionToken(sessionToken, { secret: deps.secret, apiKey: deps.apiKey })
      const shop = await deps.shops.install(proof.shop, deps.defaultPlan, proof.issuedAt)
      if (shop.uninstalledAt !== null)
        throw new AppError('FORBIDDEN', 'The app was uninstalled from this shop after the session token was issued')
      const keys = await deps.shops.listApiKeys(shop.id)
      const keyId =
        keys.find((k) => k.name === SESSION_KEY_NAME && k.scope === 'admin')?.id ??
        (await deps.shops.createApiKey(shop.id, { name: SESSION_KEY_NAME, scope: 'admin' })).keyId
      return deps.auth.issueAdminToken(shop.id, keyId)
    },
  }
}

export type EmbeddedAdmin = ReturnType<typeof createEmbeddedAdmin>
