import { useCallback, useEffect, useMemo, useSyncExternalStore } from 'react'
import type { WishlistClient } from '../client.js'
import type { WishlistApiError } from '../errors.js'
import type * as T from '../types.js'
import { forgetGuestItem, readGuestItems, rememberGuestItem } from './guest.js'
import { useWishlistContext } from './provider.js'
import { type MutationResult, type ResourceStore, type Snapshot, type Status, toApiError } from './store.js'

/** Largest page the server serves. */
const PAGE_SIZE = 200
const EMPTY_PAGE: T.WishlistPage = { items: [], count: 0, total: 0, has_more: false }
/** One empty list for every render before the first load, so `has` and `toggle` keep their identity. */
const NO_ITEMS: T.WishlistItem[] = []

/**
 * Every item of a list (up to the 2,500-item limit: at most 13 pages), so that `has()` and
 * `toggle()` know every saved product, not only the newest 200. An item that moves between
 * pages while they are read is kept once.
 */
async function wholeList(client: WishlistClient, owner: string, wishlistId: string | undefined): Promise<T.WishlistPage> {
  const scope = wishlistId === undefined ? {} : { wishlistId }
  const first = await client.wishlist.get(owner, { limit: PAGE_SIZE, ...scope })
  const items = [...first.items]
  let page = first
  while (page.has_more && page.items.length > 0) {
    page = await client.wishlist.get(owner, { limit: PAGE_SIZE, offset: items.length, ...scope })
    items.push(...page.items)
  }
  const seen = new Set<string>()
  const unique = items.filter((i) => !seen.has(i.productId) && seen.add(i.productId))
  return { items: unique, count: unique.length, total: page.total, has_more: false }
}

