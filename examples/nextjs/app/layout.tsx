import type { Metadata } from 'next'
import Link from 'next/link'
import type { ReactNode } from 'react'
import './globals.css'

export const metadata: Metadata = {
  title: { default: 'Wishlist example', template: '%s · Wishlist example' },
  description: 'A Next.js storefront using wishlist-service-sdk.',
}

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header>
          <nav aria-label="Main">
            <Link href="/">Shop</Link>
            <Link href="/wishlist">My wishlist</Link>
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  )
}
