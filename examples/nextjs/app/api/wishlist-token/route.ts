/**
 * POST /api/wishlist-token: a customer token for the logged-in customer, minted here with the
 * merchant's API key (POST /v1/auth/token with customer_id). The key and its secret stay on
 * this server; the browser only ever holds a token bound to its own customer.
 */
import { createWishlistClient, isWishlistApiError } from 'wishlist-service-sdk'
import { apiKey, wishlistUrl } from '@/lib/config'
import { currentCustomerId } from '@/lib/session'
import type { WishlistTokenResponse } from '@/lib/wishlist-token'

export async function POST(): Promise<Response> {
  const customerId = await currentCustomerId()
  const client = createWishlistClient({ baseUrl: wishlistUrl() })
  try {
    const minted = await client.auth.token({ ...apiKey(), customer_id: customerId })
    const body: WishlistTokenResponse = { customerId, token: minted.token, expiresIn: minted.expires_in }
    return Response.json(body, { headers: { 'Cache-Control': 'no-store' } })
  } catch (err) {
    // Never pass the service's answer on: it is about the API key, not the shopper.
    console.error('wishlist token:', isWishlistApiError(err) ? `${err.code} ${err.message}` : err)
    return Response.json({ error: 'The wishlist is unavailable right now.' }, { status: 502, headers: { 'Cache-Control': 'no-store' } })
  }
}
