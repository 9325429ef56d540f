import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createGuestId, createWishlistClient, isWishlistApiError, WishlistApiError } from '../src/index.js'
import { type RunningServer, startServer, type TestShop } from './helpers/server.js'

let server: RunningServer
let shop: TestShop

beforeAll(async () => {
  server = await startServer()
  shop = await server.createShop('scale', { multi_wishlist_enabled: true, reviews_auto_approve: true })
})
afterAll(() => server.close())

/** A fetch that records every request path. */
function recordingFetch() {
  const calls: string[] = []
  const f: typeof fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    calls.push(`${init?.method ?? 'GET'} ${url.pathname}`)
    return fetch(input, init)
  }
  return { calls, fetch: f }
}

describe('credentials', () => {
  test('API key: mints an admin token once and uses it for admin endpoints', async () => {
    const rec = recordingFetch()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret },
      fetch: rec.fetch,
    })
    const [me, keys] = await Promise.all([client.admin.shop(), client.admin.apiKeys()])
    expect(me.domain).toBe(shop.domain)
    expect(me.storefrontKey).toBe(shop.storefrontKey)
    expect(keys.apiKeys.map((k) => k.keyId)).toContain(shop.keyId)
    expect(rec.calls.filter((c) => c === 'POST /v1/auth/token')).toHaveLength(1)
  })

  test('refreshes the token before expires_in runs out', async () => {
    const rec = recordingFetch()
    let clock = Date.now()
    const client = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret },
      fetch: rec.fetch,
      now: () => clock,
    })
    const first = await client.auth.currentToken()
    await client.admin.shop()
    expect(await client.auth.currentToken()).toBe(first)
    clock += (86_400 - 600) * 1000 // ten minutes before expiry: still valid
    await client.admin.shop()
    expect(rec.calls.filter((c) => c === 'POST /v1/auth/token')).toHaveLength(1)
    clock += 400 * 1000 // inside the refresh window (300 s before expiry)
    await client.admin.shop()
    expect(rec.calls.filter((c) => c === 'POST /v1/auth/token')).toHaveLength(2)
    expect(await client.auth.currentToken()).not.toBe(first)
  })

  test('customer credentials mint a customer token; the token exchange is typed', async () => {
    const client = createWishlistClient({ baseUrl: server.baseUrl })
    const res = await client.auth.token({ api_key: shop.keyId, api_secret: shop.secret, customer_id: '4242' })
    expect(res.scope).toBe('customer')
    expect(res.token_type).toBe('Bearer')
    expect(res.expires_in).toBeGreaterThan(0)
    const customer = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret, customerId: '4242' },
    })
    const err = await customer.admin.shop().catch((e: unknown) => e)
    expect(isWishlistApiError(err, 'FORBIDDEN')).toBe(true)
  })

  test('wrong secret: WishlistApiError with code, status and message', async () => {
    const client = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: shop.keyId, apiSecret: 'sk_wrong' } })
    const err = await client.admin.shop().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(WishlistApiError)
    const e = err as WishlistApiError
    expect(e.code).toBe('INVALID_CREDENTIALS')
    expect(e.status).toBe(401)
    expect(e.requestId).toMatch(/^req_/)
  })

  test('validation errors carry details', async () => {
    const client = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: shop.keyId, apiSecret: shop.secret } })
    const err = (await client.admin.updateSettings({ share_link_ttl_days: 0 }).catch((e: unknown) => e)) as WishlistApiError
    expect(err.code).toBe('VALIDATION_ERROR')
    expect(err.status).toBe(400)
    expect(Array.isArray(err.details)).toBe(true)
  })

  test('admin round trip: settings, api keys, storefront key rotation', async () => {
    const other = await server.createShop('growth')
    const client = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: other.keyId, apiSecret: other.secret } })
    const settings = await client.admin.updateSettings({ share_link_ttl_days: 7 })
    expect(settings.share_link_ttl_days).toBe(7)
    const created = await client.admin.createApiKey({ name: 'sdk test', scope: 'customer' })
    expect(created.secret).toMatch(/^sk_/)
    expect(await client.admin.deleteApiKey(created.keyId)).toEqual({ deleted: true })
    const rotated = await client.admin.rotateStorefrontKey()
    expect(rotated.storefrontKey).toMatch(/^sfk_/)
    expect(rotated.storefrontKey).not.toBe(other.storefrontKey)
  })
})

