// @vitest-environment happy-dom
import { request as httpRequest } from 'node:http'
import { act, cleanup, renderHook, waitFor } from '@testing-library/react'
import type { ReactNode } from 'react'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { forgeToken } from '../../../apps/server/test/helpers/app.js'
import { createWishlistClient } from '../src/index.js'
import {
  GUEST_ID_KEY,
  GUEST_ITEMS_KEY,
  useLists,
  useReviewSummary,
  useReviews,
  useWishlist,
  WishlistProvider,
  type WishlistProviderProps,
} from '../src/react/index.js'
import { type RunningServer, startServer, type TestShop } from './helpers/server.js'

let server: RunningServer
let shop: TestShop

beforeAll(async () => {
  server = await startServer()
  shop = await server.createShop('scale', { multi_wishlist_enabled: true, reviews_auto_approve: true })
})
afterAll(() => server.close())
afterEach(() => {
  cleanup()
  localStorage.clear()
})

/** Records requests; `hold` delays matching requests until released. */
function instrumentedFetch() {
  const calls: string[] = []
  let gate: { match: (s: string) => boolean; promise: Promise<void>; release: () => void } | undefined
  const f: typeof fetch = async (input, init) => {
    const url = new URL(String(input))
    const call = `${init?.method ?? 'GET'} ${url.pathname}`
    calls.push(call)
    if (gate?.match(call)) await gate.promise
    return fetch(input, init)
  }
  return {
    calls,
    fetch: f,
    hold(match: (s: string) => boolean) {
      let release = () => {}
      const promise = new Promise<void>((r) => (release = r))
      gate = { match, promise, release }
      return () => {
        gate = undefined
        release()
      }
    },
  }
}

/**
 * happy-dom keeps the service's public reads in its HTTP cache (reviews: `max-age=300`) as a
 * browser does, but ignores a request's `cache` mode. A browser honours `cache: 'no-cache'`
 * by asking the server: this fetch does so itself (node:http), and records each call's mode.
 */
function cacheModeFetch() {
  const calls: string[] = []
  const f: typeof fetch = async (input, init) => {
    const url = new URL(String(input))
    calls.push(`${init?.cache ?? 'default'} ${url.pathname}`)
    if (init?.cache !== 'no-cache') return fetch(input, init)
    const headers = Object.fromEntries(new Headers(init.headers).entries())
    return new Promise<Response>((resolve, reject) => {
      const req = httpRequest(url, { method: init.method ?? 'GET', headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve(new Response(Buffer.concat(chunks).toString('utf8'), { status: res.statusCode ?? 0 })))
      })
      req.on('error', reject)
      req.end()
    })
  }
  return { calls, fetch: f }
}

function wrapperFor(props: Omit<WishlistProviderProps, 'children' | 'baseUrl' | 'storefrontKey'> = {}) {
  return ({ children }: { children: ReactNode }) => (
    <WishlistProvider baseUrl={server.baseUrl} storefrontKey={shop.storefrontKey} {...props}>
      {children}
    </WishlistProvider>
  )
}

