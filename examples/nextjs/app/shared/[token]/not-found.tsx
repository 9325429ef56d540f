import Link from 'next/link'

export default function SharedWishlistNotFound() {
  return (
    <>
      <h1>This wishlist is not available</h1>
      <p>The link is unknown, was revoked by its owner, or has expired. Ask for a new link.</p>
      <p>
        <Link href="/">Back to the shop</Link>
      </p>
    </>
  )
}
