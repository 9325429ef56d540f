import Link from 'next/link'

export default function Home() {
  return (
    <>
      <h1>Wishlist example</h1>
      <p>Two pages built with wishlist-service-sdk:</p>
      <ul>
        <li>
          <Link href="/wishlist">My wishlist</Link>: the React provider and hooks in a client component, with a customer token minted by
          this server.
        </li>
        <li>
          A shared wishlist, <code>/shared/&lt;token&gt;</code>: rendered on the server from the public share link (use “Share my wishlist”
          on the wishlist page to make one).
        </li>
      </ul>
    </>
  )
}
