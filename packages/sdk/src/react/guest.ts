/**
 * The guest identity kept in the browser, shared with the storefront widget (same keys):
 * the guest id used in guest mode, and the items the guest added, which are merged into
 * the customer's wishlist once on login and then cleared.
 */
import { createGuestId } from '../http.js'
import type { GuestItem } from '../types.js'

export const GUEST_ID_KEY = 'wishlist:guest-id'
export const GUEST_ITEMS_KEY = 'wishlist:guest-items'

/** The subset of `Storage` the SDK needs (localStorage, or your own). */
export interface KeyValueStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** `localStorage` when usable (it throws in some private modes), else an in-memory map. */
export function defaultStorage(): KeyValueStorage {
  try {
    const s = globalThis.localStorage
    const probe = '__wishlist_probe__'
    s.setItem(probe, '1')
    s.removeItem(probe)
    return s
  } catch {
    const m = new Map<string, string>()
    return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) }
  }
}

/** The guest id of this browser, created on first use. */
export function guestIdOf(storage: KeyValueStorage): string {
  let id = storage.getItem(GUEST_ID_KEY)
  if (id === null || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) {
    id = createGuestId()
    storage.setItem(GUEST_ID_KEY, id)
  }
  return id
}

export function readGuestItems(storage: KeyValueStorage): GuestItem[] {
  try {
    const parsed: unknown = JSON.parse(storage.getItem(GUEST_ITEMS_KEY) ?? '[]')
    return Array.isArray(parsed)
      ? parsed.filter((i): i is GuestItem => typeof i === 'object' && i !== null && typeof (i as GuestItem).product_id === 'string')
      : []
  } catch {
    return []
  }
}

export function rememberGuestItem(storage: KeyValueStorage, item: GuestItem): void {
  const items = readGuestItems(storage).filter((i) => i.product_id !== item.product_id)
  storage.setItem(GUEST_ITEMS_KEY, JSON.stringify([item, ...items]))
}

export function forgetGuestItem(storage: KeyValueStorage, productId: string): void {
  storage.setItem(GUEST_ITEMS_KEY, JSON.stringify(readGuestItems(storage).filter((i) => i.product_id !== productId)))
}

/** After a merge the guest identity is spent: a later logout starts a fresh guest. */
export function clearGuest(storage: KeyValueStorage): void {
  storage.removeItem(GUEST_ITEMS_KEY)
  storage.removeItem(GUEST_ID_KEY)
}
