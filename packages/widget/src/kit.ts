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
  /** Says `text` through the page's polite live region (role status, in the page from the script's start). */
  announce(text: string): void
  /** Says `text` at once through the page's assertive live region (role alert): a refusal, an error. */
  alert(text: string): void
  /** English texts a chunk carries for itself (the first script has only its own): used where the page's language has none. */
  english(texts: Record<string, string>): void
  /** Why a call failed, as a sentence in the page's language (too many requests, list full, no connection, …). */
  why(err: unknown, host?: Element | null): string
  /** Reloads the hearts and count badges (after the wishlist changed elsewhere). */
  refresh(): Promise<void>
  /** Reads the product's reviews again past the browser's cache and redraws its reviews blocks (after an approved submission). */
  reviews(productId: string): Promise<void>
  /** Star rating exposed as an image with a text label, filled and empty stars of different shapes. */
  stars(rating: number, label: string): HTMLElement
  /** The guest items this browser remembers (what a merge at login carries). */
  forget(productId: string): void
}

export type Mount = (kit: Kit, host: HTMLElement) => void

export const register = (name: string, value: unknown): void =>
  (window as unknown as { __wishlistChunk?: (name: string, value: unknown) => void }).__wishlistChunk?.(name, value)
