'use client'

/**
 * The wishlist in the browser: `WishlistProvider` in customer mode, its token from this app's
 * server (`getToken`), and `useWishlist()` with optimistic add and remove. A change shows at
 * once; when the service refuses it, the hook rolls it back and the reason is announced.
 */
import Link from 'next/link'
import { useState } from 'react'
import type { WishlistApiError } from 'wishlist-service-sdk'
import { useWishlist, useWishlistClient, WishlistProvider } from 'wishlist-service-sdk/react'
import { PRODUCTS, type Product, productTitle } from '@/lib/catalog'
import { fetchCustomerToken } from '@/lib/wishlist-token'

interface Props {
  baseUrl: string
  storefrontKey: string
  customerId: string
}

export function WishlistApp({ baseUrl, storefrontKey, customerId }: Props) {
  return (
    <WishlistProvider baseUrl={baseUrl} storefrontKey={storefrontKey} customerId={customerId} getToken={fetchCustomerToken}>
      <Wishlist />
    </WishlistProvider>
  )
}

/** Why the service refused a change, in the shopper's words. */
function reason(error: WishlistApiError): string {
  switch (error.code) {
    case 'ITEM_LIMIT': {
      const limit = (error.details as { limit?: number } | undefined)?.limit
      return `your wishlist is full${limit ? ` (${limit.toLocaleString('en-US')} items)` : ''}. Remove something first.`
    }
    case 'RATE_LIMITED':
      return 'too many changes at once. Try again in a moment.'
    case 'NETWORK_ERROR':
      return 'the wishlist service cannot be reached. Check your connection and try again.'
    default:
      return error.message
  }
}

function Wishlist() {
  const { items, total, status, error, has, add, remove } = useWishlist()
  // Confirmations go to a polite status region, refusals to an alert.
  const [confirmed, setConfirmed] = useState('')
  const [refused, setRefused] = useState('')

  async function toggle(product: Product) {
    setConfirmed('')
    setRefused('')
    if (has(product.id)) {
      const result = await remove(product.id)
      if (result.ok) setConfirmed(`${product.title} was removed from your wishlist.`)
      else setRefused(`${product.title} was not removed: ${reason(result.error)}`)
    } else {
      const result = await add(product.id, { handle: product.handle })
      if (result.ok) setConfirmed(`${product.title} was added to your wishlist.`)
      else setRefused(`${product.title} was not added: ${reason(result.error)}`)
    }
  }

  return (
    <>
      <h1>My wishlist</h1>
      <section aria-labelledby="products-heading">
        <h2 id="products-heading">Products</h2>
        <ul className="products">
          {PRODUCTS.map((product) => (
            <li key={product.id} data-product-id={product.id}>
              <strong>{product.title}</strong>
              <span>{product.price}</span>
              <button type="button" onClick={() => void toggle(product)}>
                {has(product.id) ? 'Remove from wishlist' : 'Add to wishlist'}
              </button>
            </li>
          ))}
        </ul>
      </section>
      <p role="status">{confirmed}</p>
      <p role="alert">{refused}</p>
      <section aria-labelledby="saved-heading">
        <h2 id="saved-heading">Saved items ({total})</h2>
        {status === 'error' && items.length === 0 ? (
          <p>Your wishlist could not be loaded: {error ? reason(error) : 'unknown error'}</p>
        ) : status !== 'ready' && items.length === 0 ? (
          <p>Loading your wishlist…</p>
        ) : items.length === 0 ? (
          <p>Nothing saved yet.</p>
        ) : (
          <ul className="items" data-testid="saved-items">
            {items.map((item) => (
              <li key={item.productId} data-product-id={item.productId}>
                <strong>{productTitle(item.productId)}</strong>
                <span>Quantity: {item.quantity}</span>
                {item.note ? <span>Note: {item.note}</span> : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <Share />
    </>
  )
}

/** A share link (GET …/share makes one when none is active), opened on this app's shared page. */
function Share() {
  const client = useWishlistClient()
  const { owner } = useWishlist()
  const [link, setLink] = useState<string>()
  const [failed, setFailed] = useState('')

  async function share() {
    setFailed('')
    try {
      const { token } = await client.share.get(owner)
      setLink(`/shared/${encodeURIComponent(token)}`)
    } catch (err) {
      setFailed(`No share link: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  return (
    <section aria-labelledby="share-heading">
      <h2 id="share-heading">Share</h2>
      <button type="button" onClick={() => void share()}>
        Share my wishlist
      </button>
      {link ? (
        <p>
          Anyone with this link sees your wishlist: <Link href={link}>open the shared wishlist</Link>
        </p>
      ) : null}
      <p role="alert">{failed}</p>
    </section>
  )
}