describe('useWishlist', () => {
  test('several components share one request; an add shows at once and is then confirmed', async () => {
    const net = instrumentedFetch()
    const wrapper = wrapperFor({ fetch: net.fetch })
    const { result } = renderHook(() => ({ a: useWishlist(), b: useWishlist(), c: useWishlist() }), { wrapper })
    await waitFor(() => expect(result.current.a.status).toBe('ready'))
    expect(net.calls.filter((c) => c.startsWith('GET /v1/wishlists/'))).toHaveLength(1)
    expect(result.current.a.mode).toBe('guest')

    const release = net.hold((c) => c.startsWith('POST'))
    let done: Promise<unknown> = Promise.resolve()
    act(() => {
      done = result.current.a.add('501')
    })
    // Optimistic: visible in every component before the server answered.
    expect(result.current.b.has('501')).toBe(true)
    expect(result.current.c.pending).toBe(1)
    release()
    await act(async () => {
      await done
    })
    expect(result.current.c.pending).toBe(0)
    expect(result.current.c.items[0]?.productId).toBe('501')
    const guestId = localStorage.getItem(GUEST_ID_KEY) ?? ''
    // The guest id the provider made carries 128 random bits (it is a bearer secret).
    expect(guestId).toMatch(/^g_[0-9a-f]{32}$/)
    const check = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    expect((await check.wishlist.get(guestId)).items.map((i) => i.productId)).toEqual(['501'])
  })

  test('a failing call rolls back and surfaces the error', async () => {
    const errors: string[] = []
    const net = instrumentedFetch()
    const wrapper = wrapperFor({ fetch: net.fetch, onError: (e) => errors.push(e.code) })
    const { result } = renderHook(() => useWishlist(), { wrapper })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    await act(async () => {
      await result.current.add('601')
    })
    const release = net.hold((c) => c.startsWith('POST'))
    let pending: ReturnType<typeof result.current.add> | undefined
    // The server refuses: a product id must be digits.
    act(() => {
      pending = result.current.add('not-a-product')
    })
    expect(result.current.has('not-a-product')).toBe(true)
    release()
    let outcome: Awaited<ReturnType<typeof result.current.add>> | undefined
    await act(async () => {
      outcome = await pending
    })
    expect(outcome?.ok).toBe(false)
    expect(result.current.has('not-a-product')).toBe(false)
    expect(result.current.items.map((i) => i.productId)).toEqual(['601'])
    expect(result.current.error?.code).toBe('VALIDATION_ERROR')
    expect(result.current.error?.status).toBe(400)
    expect(errors).toEqual(['VALIDATION_ERROR'])
  })

  test('updateItem shows the change at once, is confirmed, and rolls back when refused', async () => {
    const net = instrumentedFetch()
    const { result } = renderHook(() => ({ a: useWishlist(), b: useWishlist() }), { wrapper: wrapperFor({ fetch: net.fetch }) })
    await waitFor(() => expect(result.current.a.status).toBe('ready'))
    await act(async () => {
      await result.current.a.add('651', { quantity: 2, note: 'blue' })
    })
    expect(result.current.b.items[0]).toMatchObject({ productId: '651', quantity: 2, note: 'blue', priority: 'normal', purchasedAt: null })
    const release = net.hold((c) => c.startsWith('PATCH'))
    let done: Promise<unknown> = Promise.resolve()
    act(() => {
      done = result.current.a.updateItem('651', { quantity: 3, note: null, priority: 'high' })
    })
    // Optimistic: every component sees it before the server answered.
    expect(result.current.b.items[0]).toMatchObject({ quantity: 3, note: null, priority: 'high' })
    release()
    await act(async () => {
      await done
    })
    expect(result.current.b.pending).toBe(0)
    // Guest mode: the changed item is what a merge at login will carry.
    expect(JSON.parse(localStorage.getItem(GUEST_ITEMS_KEY) ?? '[]')[0]).toMatchObject({ product_id: '651', quantity: 3, priority: 'high' })

    let outcome: Awaited<ReturnType<typeof result.current.a.updateItem>> | undefined
    await act(async () => {
      outcome = await result.current.a.updateItem('651', { quantity: 100 })
    })
    expect(outcome?.ok).toBe(false)
    expect(result.current.a.error?.code).toBe('VALIDATION_ERROR')
    expect(result.current.b.items[0]).toMatchObject({ quantity: 3, priority: 'high' })
    const guestId = localStorage.getItem(GUEST_ID_KEY) ?? ''
    const check = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    expect((await check.wishlist.get(guestId)).items[0]).toMatchObject({ productId: '651', quantity: 3, note: null, priority: 'high' })
  })

  test('remove rolls back when the server is unavailable', async () => {
    const net = instrumentedFetch()
    let refuse = false
    const failing: typeof fetch = async (input, init) =>
      refuse && init?.method === 'DELETE'
        ? new Response(JSON.stringify({ ok: false, error: { code: 'INTERNAL_ERROR', message: 'boom' } }), { status: 500 })
        : net.fetch(input, init)
    const { result } = renderHook(() => useWishlist(), { wrapper: wrapperFor({ fetch: failing }) })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    await act(async () => {
      await result.current.add('701')
    })
    refuse = true
    await act(async () => {
      await result.current.toggle('701')
    })
    expect(result.current.has('701')).toBe(true)
    expect(result.current.error?.code).toBe('INTERNAL_ERROR')
  })

  test('login merges the guest items once, then clears them', async () => {
    const guest = renderHook(() => useWishlist(), { wrapper: wrapperFor() })
    await waitFor(() => expect(guest.result.current.status).toBe('ready'))
    await act(async () => {
      await guest.result.current.add('801')
      await guest.result.current.add('802', { handle: 'blue-hat', variant_id: '8021' })
    })
    // The kept items carry the chosen variant into the merge.
    const kept = JSON.parse(localStorage.getItem(GUEST_ITEMS_KEY) ?? '[]') as Array<Record<string, string>>
    expect(kept.map((i) => [i.product_id, i.variant_id])).toEqual([
      ['802', '8021'],
      ['801', undefined],
    ])
    guest.unmount()

    const token = await shop.customerToken('9001')
    const net = instrumentedFetch()
    const merged: number[] = []
    const wrapper = wrapperFor({ customerId: '9001', customerToken: token, fetch: net.fetch, onMerged: (r) => merged.push(r.merged_count) })
    const customer = renderHook(() => useWishlist(), { wrapper })
    await waitFor(() => expect(customer.result.current.status).toBe('ready'))
    expect(customer.result.current.mode).toBe('customer')
    expect(customer.result.current.items.map((i) => i.productId).sort()).toEqual(['801', '802'])
    await waitFor(() => expect(merged).toEqual([2]))
    await waitFor(() => expect(customer.result.current.items.find((i) => i.productId === '802')?.variantId).toBe('8021'))
    expect(localStorage.getItem(GUEST_ITEMS_KEY)).toBeNull()
    expect(localStorage.getItem(GUEST_ID_KEY)).toBeNull()
    customer.unmount()

    // A second mount (page reload) does not merge again: by the time its list is loaded, a
    // merge would have been sent (it starts on mount).
    const again = renderHook(() => useWishlist(), { wrapper })
    await waitFor(() => expect(again.result.current.status).toBe('ready'))
    expect(net.calls.filter((c) => c.endsWith('/merge'))).toHaveLength(1)
  })
})

