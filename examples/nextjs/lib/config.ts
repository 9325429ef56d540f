/**
 * The example's settings, read from the environment on the server at request time (never
 * inlined into the browser bundle, so one build runs against any wishlist service).
 */

function required(name: string, hint: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set: ${hint} (see examples/nextjs/README.md)`)
  return value
}

/** Where this server reaches the wishlist service, e.g. `http://127.0.0.1:3000`. */
export const wishlistUrl = (): string => required('WISHLIST_URL', 'the address of the wishlist service')

/** Where browsers reach it (defaults to WISHLIST_URL). */
export const publicWishlistUrl = (): string => process.env.WISHLIST_PUBLIC_URL || wishlistUrl()

/** The shop's public storefront key (`sfk_…`): safe to hand to the browser. */
export const storefrontKey = (): string => required('WISHLIST_STOREFRONT_KEY', "the shop's storefront key (sfk_…)")

/** The merchant's API key: server only, it mints customer tokens. */
export const apiKey = (): { api_key: string; api_secret: string } => ({
  api_key: required('WISHLIST_API_KEY', 'an API key id (ak_…)'),
  api_secret: required('WISHLIST_API_SECRET', "that API key's secret"),
})
