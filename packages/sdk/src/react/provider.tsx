import { createContext, type ReactNode, useContext, useEffect, useMemo, useRef, useState } from 'react'
import { createWishlistClient, type WishlistClient } from '../client.js'
import type { WishlistApiError } from '../errors.js'
import type { MergeResult } from '../types.js'
import { clearGuest, defaultStorage, guestIdOf, type KeyValueStorage, readGuestItems } from './guest.js'
import { ResourceStore, toApiError } from './store.js'

export interface WishlistProviderProps {
  /** Where the service listens, e.g. `https://wishlist.example.com`. */
  baseUrl: string
  /** The shop's public storefront key (`sfk_…`). */
  storefrontKey: string
  /** The logged-in customer; with `customerToken` the provider works in customer mode. */
  customerId?: string | undefined
  /** A customer token minted by your backend (POST /v1/auth/token with customer_id), or a function returning it. */
  customerToken?: string | (() => string | Promise<string>) | undefined
  /**
   * Asks your backend for a fresh customer token: called when the provider has none and once
   * more when the service answers `401 TOKEN_EXPIRED` (that call is then repeated once), as
   * the client's `getToken` option. With `customerId` it puts the provider in customer mode;
   * a string `customerToken` beside it is the first token, used until it expires.
   */
  getToken?: (() => string | Promise<string>) | undefined
  /** Where the guest id and guest items live; defaults to localStorage. */
  storage?: KeyValueStorage
  /** Custom fetch (tests, SSR). */
  fetch?: typeof fetch
  /** Called with every failed load or mutation (after its rollback). */
  onError?: (error: WishlistApiError) => void
  /** Called once after guest items were merged into the customer's wishlist on login. */
  onMerged?: (result: MergeResult) => void
  children?: ReactNode
}

export interface WishlistContextValue {
  client: WishlistClient
  store: ResourceStore
  /** The wishlist owner: the customer id, or this browser's guest id. */
  owner: string
  mode: 'customer' | 'guest'
  storage: KeyValueStorage
  /** State of the guest-to-customer merge of this login. */
  merge: { status: 'none' | 'merging' | 'merged' | 'error'; error?: WishlistApiError | undefined }
}

const WishlistContext = createContext<WishlistContextValue | null>(null)

// One merge per (service, customer, guest) even when React mounts a provider twice
// (StrictMode), several providers share a page, or the storefront widget runs beside the
// app: the registry lives on globalThis under a registered symbol the widget uses too.
const registry = globalThis as { [key: symbol]: Map<string, Promise<unknown>> | undefined }
const MERGES = Symbol.for('wishlist.merges')
const merges = (registry[MERGES] ??= new Map<string, Promise<unknown>>()) as Map<string, Promise<MergeResult | undefined>>

/**
 * Provides the client, the shared cache and the wishlist owner to the hooks. In customer
 * mode it merges the items this browser collected as a guest into the customer's
 * wishlist once (POST /v1/wishlists/{customerId}/merge with `guest_id`), then forgets them.
 */
export function WishlistProvider(props: WishlistProviderProps) {
  const { baseUrl, storefrontKey, customerId, customerToken, getToken, fetch: fetchImpl, onError, onMerged } = props
  const storage = useMemo(() => props.storage ?? defaultStorage(), [props.storage])
  const renewing = getToken !== undefined
  const customerMode = customerId !== undefined && (customerToken !== undefined || renewing)
  const [mergeState, setMergeState] = useState<WishlistContextValue['merge']>({ status: 'none' })
  // The token is read on every call, so a refreshed token (or a new function) does not reset the cache.
  const tokenRef = useRef(customerToken)
  tokenRef.current = customerToken
  // Likewise getToken: the client calls the newest one.
  const getTokenRef = useRef(getToken)
  getTokenRef.current = getToken
  // Likewise the callbacks: an inline function (a new one each render) must not reset the
  // cache nor re-run the merge's effect.
  const onErrorRef = useRef(onError)
  onErrorRef.current = onError
  const onMergedRef = useRef(onMerged)
  onMergedRef.current = onMerged

  const value = useMemo(() => {
    const store = new ResourceStore((error) => onErrorRef.current?.(error))
    if (customerMode) {
      const first = tokenRef.current
      const client = renewing
        ? createWishlistClient({
            baseUrl,
            credentials: typeof first === 'string' ? { token: first, storefrontKey } : { storefrontKey },
            getToken: () => {
              const renew = getTokenRef.current
              if (renew === undefined) throw new TypeError('WishlistProvider: getToken was removed')
              return renew()
            },
            ...(fetchImpl ? { fetch: fetchImpl } : {}),
          })
        : createWishlistClient({
            baseUrl,
            credentials: {
              token: () => {
                const t = tokenRef.current
                return typeof t === 'function' ? t() : (t ?? '')
              },
              storefrontKey,
            },
            ...(fetchImpl ? { fetch: fetchImpl } : {}),
          })
      const items = readGuestItems(storage)
      const guestId = storage.getItem('wishlist:guest-id')
      let pendingMerge: Promise<MergeResult | undefined> | undefined
      if (items.length > 0 && guestId !== null) {
        const key = `${customerId}|${guestId}`
        pendingMerge = merges.get(key)
        if (!pendingMerge) {
          pendingMerge = client.wishlist.merge(customerId, { guest_items: items, guest_id: guestId }).then((result) => {
            clearGuest(storage)
            return result
          })
          merges.set(key, pendingMerge)
          void pendingMerge.finally(() => merges.delete(key)).catch(() => {})
        }
        store.hold(pendingMerge)
      } else if (items.length === 0) {
        // Nothing to merge: the guest identity of this browser is not needed any more.
        storage.removeItem('wishlist:guest-id')
      }
      return { client, store, owner: customerId, mode: 'customer' as const, storage, pendingMerge }
    }
    const guestId = guestIdOf(storage)
    const client = createWishlistClient({ baseUrl, credentials: { storefrontKey, guestId }, ...(fetchImpl ? { fetch: fetchImpl } : {}) })
    return { client, store, owner: guestId, mode: 'guest' as const, storage, pendingMerge: undefined }
  }, [baseUrl, storefrontKey, customerId, customerMode, renewing, storage, fetchImpl])

  useEffect(() => {
    const pending = value.pendingMerge
    if (!pending) {
      setMergeState({ status: 'none' })
      return
    }
    let live = true
    setMergeState({ status: 'merging' })
    pending.then(
      (result) => {
        if (!live) return
        setMergeState({ status: 'merged' })
        if (result) onMergedRef.current?.(result)
      },
      (err: unknown) => {
        if (!live) return
        const error = toApiError(err)
        setMergeState({ status: 'error', error })
        onErrorRef.current?.(error)
      },
    )
    return () => {
      live = false
    }
  }, [value])

  const ctx = useMemo<WishlistContextValue>(
    () => ({ client: value.client, store: value.store, owner: value.owner, mode: value.mode, storage: value.storage, merge: mergeState }),
    [value, mergeState],
  )
  return <WishlistContext.Provider value={ctx}>{props.children}</WishlistContext.Provider>
}

/** The provider's context; throws outside a {@link WishlistProvider}. */
export function useWishlistContext(): WishlistContextValue {
  const ctx = useContext(WishlistContext)
  if (!ctx) throw new Error('Wishlist hooks must be used inside <WishlistProvider>')
  return ctx
}

/** The typed client of the nearest provider (for calls the hooks do not cover). */
export function useWishlistClient(): WishlistClient {
  return useWishlistContext().client
}