describe('retries', () => {
  test('429 with a Retry-After beyond the bound fails at once, carrying retryAfter', async () => {
    const limited = await startServer({ RATE_LIMIT_STOREFRONT_PER_MIN: '1' })
    try {
      const s = await limited.createShop()
      const rec = recordingFetch()
      const client = createWishlistClient({ baseUrl: limited.baseUrl, fetch: rec.fetch, retry: { maxDelayMs: 2_000 } })
      await client.auth.token({ api_key: s.keyId, api_secret: s.secret })
      const err = (await client.auth.token({ api_key: s.keyId, api_secret: s.secret }).catch((e: unknown) => e)) as WishlistApiError
      expect(err.code).toBe('RATE_LIMITED')
      expect(err.status).toBe(429)
      expect(err.retryAfter).toBeGreaterThan(2)
      expect(rec.calls).toHaveLength(2) // no retry: Retry-After is longer than maxDelayMs
    } finally {
      await limited.close()
    }
  })

  test('retries 429 and 503 honouring Retry-After, never other statuses', async () => {
    const answers = [
      new Response(JSON.stringify({ ok: false, error: { code: 'UNAVAILABLE', message: 'db' } }), {
        status: 503,
        headers: { 'retry-after': '1' },
      }),
      new Response(JSON.stringify({ ok: false, error: { code: 'RATE_LIMITED', message: 'slow' } }), { status: 429 }),
      new Response(JSON.stringify({ ok: true, data: { storefrontKey: 'sfk_x' } }), { status: 200 }),
    ]
    const sleeps: number[] = []
    const client = createWishlistClient({
      baseUrl: 'http://example.invalid',
      credentials: { token: 't' },
      fetch: async () => answers.shift() as Response,
      sleep: async (ms) => void sleeps.push(ms),
      retry: { baseDelayMs: 100 },
    })
    expect(await client.admin.rotateStorefrontKey()).toEqual({ storefrontKey: 'sfk_x' })
    expect(sleeps[0]).toBe(1000)
    expect(sleeps[1]).toBeGreaterThanOrEqual(100) // second attempt: 100 ms × 2¹ with full jitter
    expect(sleeps[1]).toBeLessThanOrEqual(200)

    let calls = 0
    const failing = createWishlistClient({
      baseUrl: 'http://example.invalid',
      credentials: { token: 't' },
      fetch: async () => {
        calls++
        return new Response(JSON.stringify({ ok: false, error: { code: 'INTERNAL_ERROR', message: 'boom' } }), { status: 500 })
      },
      sleep: async () => {},
    })
    const err = (await failing.admin.shop().catch((e: unknown) => e)) as WishlistApiError
    expect(err.code).toBe('INTERNAL_ERROR')
    expect(calls).toBe(1)

    let busy = 0
    const bounded = createWishlistClient({
      baseUrl: 'http://example.invalid',
      fetch: async () => {
        busy++
        return new Response('{}', { status: 503 })
      },
      sleep: async () => {},
      retry: { retries: 2 },
    })
    const e2 = (await bounded.admin.shop().catch((e: unknown) => e)) as WishlistApiError
    expect(e2.status).toBe(503)
    expect(e2.code).toBe('HTTP_ERROR')
    expect(busy).toBe(3)
  })

  test('network failures become NETWORK_ERROR', async () => {
    const client = createWishlistClient({ baseUrl: 'http://127.0.0.1:1' })
    const err = (await client.share.read('nope').catch((e: unknown) => e)) as WishlistApiError
    expect(err.code).toBe('NETWORK_ERROR')
    expect(err.status).toBe(0)
  })
})