function useEntry<Data>(store: ResourceStore, key: string, fetcher: () => Promise<Data>): Snapshot<Data> {
  const subscribe = useCallback((listener: () => void) => store.subscribe(key, listener), [store, key])
  const get = useCallback(() => store.snapshot<Data>(key), [store, key])
  const snap = useSyncExternalStore(subscribe, get, get)
  useEffect(() => {
    void store.load(key, fetcher)
    // `fetcher` is derived from `key`; reloading on its identity would defeat de-duplication.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [store, key])
  return snap
}

export interface UseWishlistOptions {
  /** A list id (multi-wishlist); the default list when omitted. */
  listId?: string
}

export interface UseWishlistResult {
  items: T.WishlistItem[]
  /** Items in the list (the server's `total`, adjusted by pending optimistic changes). */
  total: number
  status: Status
  /** The last failure (load or mutation, after its rollback). */
  error: WishlistApiError | undefined
  /** Optimistic changes still waiting for the server. */
  pending: number
  /** The wishlist owner: the customer id or this browser's guest id. */
  owner: string
  mode: 'customer' | 'guest'
  has(productId: string): boolean
  add(productId: string, extra?: Omit<T.AddItemInput, 'product_id'>): Promise<MutationResult<T.AddItemResult>>
  /** Changes quantity, note (null clears), priority or variant of a saved item; shown at once, rolled back when refused. */
  updateItem(productId: string, changes: T.UpdateItemInput): Promise<MutationResult<T.UpdateItemResult>>
  remove(productId: string): Promise<MutationResult<T.RemoveItemResult>>
  toggle(productId: string, extra?: Omit<T.AddItemInput, 'product_id'>): Promise<MutationResult<T.AddItemResult | T.RemoveItemResult>>
  refresh(): Promise<void>
}

const wishlistKey = (owner: string, listId: string) => `wishlist|${owner}|${listId}`

/** A guest item as kept for the merge at login; `variantId` is the variant the guest chose (kept by the merge). */
const guestItemOf = (item: T.WishlistItem, variantId?: string | null): T.GuestItem => ({
  product_id: item.productId,
  added_at: item.addedAt,
  ...(variantId ? { variant_id: variantId } : {}),
  quantity: item.quantity,
  priority: item.priority,
  ...(item.note === null ? {} : { note: item.note }),
  ...(item.handle ? { handle: item.handle } : {}),
})

/**
 * The items of one list of the current owner, with optimistic add/remove/toggle that roll
 * back (and surface `error`) when the server refuses. Components using the same list share
 * one cache entry and one request.
 */
export function useWishlist(options: UseWishlistOptions = {}): UseWishlistResult {
  const { client, store, owner, mode, storage } = useWishlistContext()
  const listId = options.listId ?? 'default'
  const key = wishlistKey(owner, listId)
  const scope = useMemo(() => (listId === 'default' ? {} : { wishlistId: listId }), [listId])
  const fetcher = useCallback(() => wholeList(client, owner, scope.wishlistId), [client, owner, scope])
  const snap = useEntry(store, key, fetcher)
  const items = snap.data?.items ?? NO_ITEMS

  const add = useCallback(
    (productId: string, extra: Omit<T.AddItemInput, 'product_id'> = {}) =>
      store.mutate<T.WishlistPage, T.AddItemResult>(key, {
        lane: productId,
        empty: EMPTY_PAGE,
        optimistic: (page) => {
          if (page.items.some((i) => i.productId === productId)) return page
          const item: T.WishlistItem = {
            productId,
            variantId: extra.variant_id ?? null,
            addedAt: new Date().toISOString(),
            quantity: extra.quantity ?? 1,
            note: extra.note?.trim() || null,
            priority: extra.priority ?? 'normal',
            purchasedAt: null,
            ...(extra.handle ? { handle: extra.handle } : {}),
          }
          return { ...page, items: [item, ...page.items], count: page.count + 1, total: page.total + 1 }
        },
        call: async () => {
          const result = await client.wishlist.add(owner, { product_id: productId, ...extra }, scope)
          if (mode === 'guest') rememberGuestItem(storage, guestItemOf(result.item, extra.variant_id))
          return result
        },
        commit: (page, result) => {
          const rest = page.items.filter((i) => i.productId !== result.item.productId)
          return { ...page, items: [result.item, ...rest], count: rest.length + 1, total: result.count }
        },
      }),
    [store, key, client, owner, scope, mode, storage],
  )

  const updateItem = useCallback(
    (productId: string, changes: T.UpdateItemInput) =>
      store.mutate<T.WishlistPage, T.UpdateItemResult>(key, {
        lane: productId,
        empty: EMPTY_PAGE,
        optimistic: (page) => ({
          ...page,
          items: page.items.map((i) =>
            i.productId !== productId
              ? i
              : {
                  ...i,
                  ...(changes.quantity === undefined ? {} : { quantity: changes.quantity }),
                  ...(changes.note === undefined ? {} : { note: changes.note?.trim() || null }),
                  ...(changes.priority === undefined ? {} : { priority: changes.priority }),
                  ...(changes.variant_id === undefined ? {} : { variantId: changes.variant_id }),
                },
          ),
        }),
        call: async () => {
          const result = await client.wishlist.update(owner, productId, changes, scope)
          // A variant chosen now, or the one chosen when it was added.
          const kept = readGuestItems(storage).find((i) => i.product_id === productId)?.variant_id
          if (mode === 'guest') rememberGuestItem(storage, guestItemOf(result.item, changes.variant_id ?? kept))
          return result
        },
        commit: (page, result) => ({ ...page, items: page.items.map((i) => (i.productId === result.item.productId ? result.item : i)) }),
      }),
    [store, key, client, owner, scope, mode, storage],
  )

  const remove = useCallback(
    (productId: string) =>
      store.mutate<T.WishlistPage, T.RemoveItemResult>(key, {
        lane: productId,
        empty: EMPTY_PAGE,
        optimistic: (page) => {
          const rest = page.items.filter((i) => i.productId !== productId)
          return rest.length === page.items.length ? page : { ...page, items: rest, count: rest.length, total: page.total - 1 }
        },
        call: async () => {
          const result = await client.wishlist.remove(owner, productId, scope)
          if (mode === 'guest') forgetGuestItem(storage, productId)
          return result
        },
        commit: (page, result) => {
          const rest = page.items.filter((i) => i.productId !== productId)
          return { ...page, items: rest, count: rest.length, total: result.count }
        },
      }),
    [store, key, client, owner, scope, mode, storage],
  )

  const has = useCallback((productId: string) => items.some((i) => i.productId === productId), [items])
  const toggle = useCallback(
    (productId: string, extra?: Omit<T.AddItemInput, 'product_id'>) => (has(productId) ? remove(productId) : add(productId, extra)),
    [has, add, remove],
  )
  const refresh = useCallback(() => store.load(key, fetcher, true), [store, key, fetcher])

  return {
    items,
    total: snap.data?.total ?? 0,
    status: snap.status,
    error: snap.error,
    pending: snap.pending,
    owner,
    mode,
    has,
    add,
    updateItem,
    remove,
    toggle,
    refresh,
  }
}

export interface UseListsResult {
  lists: T.WishlistList[]
  status: Status
  error: WishlistApiError | undefined
  create(name: string): Promise<MutationResult<T.CreateListResult>>
  rename(listId: string, name: string): Promise<MutationResult<T.RenameListResult>>
  remove(listId: string): Promise<MutationResult<T.DeleteListResult>>
  /** Moves a product between lists; both lists are reloaded afterwards. */
  move(productId: string, from: string, to: string): Promise<MutationResult<T.MoveResult>>
  refresh(): Promise<void>
}

/** The owner's named lists (multi-wishlist), with optimistic create, rename and delete. */
export function useLists(): UseListsResult {
  const { client, store, owner } = useWishlistContext()
  const key = `lists|${owner}`
  const fetcher = useCallback(() => client.lists.list(owner), [client, owner])
  const snap = useEntry(store, key, fetcher)

  const create = useCallback(
    (name: string) => {
      const temp = `pending_${Math.random().toString(36).slice(2)}`
      const at = new Date().toISOString()
      return store.mutate<T.ListsResult, T.CreateListResult>(key, {
        optimistic: (v) => ({
          wishlists: [...v.wishlists, { wishlistId: temp, name: name.trim(), itemCount: 0, createdAt: at, updatedAt: at }],
        }),
        call: () => client.lists.create(owner, name),
        commit: (v, r) => ({ wishlists: [...v.wishlists.filter((l) => l.wishlistId !== r.wishlist.wishlistId), r.wishlist] }),
      })
    },
    [store, key, client, owner],
  )
  const rename = useCallback(
    (listId: string, name: string) => {
      const apply = (v: T.ListsResult): T.ListsResult => ({
        wishlists: v.wishlists.map((l) => (l.wishlistId === listId ? { ...l, name: name.trim() } : l)),
      })
      return store.mutate<T.ListsResult, T.RenameListResult>(key, {
        optimistic: apply,
        call: () => client.lists.rename(owner, listId, name),
        commit: apply,
      })
    },
    [store, key, client, owner],
  )
  const remove = useCallback(
    (listId: string) => {
      const apply = (v: T.ListsResult): T.ListsResult => ({ wishlists: v.wishlists.filter((l) => l.wishlistId !== listId) })
      return store.mutate<T.ListsResult, T.DeleteListResult>(key, {
        optimistic: apply,
        call: () => client.lists.delete(owner, listId),
        commit: apply,
      })
    },
    [store, key, client, owner],
  )
  const move = useCallback(
    async (productId: string, from: string, to: string) => {
      const result = await store.mutate<T.WishlistPage, T.MoveResult>(wishlistKey(owner, from), {
        optimistic: (page) => ({ ...page, items: page.items.filter((i) => i.productId !== productId) }),
        call: () => client.wishlist.move(owner, { product_id: productId, from, to }),
        commit: (page) => page,
      })
      if (result.ok) {
        store.invalidate(`wishlist|${owner}|`)
        await Promise.all([
          store.load(wishlistKey(owner, from), () => wholeList(client, owner, from === 'default' ? undefined : from), true),
          store.load(wishlistKey(owner, to), () => wholeList(client, owner, to === 'default' ? undefined : to), true),
          store.load(key, fetcher, true),
        ])
      }
      return result
    },
    [store, key, client, owner, fetcher],
  )
  const refresh = useCallback(() => store.load(key, fetcher, true), [store, key, fetcher])
  return { lists: snap.data?.wishlists ?? [], status: snap.status, error: snap.error, create, rename, remove, move, refresh }
}

export interface UseReviewsResult {
  reviews: T.Review[]
  total: number
  hasMore: boolean
  status: Status
  error: WishlistApiError | undefined
  /** Submits a review; lists and summary reload when it was approved at once. */
  submit(input: Omit<T.SubmitReviewInput, 'productId'>): Promise<MutationResult<T.SubmitReviewResult>>
  /** Marks a review helpful (optimistic count, rolled back on failure). */
  voteHelpful(id: number): Promise<MutationResult<T.HelpfulResult>>
  unvoteHelpful(id: number): Promise<MutationResult<T.HelpfulResult>>
  refresh(): Promise<void>
}

/** Approved reviews of a product, one page. */
export function useReviews(productId: string, query: T.ReviewQuery = {}): UseReviewsResult {
  const { client, store } = useWishlistContext()
  const queryKey = JSON.stringify(query)
  const key = `reviews|${productId}|${queryKey}`
  const fetcher = useCallback(() => client.reviews.list(productId, JSON.parse(queryKey) as T.ReviewQuery), [client, productId, queryKey])
  const snap = useEntry(store, key, fetcher)

  const vote = useCallback(
    (id: number, delta: 1 | -1) =>
      store.mutate<T.ReviewPage, T.HelpfulResult>(key, {
        optimistic: (page) => ({
          ...page,
          data: page.data.map((r) => (r.id === id ? { ...r, helpfulCount: Math.max(0, r.helpfulCount + delta) } : r)),
        }),
        call: () => (delta === 1 ? client.reviews.voteHelpful(id) : client.reviews.unvoteHelpful(id)),
        commit: (page, result) => ({
          ...page,
          data: page.data.map((r) => (r.id === id ? { ...r, helpfulCount: result.helpfulCount } : r)),
        }),
      }),
    [store, key, client],
  )
  const submit = useCallback(
    async (input: Omit<T.SubmitReviewInput, 'productId'>): Promise<MutationResult<T.SubmitReviewResult>> => {
      try {
        const data = await client.reviews.submit({ ...input, productId })
        if (data.status === 'approved') {
          // Every page of the product's reviews held, each with its own query, and its summary:
          // asked of the service itself (a browser keeps these reads for minutes).
          const pages = `reviews|${productId}|`
          store.invalidate(pages, (k) => {
            const query = JSON.parse(k.slice(pages.length)) as T.ReviewQuery
            void store.load(k, () => client.reviews.list(productId, query, { fresh: true }), true)
          })
          store.invalidate(
            `summary|${productId}`,
            (k) => void store.load(k, () => client.reviews.summary(productId, { fresh: true }), true),
          )
        }
        return { ok: true, data }
      } catch (err) {
        return { ok: false, error: toApiError(err) }
      }
    },
    [client, productId, store],
  )
  const refresh = useCallback(() => store.load(key, fetcher, true), [store, key, fetcher])
  return {
    reviews: snap.data?.data ?? [],
    total: snap.data?.total ?? 0,
    hasMore: snap.data?.hasMore ?? false,
    status: snap.status,
    error: snap.error,
    submit,
    voteHelpful: (id) => vote(id, 1),
    unvoteHelpful: (id) => vote(id, -1),
    refresh,
  }
}

export interface UseReviewSummaryResult {
  summary: T.ReviewSummary | undefined
  status: Status
  error: WishlistApiError | undefined
}

/** Review count, average and distribution of a product (enough for schema.org AggregateRating). */
export function useReviewSummary(productId: string): UseReviewSummaryResult {
  const { client, store } = useWishlistContext()
  const key = `summary|${productId}`
  const fetcher = useCallback(() => client.reviews.summary(productId), [client, productId])
  const snap = useEntry(store, key, fetcher)
  return { summary: snap.data, status: snap.status, error: snap.error }
}

/** The merge of guest items on login: `merging`, `merged`, `error` or `none`. */
export function useGuestMerge(): { status: 'none' | 'merging' | 'merged' | 'error'; error?: WishlistApiError | undefined } {
  return useWishlistContext().merge
}
