/**
 * The customer's wishlist. This server component reads the settings and the logged-in customer
 * at request time and hands them to the client component, which talks to the wishlist service
 * from the browser with the SDK's React provider and hooks.
 */
import type { Metadata } from 'next'
import { connection } from 'next/server'
import { publicWishlistUrl, storefrontKey } from '@/lib/config'
import { currentCustomerId } from '@/lib/session'
import { WishlistApp } from './wishlist-app'

export const metadata: Metadata = { title: 'My wishlist' }

export default async function WishlistPage() {
  // Rendered per request: the settings come from this server's environment, not from the build.
  await connection()
  return <WishlistApp baseUrl={publicWishlistUrl()} storefrontKey={storefrontKey()} customerId={await currentCustomerId()} />
}