describe('wishlists', () => {
  test('createGuestId: 128 random bits the server accepts as a guest id', async () => {
    const ids = Array.from({ length: 1000 }, createGuestId)
    for (const id of ids) expect(id).toMatch(/^g_[0-9a-f]{32}$/)
    expect(new Set(ids).size).toBe(ids.length)
    // Every hex digit turns up in every position: the bits are not biased towards some.
    for (let i = 2; i < 34; i++) expect(new Set(ids.map((id) => id[i])).size).toBe(16)
    const guestId = ids[0] as string
    const guest = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    expect((await guest.wishlist.add(guestId, { product_id: '100' })).item.productId).toBe('100')
  })

  test('guest mode: add, read, remove; customer: merge the guest list', async () => {
    const guestId = 'g_sdk_guest_0001'
    const guest = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    const added = await guest.wishlist.add(guestId, { product_id: '101', handle: 'red-shoe' })
    expect(added.item.productId).toBe('101')
    await guest.wishlist.add('me', { product_id: '102' })
    const page = await guest.wishlist.get(guestId)
    expect(page.items.map((i) => i.productId)).toEqual(['102', '101'])
    expect(page.total).toBe(2)
    expect((await guest.wishlist.remove(guestId, 'red-shoe', { by: 'handle' })).removed).toBe(true)

    const customer = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret, customerId: '777' },
    })
    const merged = await customer.wishlist.merge('777', { guest_items: [{ product_id: '103' }], guest_id: guestId })
    expect(merged.items.map((i) => i.productId).sort()).toEqual(['102', '103'])
  })

  test('lists, move, share and the public shared read', async () => {
    const customer = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret, customerId: '888' },
    })
    const { wishlist } = await customer.lists.create('888', 'Birthday')
    await customer.wishlist.add('888', { product_id: '201' })
    expect((await customer.wishlist.move('888', { product_id: '201', from: 'default', to: wishlist.wishlistId })).moved).toBe(true)
    const lists = await customer.lists.list('888')
    expect(lists.wishlists.map((l) => l.wishlistId)).toEqual(['default', wishlist.wishlistId])
    const err = (await customer.wishlist
      .move('888', { product_id: '201', from: 'default', to: wishlist.wishlistId })
      .catch((e: unknown) => e)) as WishlistApiError
    expect(err.status).toBe(400)
    const link = await customer.share.get('888', { wishlistId: wishlist.wishlistId })
    const token = link.share_url.split('/').pop() ?? ''
    const shared = await createWishlistClient({ baseUrl: server.baseUrl }).share.read(token)
    expect(shared.items.map((i) => i.productId)).toEqual(['201'])
    expect((await customer.share.revoke('888', { wishlistId: wishlist.wishlistId })).revoked).toBe(true)
    expect(((await customer.share.read(token).catch((e: unknown) => e)) as WishlistApiError).code).toBe('NOT_FOUND')
  })

  test('wishlist.get picks the list by wishlistId; the deprecated wishlist_id still works; merge takes wishlistId', async () => {
    const customer = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { apiKey: shop.keyId, apiSecret: shop.secret, customerId: '889' },
    })
    const { wishlist } = await customer.lists.create('889', 'Holidays')
    await customer.wishlist.add('889', { product_id: '301' }, { wishlistId: wishlist.wishlistId })
    await customer.wishlist.add('889', { product_id: '302' }, { wishlistId: wishlist.wishlistId })
    await customer.wishlist.add('889', { product_id: '309' })

    const named = await customer.wishlist.get('889', { wishlistId: wishlist.wishlistId, limit: 1, offset: 1 })
    expect(named.items.map((i) => i.productId)).toEqual(['301'])
    expect(named.total).toBe(2)
    const legacy = await customer.wishlist.get('889', { wishlist_id: wishlist.wishlistId, limit: 1, offset: 1 })
    expect(legacy).toEqual(named)
    expect(await customer.wishlist.get('889', { wishlistId: wishlist.wishlistId, wishlist_id: wishlist.wishlistId })).toMatchObject({
      total: 2,
    })
    expect((await customer.wishlist.get('889')).items.map((i) => i.productId)).toEqual(['309'])
    expect((await customer.wishlist.get('889', { wishlistId: 'default' })).items.map((i) => i.productId)).toEqual(['309'])
    expect(() => customer.wishlist.get('889', { wishlistId: wishlist.wishlistId, wishlist_id: 'default' })).toThrow(TypeError)

    const merged = await customer.wishlist.merge('889', { guest_items: [{ product_id: '303' }] }, { wishlistId: wishlist.wishlistId })
    expect(merged.items.map((i) => i.productId).sort()).toEqual(['301', '302', '303'])
    expect((await customer.wishlist.get('889')).total).toBe(1)
  })
})

