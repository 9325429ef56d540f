/**
 * What the first script hands to its lazy chunks (the review form, the wishlist page), so
 * they share its API client, identity, strings and formatting instead of carrying copies.
 * A chunk is an IIFE that calls `register(name, value)`; the first script loaded it with a
 * `<script>` next to its own (`widget-<name>.js`) and waits for that call.
 */
export type Vars = Record<string, string | number>

export interface ApiError extends Error {
  code: string
  status: number
  details?: Array<{ path?: string; message?: string }>
}

export interface Kit {
  /** A call to the wishlist or reviews API with the page's credentials (proxy, key, guest, customer). */
  api<T>(method: string, path: string, body?: unknown): Promise<T>
  /** Settles once the shopper's identity is known (proxy mode: logged in or guest). */
  ready(): Promise<unknown>
  /** True for a logged-in shopper (a customer token, or the proxy said so). */
  customer(): boolean
  /** The string `key` for `host` (its `data-strings`, the script's, the locale's, English). */
  t(key: string, vars?: Vars, host?: Element | null): string
  /** A number in the page's locale. */
  num(value: number, options?: Intl.NumberFormatOptions): string
  locale: string
  /** Says `text` through the page's polite live region. */
  announce(text: string): void
  /** Reloads the hearts and count badges (after the wishlist changed elsewhere). */
  refresh(): Promise<void>
  /** Star rating exposed as an image with a text label, filled and empty stars of different shapes. */
  stars(rating: number, label: string): HTMLElement
  /** The guest items this browser remembers (what a merge at login carries). */
  forget(productId: string): void
}

export type Mount = (kit: Kit, host: HTMLElement) => void

export const register = (name: string, value: unknown): void =>
  (window as unknown as { __wishlistChunk?: (name: string, value: unknown) => void }).__wishlistChunk?.(name, value)
