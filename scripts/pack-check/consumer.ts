// A consumer of the published SDK, type-checked strictly under node16 and bundler
// resolution by scripts/pack-check.sh in a folder with no workspace around.
import {
  createWishlistClient,
  isWishlistApiError,
  type KnownErrorCode,
  SERVER_ERROR_CODES,
  type WishlistClient,
  WishlistApiError,
} from 'wishlist-service-sdk'
import { useWishlist, WishlistProvider } from 'wishlist-service-sdk/react'

const client: WishlistClient = createWishlistClient({
  baseUrl: 'https://wishlist.example.com',
  credentials: { storefrontKey: 'sfk_x', guestId: 'guest-12345678' },
})

export async function firstItem(): Promise<string | undefined> {
  try {
    const page = await client.wishlist.get('me')
    return page.items[0]?.productId
  } catch (err) {
    if (isWishlistApiError(err) && err instanceof WishlistApiError) {
      const code: KnownErrorCode | string = err.code
      return SERVER_ERROR_CODES.includes(code as (typeof SERVER_ERROR_CODES)[number]) ? undefined : code
    }
    throw err
  }
}

export async function moderation(id: number): Promise<string> {
  const review = await client.reviews.admin.get(id)
  return review.status
}

export const provider: typeof WishlistProvider = WishlistProvider
export const hook: typeof useWishlist = useWishlist