describe('notifications', () => {
  test("contacts: the shopper's own with consent, the merchant's, and the channels' counts", async () => {
    const admin = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: shop.keyId, apiSecret: shop.secret } })
    const guestId = createGuestId()
    const guest = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey, guestId } })
    const consent_text = 'E-mail me when an item of my wishlist is back in stock.'
    const mine = await guest.wishlist.setContact(guestId, { email: 'Gia@Example.com', consent: true, consent_text })
    expect(mine).toMatchObject({ email: 'gia@example.com', source: 'shopper', consentText: consent_text })
    expect(await guest.wishlist.deleteContact(guestId)).toEqual({ deleted: true })
    const refused = await guest.wishlist.deleteContact(guestId).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(WishlistApiError)
    expect((refused as WishlistApiError).code).toBe('NOT_FOUND')

    expect(await admin.admin.setCustomerContact('424242', { email: 'ann@example.com' })).toMatchObject({ source: 'merchant' })
    const channels = await admin.admin.channels({ period: '7d' })
    expect(channels.period).toBe('7d')
    expect(channels.channels.find((c) => c.channel === 'klaviyo')).toMatchObject({ connected: false })
    const bad = await admin.admin.connectKlaviyo('not-a-key').catch((e: unknown) => e)
    expect((bad as WishlistApiError).code).toBe('VALIDATION_ERROR')
  })
})

describe('reviews', () => {
  test('submit, list, summary, helpful votes', async () => {
    const sf = createWishlistClient({
      baseUrl: server.baseUrl,
      credentials: { storefrontKey: shop.storefrontKey, guestId: 'g_sdk_voter_01' },
    })
    const created = await sf.reviews.submit({
      productId: '301',
      customerEmail: 'a@example.com',
      customerName: 'Ann',
      rating: 5,
      title: 'Great',
      body: 'Lovely',
    })
    expect(created.status).toBe('approved')
    const page = await sf.reviews.list('301', { sort: 'highest' })
    expect(page.data.map((r) => r.id)).toEqual([created.id])
    const summary = await sf.reviews.summary('301')
    expect(summary.reviewCount).toBe(1)
    expect((await sf.reviews.voteHelpful(created.id)).helpfulCount).toBe(1)
    expect((await sf.reviews.unvoteHelpful(created.id)).helpfulCount).toBe(0)
    const dup = (await sf.reviews
      .submit({ productId: '301', customerEmail: 'A@example.com', customerName: 'Ann', rating: 4, body: 'Again' })
      .catch((e: unknown) => e)) as WishlistApiError
    expect(dup.code).toBe('DUPLICATE_REVIEW')
    expect(dup.status).toBe(409)
  })
  test('review invitations: the admin list, the credential-free lookup and a verified review', async () => {
    const admin = createWishlistClient({ baseUrl: server.baseUrl, credentials: { apiKey: shop.keyId, apiSecret: shop.secret } })
    await admin.events.send({
      events: [
        {
          type: 'order.created',
          order_id: 'gid://shopify/Order/77',
          customer_id: '5150',
          email: 'inv@example.com',
          line_items: [{ product_id: '302' }],
        },
      ],
    })
    const { invitations } = await admin.admin.reviewInvitations({ order_id: '77' })
    expect(invitations).toHaveLength(1)
    const [invitation] = invitations
    expect(invitation).toMatchObject({ orderId: '77', customerId: '5150', email: 'inv@example.com', productId: '302', usedAt: null })
    const token = invitation?.token ?? ''
    expect(invitation?.reviewUrl.endsWith(`/reviews/new?invitation=${token}`)).toBe(true)

    const anonymous = createWishlistClient({ baseUrl: server.baseUrl })
    expect(await anonymous.reviews.invitation(token)).toEqual({ productId: '302', expiresAt: expect.any(String), usable: true })
    const sf = createWishlistClient({ baseUrl: server.baseUrl, credentials: { storefrontKey: shop.storefrontKey } })
    const created = await sf.reviews.submit({
      productId: '302',
      invitation: token,
      customerEmail: 'inv@example.com',
      customerName: 'Ivy',
      rating: 5,
      body: 'Fits.',
    })
    expect((await sf.reviews.get(created.id)).verifiedPurchase).toBe(true)
    expect((await anonymous.reviews.invitation(token)).usable).toBe(false)
    const again = (await sf.reviews
      .submit({ productId: '302', invitation: token, customerEmail: 'inv@example.com', customerName: 'Ivy', rating: 5, body: 'Again' })
      .catch((e: unknown) => e)) as WishlistApiError
    expect(again.code).toBe('VALIDATION_ERROR')
    const moderated = await admin.reviews.admin.list({ product_id: '302' })
    expect(moderated.data[0]).toMatchObject({ verifiedBy: 'invitation', customerId: '5150' })
  })
})
