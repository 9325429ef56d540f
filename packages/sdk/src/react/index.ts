'use client'

/**
 * wishlist-service-sdk/react: a provider and hooks with optimistic updates, rollback on failure,
 * one shared cache per owner and list, and the guest-to-customer merge on login.
 */
export { GUEST_ID_KEY, GUEST_ITEMS_KEY, type KeyValueStorage } from './guest.js'
export {
  type UseListsResult,
  type UseReviewSummaryResult,
  type UseReviewsResult,
  type UseWishlistOptions,
  type UseWishlistResult,
  useGuestMerge,
  useLists,
  useReviewSummary,
  useReviews,
  useWishlist,
} from './hooks.js'
export {
  useWishlistClient,
  useWishlistContext,
  type WishlistContextValue,
  WishlistProvider,
  type WishlistProviderProps,
} from './provider.js'
export type { MutationResult, Snapshot, Status } from './store.js'
