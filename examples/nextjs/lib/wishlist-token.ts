/** What POST /api/wishlist-token answers (app/api/wishlist-token/route.ts). */
export interface WishlistTokenResponse {
  customerId: string
  token: string
  /** Seconds until the token expires. */
  expiresIn: number
}

/**
 * Asks this app's server for a customer token. The provider calls it for its first token and
 * again when the service answers that the token expired.
 */
export async function fetchCustomerToken(): Promise<string> {
  const res = await fetch('/api/wishlist-token', { method: 'POST', cache: 'no-store' })
  if (!res.ok) throw new Error(`The wishlist sign-in failed (HTTP ${res.status})`)
  return ((await res.json()) as WishlistTokenResponse).token
}
