/**
 * `getToken`: a browser's customer token renewed through the app's backend. The backend here is
 * an SDK client holding the API key, minting customer tokens with POST /v1/auth/token as a
 * merchant backend does; the expired token is one the real server's key signed with an `exp`
 * in the past, so the server's own verification answers 401 TOKEN_EXPIRED.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { forgeToken } from '../../../apps/server/test/helpers/app.js'
import { createWishlistClient, isWishlistApiError, type WishlistApiError } from '../src/index.js'
import { type RunningServer, startServer, type TestShop } from './helpers/server.js'

let server: RunningServer
let shop: TestShop

beforeAll(async () => {
  server = await startServer()
  shop = await server.createShop('growth')
})
afterAll(() => server.close())

const CUSTOMER = '3003'

/** A customer token of `CUSTOMER` signed with the server's key, expired a minute ago. */
const expiredToken = () =>
  forgeToken(
    { sub: `customer:${CUSTOMER}`, shop: shop.id, kid: shop.keyId, scope: 'customer' },
    { exp: Math.floor(Date.now() / 1000) - 60 },
  )

/** The app's backend: mints a fresh customer token with its API key, counting the calls. */
function backend() {
  const minter = createWishlistClient({ baseUrl: server.baseUrl })
  const counter = {
    calls: 0,
    getToken: async () => {
      counter.calls++
      return (await minter.auth.token({ api_key: shop.keyId, api_secret: shop.secret, customer_id: CUSTOMER })).token
    },
  }
  return counter
}

/** A fetch that records each API call with the token it carried and the status it got. */
function recordingFetch() {
  const calls: { path: string; token: string | undefined; status: number }[] = []
  const f: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    const res = await fetch(input, init)
    const auth = (init?.headers as Record<string, string> | undefined)?.authorization
    calls.push({ path: `${init?.method ?? 'GET'} ${url.pathname}`, token: auth?.replace(/^Bearer /, ''), status: res.status })
    return res
  }
  return { calls, fetch: f }
}