describe('useWishlist races and sizes', () => {
  /** A fetch whose answers to matching requests are held after the server has handled them. */
  function lateAnswers(match: (call: string) => boolean) {
    let release = () => {}
    const gate = new Promise<void>((r) => (release = r))
    let answered = () => {}
    /** Resolves once the server has answered a matching request (its answer still held). */
    const serverAnswered = new Promise<void>((r) => (answered = r))
    const f: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      if (match(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`)) {
        answered()
        await gate
      }
      return res
    }
    return { fetch: f, release: () => release(), serverAnswered }
  }

  test('a click while the list loads shows at once and survives a load answered before it', async () => {
    const net = lateAnswers((c) => c.startsWith('GET /v1/wishlists/'))
    const { result } = renderHook(() => useWishlist(), { wrapper: wrapperFor({ fetch: net.fetch }) })
    await waitFor(() => expect(result.current.status).toBe('loading'))
    // The GET has been answered by the server (empty list); its answer is held back.
    await net.serverAnswered
    let done: Promise<unknown> = Promise.resolve()
    act(() => {
      done = result.current.add('9001')
    })
    expect(result.current.has('9001')).toBe(true)
    await act(async () => {
      await done
    })
    expect(result.current.has('9001')).toBe(true)
    act(() => net.release())
    await waitFor(() => expect(result.current.status).toBe('ready'))
    expect(result.current.has('9001')).toBe(true)
    expect(result.current.pending).toBe(0)
  })

  test('fast toggles of one product end as the server ends, whatever order the answers arrive in', async () => {
    // Each write's answer comes back after a random delay, so later answers may overtake earlier ones.
    const jittery: typeof fetch = async (input, init) => {
      const res = await fetch(input, init)
      if (init?.method === 'POST' || init?.method === 'DELETE') await new Promise((r) => setTimeout(r, Math.random() * 20))
      return res
    }
    const { result } = renderHook(() => useWishlist(), { wrapper: wrapperFor({ fetch: jittery }) })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    const guestId = localStorage.getItem(GUEST_ID_KEY) ?? ''
    const check = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    for (let round = 0; round < 8; round++) {
      const clicks = 2 + (round % 4)
      const outcomes: Promise<unknown>[] = []
      for (let i = 0; i < clicks; i++) {
        act(() => {
          outcomes.push(result.current.toggle('4242'))
        })
        await new Promise((r) => setTimeout(r, 3))
      }
      await act(async () => {
        await Promise.all(outcomes)
      })
      const onServer = (await check.wishlist.get(guestId)).items.some((i) => i.productId === '4242')
      expect(result.current.has('4242'), `round ${round}, ${clicks} clicks`).toBe(onServer)
      expect(result.current.pending).toBe(0)
    }
  })

  test('an inline onError (a new function each render) keeps the cache', async () => {
    const net = instrumentedFetch()
    const errors: string[] = []
    const wrapper = ({ children }: { children: ReactNode }) => (
      <WishlistProvider baseUrl={server.baseUrl} storefrontKey={shop.storefrontKey} fetch={net.fetch} onError={(e) => errors.push(e.code)}>
        {children}
      </WishlistProvider>
    )
    const { result, rerender } = renderHook(() => useWishlist(), { wrapper })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    rerender()
    rerender()
    expect(result.current.status).toBe('ready')
    expect(net.calls.filter((c) => c.startsWith('GET /v1/wishlists/'))).toHaveLength(1)
    await act(async () => {
      await result.current.add('bad id')
    })
    expect(errors).toEqual(['VALIDATION_ERROR'])
  })

  test('knows every saved product of a list longer than one page', async () => {
    const guestId = 'g_long_list_01'
    localStorage.setItem(GUEST_ID_KEY, guestId)
    const guest = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    for (let p = 1; p <= 230; p++) await guest.wishlist.add(guestId, { product_id: String(100_000 + p) })
    const { result } = renderHook(() => useWishlist(), { wrapper: wrapperFor() })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    expect(result.current.total).toBe(230)
    expect(result.current.items).toHaveLength(230)
    // The oldest item, beyond the first 200: toggling it removes it.
    expect(result.current.has('100001')).toBe(true)
    await act(async () => {
      await result.current.toggle('100001')
    })
    expect((await guest.wishlist.get(guestId, { limit: 200, offset: 200 })).items.map((i) => i.productId)).not.toContain('100001')
    expect(result.current.total).toBe(229)
  })
})

describe('useLists and reviews', () => {
  test('creating a list with a taken name rolls back with LIST_NAME_TAKEN', async () => {
    const token = await shop.customerToken('9100')
    const net = instrumentedFetch()
    const { result } = renderHook(() => useLists(), { wrapper: wrapperFor({ customerId: '9100', customerToken: token, fetch: net.fetch }) })
    await waitFor(() => expect(result.current.status).toBe('ready'))
    await act(async () => {
      expect((await result.current.create('Gifts')).ok).toBe(true)
    })
    expect(result.current.lists.map((l) => l.name)).toEqual(['My Wishlist', 'Gifts'])
    const release = net.hold((c) => c.startsWith('POST'))
    let pending: Promise<unknown> = Promise.resolve()
    act(() => {
      pending = result.current.create('gifts')
    })
    expect(result.current.lists).toHaveLength(3)
    release()
    await act(async () => {
      await pending
    })
    expect(result.current.lists.map((l) => l.name)).toEqual(['My Wishlist', 'Gifts'])
    expect(result.current.error?.code).toBe('LIST_NAME_TAKEN')
    expect(result.current.error?.status).toBe(409)
  })

  test('reviews and summary; votes and submissions refresh them', async () => {
    const admin = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey } })
    await admin.reviews.submit({ productId: '950', customerEmail: 'r@example.com', customerName: 'Rae', rating: 4, body: 'Good' })
    const net = cacheModeFetch()
    const { result } = renderHook(() => ({ list: useReviews('950'), summary: useReviewSummary('950') }), {
      wrapper: wrapperFor({ fetch: net.fetch }),
    })
    await waitFor(() => expect(result.current.list.status).toBe('ready'))
    await waitFor(() => expect(result.current.summary.status).toBe('ready'))
    expect(result.current.summary.summary?.reviewCount).toBe(1)
    const id = result.current.list.reviews[0]?.id ?? 0
    await act(async () => {
      expect((await result.current.list.voteHelpful(id)).ok).toBe(true)
    })
    expect(result.current.list.reviews[0]?.helpfulCount).toBe(1)
    await act(async () => {
      await result.current.list.submit({ customerEmail: 's@example.com', customerName: 'Sam', rating: 2, body: 'Meh' })
    })
    await waitFor(() => expect(result.current.summary.summary?.reviewCount).toBe(2))
    await waitFor(() => expect(result.current.list.reviews).toHaveLength(2))
    // The first reads may come from the browser's cache; the reads after the submission may not.
    expect(net.calls).toEqual(
      expect.arrayContaining([
        'default /api/v1/products/950/reviews',
        'default /api/v1/products/950/reviews/summary',
        'no-cache /api/v1/products/950/reviews',
        'no-cache /api/v1/products/950/reviews/summary',
      ]),
    )
  })
})

describe('customer token renewal', () => {
  test('getToken renews an expired customerToken; the hooks load and write with the new token, a named list included', async () => {
    const customerId = '9303'
    const admin = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: shop.keyId, apiSecret: shop.secret, customerId } })
    const { wishlist } = await admin.lists.create(customerId, 'Later')
    await admin.wishlist.add(customerId, { product_id: '9304' }, { wishlistId: wishlist.wishlistId })
    const expired = await forgeToken(
      { sub: `customer:${customerId}`, shop: shop.id, kid: shop.keyId, scope: 'customer' },
      { exp: Math.floor(Date.now() / 1000) - 60 },
    )
    // The app's backend: mints a customer token with its API key (POST /v1/auth/token).
    let renewals = 0
    const getToken = async () => {
      renewals++
      return (await admin.auth.token({ api_key: shop.keyId, api_secret: shop.secret, customer_id: customerId })).token
    }
    const wrapper = wrapperFor({ customerId, customerToken: expired, getToken })
    const { result } = renderHook(() => ({ main: useWishlist(), later: useWishlist({ listId: wishlist.wishlistId }) }), { wrapper })
    await waitFor(() => expect(result.current.later.status).toBe('ready'))
    await waitFor(() => expect(result.current.main.status).toBe('ready'))
    expect(result.current.main.mode).toBe('customer')
    expect(result.current.main.error).toBeUndefined()
    // Each list read by its id: the named one holds 9304, the default one nothing yet.
    expect(result.current.later.items.map((i) => i.productId)).toEqual(['9304'])
    expect(result.current.main.items).toEqual([])
    expect(renewals).toBe(1)
    await act(async () => {
      await result.current.main.add('9305')
    })
    expect(result.current.main.error).toBeUndefined()
    expect((await admin.wishlist.get(customerId)).items.map((i) => i.productId)).toEqual(['9305'])
    expect(renewals).toBe(1)
  })
})
