import type { KeyScope } from '../../db/schema.js'
import type { Shop } from '../shops/shops.types.js'

/** Who is calling. Bearer tokens give `admin` or `customer`; the storefront key gives the rest. */
export type Actor =
  | { kind: 'admin'; keyId: string }
  | { kind: 'customer'; keyId: string; customerId: string }
  | { kind: 'guest'; guestId: string }
  | { kind: 'storefront' }

export type ActorKind = Actor['kind']

/** Built once per request by the auth plugin and passed first to every service call. */
export interface RequestContext {
  shop: Shop
  actor: Actor
  requestId: string
  /**
   * Where share links made in this request point (token appended); unset: the service's own
   * `PUBLIC_BASE_URL/v1/wishlists/shared/`. The Shopify app proxy points them at the shop's domain.
   */
  shareBaseUrl?: string
}

export interface AccessClaims {
  sub: string
  shop: string
  kid: string
  scope: KeyScope
  customerId: string | null
  exp: number
}