describe('getToken', () => {
  test('is called for the first token, once for calls made together, and its token is kept', async () => {
    const app = backend()
    const rec = recordingFetch()
    const client = createWishlistClient({ baseUrl: server.baseUrl, getToken: app.getToken, fetch: rec.fetch })
    await Promise.all([client.wishlist.add('me', { product_id: '1' }), client.lists.list('me'), client.wishlist.get('me')])
    expect(app.calls).toBe(1)
    await client.wishlist.get(CUSTOMER)
    expect(app.calls).toBe(1)
    const sent = new Set(rec.calls.map((c) => c.token))
    expect(sent.size).toBe(1)
    expect(await client.auth.currentToken()).toBe([...sent][0])
  })

  test('a call answered 401 TOKEN_EXPIRED gets a new token and is sent again, once', async () => {
    const app = backend()
    const rec = recordingFetch()
    const expired = await expiredToken()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { token: expired, storefrontKey: shop.storefrontKey },
      getToken: app.getToken,
      fetch: rec.fetch,
    })
    const added = await client.wishlist.add(CUSTOMER, { product_id: '42' })
    expect(added.item.productId).toBe('42')
    expect(app.calls).toBe(1)
    expect(rec.calls.map((c) => [c.path, c.status])).toEqual([
      [`POST /v1/wishlists/${CUSTOMER}/items`, 401],
      [`POST /v1/wishlists/${CUSTOMER}/items`, 201],
    ])
    expect(rec.calls[0]?.token).toBe(expired)
    expect(rec.calls[1]?.token).not.toBe(expired)
    // The renewed token is kept for the calls after.
    expect((await client.wishlist.get(CUSTOMER)).items.map((i) => i.productId)).toContain('42')
    expect(app.calls).toBe(1)
  })

  test('calls that fail together share one renewal', async () => {
    const app = backend()
    const rec = recordingFetch()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { token: await expiredToken() },
      getToken: app.getToken,
      fetch: rec.fetch,
    })
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => client.wishlist.add(CUSTOMER, { product_id: `5${i}` })))
    expect(results.map((r) => r.item.productId).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `5${i}`))
    expect(app.calls).toBe(1)
    expect(rec.calls.filter((c) => c.status === 401)).toHaveLength(6)
    expect(rec.calls.filter((c) => c.status === 201)).toHaveLength(6)
  })

  test('a call whose 401 arrives after another call renewed the token uses that token', async () => {
    const app = backend()
    const expired = await expiredToken()
    let release!: () => void
    const renewedCallDone = new Promise<void>((resolve) => (release = resolve))
    let expiredAnswers = 0
    const statuses: number[] = []
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { token: expired },
      getToken: app.getToken,
      // The second 401 is handed over only once a call with the renewed token has succeeded.
      fetch: async (input, init) => {
        const res = await fetch(input, init)
        const sentExpired = (init?.headers as Record<string, string>).authorization === `Bearer ${expired}`
        if (sentExpired && ++expiredAnswers === 2) await renewedCallDone
        if (!sentExpired && res.ok) release()
        statuses.push(res.status)
        return res
      },
    })
    const [page, lists] = await Promise.all([client.wishlist.get(CUSTOMER), client.lists.list(CUSTOMER)])
    expect(page.total).toBeGreaterThanOrEqual(0)
    expect(lists.wishlists[0]?.wishlistId).toBe('default')
    expect(statuses).toEqual([401, 200, 401, 200])
    expect(app.calls).toBe(1)
  })

  test('a second TOKEN_EXPIRED is the error of the call; no third attempt', async () => {
    let calls = 0
    const rec = recordingFetch()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { token: await expiredToken() },
      // A backend that keeps handing out an expired token.
      getToken: async () => {
        calls++
        return expiredToken()
      },
      fetch: rec.fetch,
    })
    const err = (await client.wishlist.get(CUSTOMER).catch((e: unknown) => e)) as WishlistApiError
    expect(isWishlistApiError(err, 'TOKEN_EXPIRED')).toBe(true)
    expect(err.status).toBe(401)
    expect(calls).toBe(1)
    expect(rec.calls.map((c) => c.status)).toEqual([401, 401])
  })

  test('other 401s (INVALID_TOKEN) are not renewed', async () => {
    const app = backend()
    const rec = recordingFetch()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { token: 'not-a-token' },
      getToken: app.getToken,
      fetch: rec.fetch,
    })
    const err = await client.wishlist.get(CUSTOMER).catch((e: unknown) => e)
    expect(isWishlistApiError(err, 'INVALID_TOKEN')).toBe(true)
    expect(app.calls).toBe(0)
    expect(rec.calls).toHaveLength(1)
  })

  test('a getToken that fails rejects the call with its error; the next call asks again', async () => {
    let fail = true
    const app = backend()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      getToken: () => {
        if (fail) throw new Error('backend down')
        return app.getToken()
      },
    })
    await expect(client.wishlist.get(CUSTOMER)).rejects.toThrow('backend down')
    fail = false
    expect((await client.wishlist.get(CUSTOMER)).total).toBeGreaterThanOrEqual(0)
    expect(app.calls).toBe(1)
  })

  test('goes with a storefront key or a first token, not with API keys, a token function or a guest id', () => {
    const getToken = () => 'x'
    const baseUrl = server.baseUrl
    expect(() => createWishlistClient({ baseUrl, credentials: { apiKey: shop.keyId, apiSecret: shop.secret }, getToken })).toThrow(
      TypeError,
    )
    expect(() => createWishlistClient({ baseUrl, credentials: { token: () => 'y' }, getToken })).toThrow(TypeError)
    expect(() =>
      createWishlistClient({ baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId: 'g_abcdefgh' }, getToken }),
    ).toThrow(TypeError)
    expect(() => createWishlistClient({ baseUrl, credentials: { storefrontKey: shop.storefrontKey }, getToken })).not.toThrow()
  })
})

describe('API-key credentials', () => {
  test('calls refused together with an expired minted token share one new token', async () => {
    // The admin token the client minted expires early (as on a server whose clock runs ahead):
    // the first send of each call carries an expired token of the same key.
    const expired = await forgeToken(
      { sub: `key:${shop.keyId}`, shop: shop.id, kid: shop.keyId, scope: 'admin' },
      { exp: Math.floor(Date.now() / 1000) - 60 },
    )
    let exchanges = 0
    let spoiled = 0
    let release!: () => void
    const retrySucceeded = new Promise<void>((resolve) => (release = resolve))
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret },
      fetch: async (input, init) => {
        const path = new URL(String(input)).pathname
        if (path === '/v1/auth/token') {
          exchanges++
          return fetch(input, init)
        }
        if (spoiled >= 4) {
          const res = await fetch(input, init)
          if (res.ok) release()
          return res
        }
        const n = ++spoiled
        const res = await fetch(input, {
          ...init,
          headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${expired}` },
        })
        // Two of the refusals come back only after a call was repeated with the new token.
        if (n > 2) await retrySucceeded
        return res
      },
    })
    const results = await Promise.all([client.admin.shop(), client.admin.shop(), client.admin.apiKeys(), client.admin.shop()])
    expect(results).toHaveLength(4)
    expect(spoiled).toBe(4)
    expect(exchanges).toBe(2)
  })
})
