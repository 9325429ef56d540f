/**
 * Signing in: an admin API key and secret. The secret stays in this page's memory only
 * (the SDK mints an admin token from it and re-mints before the token expires); the
 * current token is mirrored in sessionStorage so a reload of the tab stays signed in
 * until that token expires. Sign out forgets both.
 *
 * Inside Shopify admin (an embedded app), the page comes with App Bridge: every call carries a
 * fresh session token from it as its bearer credential, and nothing is kept in storage.
 */
import { createWishlistClient, isWishlistApiError, type Shop, type WishlistClient } from 'wishlist-service-sdk'
import type { AppBridge } from './app-bridge.js'

const STORAGE_KEY = 'wishlist-dashboard:session'

export interface Session {
  client: WishlistClient
  /** The API key the dashboard signed in with (revoking it signs the dashboard out); none inside Shopify admin. */
  keyId: string | undefined
  shop: Shop
  /** Embedded in Shopify admin: App Bridge's session tokens, its navigation and save bar. */
  embedded: boolean
}

interface Stored {
  keyId?: string | undefined
  token: string
}

const baseUrl = () => window.location.origin

function save(stored: Stored): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(stored))
  } catch {
    // Storage may be disabled; the session then lives in memory only.
  }
}

function load(): Stored | undefined {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY)
    if (!raw) return undefined
    const parsed: unknown = JSON.parse(raw)
    if (typeof parsed === 'object' && parsed !== null && 'token' in parsed) {
      const { token } = parsed
      const keyId = 'keyId' in parsed ? parsed.keyId : undefined
      if (typeof token === 'string' && (keyId === undefined || typeof keyId === 'string')) return { keyId, token }
    }
  } catch {
    // Corrupt entry: treat as signed out.
  }
  return undefined
}

export function forgetSession(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY)
  } catch {
    // Nothing stored.
  }
}

/** Exchanges the key for an admin token (via the SDK) and reads the shop. */
export async function signIn(apiKey: string, apiSecret: string): Promise<Session> {
  const keyId = apiKey.trim()
  // The minter holds the key and secret; the SDK caches its token and refreshes it before
  // `expires_in` runs out. The dashboard's client asks it for the current token per call.
  const minter = createWishlistClient({ baseUrl: baseUrl(), credentials: { apiKey: keyId, apiSecret: apiSecret.trim() } })
  const client = createWishlistClient({
    baseUrl: baseUrl(),
    credentials: {
      token: async () => {
        const token = await minter.auth.currentToken()
        if (!token) throw new Error('no token')
        save({ keyId, token })
        return token
      },
    },
  })
  try {
    const shop = await client.admin.shop()
    return { client, keyId, shop, embedded: false }
  } catch (err) {
    // The only refusal of a valid key here: a customer-scope key cannot mint admin tokens.
    if (isWishlistApiError(err, 'FORBIDDEN')) throw new Error('This key has customer scope; sign in with an admin API key.', { cause: err })
    throw err
  }
}

/**
 * Inside Shopify admin: every call asks App Bridge for a session token (App Bridge hands out a
 * fresh one before the last expires), so no token is kept, and there is nothing to sign out of.
 */
export async function signInWithAppBridge(bridge: AppBridge): Promise<Session> {
  forgetSession()
  const client = createWishlistClient({ baseUrl: baseUrl(), credentials: { token: () => bridge.idToken() } })
  return { client, keyId: undefined, shop: await client.admin.shop(), embedded: true }
}

/** The session of this tab after a reload, while its token is still accepted. */
export async function restoreSession(): Promise<Session | undefined> {
  const stored = load()
  if (!stored) return undefined
  const client = createWishlistClient({ baseUrl: baseUrl(), credentials: { token: stored.token } })
  try {
    const shop = await client.admin.shop()
    return { client, keyId: stored.keyId, shop, embedded: false }
  } catch (err) {
    if (isWishlistApiError(err) && err.status === 401) forgetSession()
    return undefined
  }
}

/** A 401 means the token expired or its key was revoked: the user must sign in again. */
export const isSignedOutError = (err: unknown): boolean => isWishlistApiError(err) && err.status === 401

/** A message for people: the server's message and code (and the request id when there is one). */
export function describeError(err: unknown): string {
  if (isWishlistApiError(err)) {
    if (err.code === 'NETWORK_ERROR') return 'The service could not be reached. Check your connection and try again.'
    // An error page that is not the API's JSON (a proxy's 502, a gateway timeout …).
    if (err.code === 'HTTP_ERROR')
      return err.status >= 500 ? `The server answered ${err.status}; try again shortly.` : `The server answered ${err.status}.`
    const id = err.requestId ? ` Request id ${err.requestId}.` : ''
    return `${err.message} (${err.code}).${id}`
  }
  return err instanceof Error ? err.message : String(err)
}
