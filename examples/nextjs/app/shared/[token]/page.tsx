/**
 * A shared wishlist, rendered on the server: a React Server Component reads the list with the
 * plain SDK client (the share token is the only credential) so the HTML already holds the list.
 */
import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { cache } from 'react'
import { createWishlistClient, isWishlistApiError, type SharedWishlist } from 'wishlist-service-sdk'
import { productTitle } from '@/lib/catalog'
import { wishlistUrl } from '@/lib/config'

interface Props {
  params: Promise<{ token: string }>
}

/** One read per request, shared by generateMetadata and the page; null for an unknown, revoked (404) or expired (410) link. */
const readShared = cache(async (token: string): Promise<SharedWishlist | null> => {
  const client = createWishlistClient({ baseUrl: wishlistUrl() })
  try {
    return await client.share.read(token)
  } catch (err) {
    if (isWishlistApiError(err) && (err.status === 404 || err.code === 'SHARE_EXPIRED')) return null
    throw err
  }
})

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const list = await readShared((await params).token)
  return { title: list?.name ?? 'Wishlist not available', robots: { index: false } }
}

const date = (iso: string) => new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })

export default async function SharedWishlistPage({ params }: Props) {
  const list = await readShared((await params).token)
  if (list === null) notFound()
  return (
    <>
      <h1>{list.name}</h1>
      <p className="muted">
        {list.count === 1 ? '1 item' : `${list.count} items`} · shared link valid until {date(list.expires_at)}
      </p>
      {list.items.length === 0 ? (
        <p>This wishlist is empty.</p>
      ) : (
        <ul className="items">
          {list.items.map((item) => (
            <li key={item.productId} data-product-id={item.productId}>
              <strong>{productTitle(item.productId)}</strong>
              <span className="muted">#{item.productId}</span>
              <span>Quantity: {item.quantity}</span>
              {item.note ? <span>Note: {item.note}</span> : null}
              <span>{item.purchasedAt ? `Purchased on ${date(item.purchasedAt)}` : 'Not purchased yet'}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
