/**
 * Review invitations end to end: `order.created` → an invitation per product, listed for the
 * merchant and sent as the signed `review.requested` webhook → a review submitted with it is
 * verified and linked to the order's customer; used, expired and foreign invitations refused.
 */
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

let t: TestApp
let shop: TestShop
let other: TestShop
let admin: string
let receiver: Receiver
let secret: string
let seq = 0

const DAY = 86_400_000
const sf = (s: TestShop = shop) => ({ 'x-storefront-key': s.storefrontKey })
const nextProduct = () => String(8_100_000 + ++seq)
const review = (over: Record<string, unknown>) => ({
  customerEmail: `writer${++seq}@example.com`,
  customerName: 'Buyer',
  rating: 5,
  body: 'Arrived quickly.',
  ...over,
})
const submit = (body: unknown, headers: Record<string, string> = sf()) => t.call('POST', '/api/v1/reviews', { headers, body })
const lookup = (token: string) => t.call('GET', `/api/v1/review-invitations/${token}`)
const invitations = async (query: string, token = admin): Promise<Array<Record<string, string | null>>> => {
  const res = await t.call('GET', `/v1/admin/review-invitations?${query}`, { token })
  expect(res.status).toBe(200)
  return res.body.data.invitations as Array<Record<string, string | null>>
}
const order = async (event: Record<string, unknown>, s: TestShop = shop) => {
  const res = await t.call('POST', '/v1/events', { token: await s.adminToken(), body: { events: [{ type: 'order.created', ...event }] } })
  expect(res.status).toBe(200)
}
const asAdmin = async (id: number) => (await t.call('GET', `/api/v1/reviews/${id}`, { token: admin })).body

beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_POLL_INTERVAL_MS: '20' }, worker: true })
  shop = await t.createShop('free', { reviews_auto_approve: true })
  other = await t.createShop('free', { reviews_auto_approve: true })
  admin = await shop.adminToken()
  receiver = await startReceiver()
  const hook = await t.call('POST', '/v1/webhooks', { token: admin, body: { url: `${receiver.url}/hook`, events: ['review.requested'] } })
  expect(hook.status).toBe(201)
  secret = hook.body.data.secret
})
afterAll(async () => {
  await t.close()
  await receiver.close()
})

describe('order.created → invitations', () => {
  it('invites per product of the order, lists them, sends each as a signed review.requested, and verifies the review written with one', async () => {
    const [p1, p2] = [nextProduct(), nextProduct()]
    const before = Date.now()
    await order({
      order_id: 'gid://shopify/Order/5001',
      customer_id: '801',
      email: 'Buyer801@Example.com',
      line_items: [{ product_id: p1 }, { product_id: `gid://shopify/Product/${p2}` }, { product_id: p1, variant_id: '9' }],
    })

    const listed = await invitations('order_id=5001')
    expect(listed).toHaveLength(2)
    expect(listed.map((i) => i.productId).sort()).toEqual([p1, p2].sort())
    for (const inv of listed) {
      expect(inv).toEqual({
        token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/), // 192 random bits
        orderId: '5001',
        customerId: '801',
        email: 'buyer801@example.com',
        productId: expect.any(String),
        reviewUrl: `http://wishlist.test/reviews/new?invitation=${inv.token}`,
        expiresAt: expect.any(String),
        usedAt: null,
      })
      const expires = Date.parse(inv.expiresAt as string)
      expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 90 * DAY)
      expect(expires).toBeLessThanOrEqual(Date.now() + 90 * DAY)
    }
    expect(await invitations('order_id=gid%3A%2F%2Fshopify%2FOrder%2F5001')).toEqual(listed)
    expect(await invitations('email=BUYER801@example.com')).toEqual(listed)
    expect(await invitations('order_id=5001&email=someone@example.com')).toEqual([])

    // The webhook carries the same fields, signed as Standard Webhooks.
    const hits = await receiver.waitFor(2, (r) => r.body.includes('"review.requested"') && r.body.includes('"5001"'))
    const sent = hits.map(
      (h) =>
        new Webhook(secret).verify(h.body, h.headers as Record<string, string>) as { event: string; shopDomain: string; data: unknown },
    )
    for (const body of sent) expect(body).toMatchObject({ event: 'review.requested', shopDomain: shop.domain })
    expect(sent.map((b) => b.data).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      [...listed].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    )

    // The storefront builds its form from the link, with no credentials and nothing about the buyer.
    const inv = listed.find((i) => i.productId === p1) as { token: string; expiresAt: string }
    const look = await lookup(inv.token)
    expect(look.status).toBe(200)
    expect(look.body).toEqual({ productId: p1, expiresAt: (inv.expiresAt as string).replace('.000Z', 'Z'), usable: true })

    // Storefront key and the invitation: verified, linked to the order's customer.
    const res = await submit(review({ productId: p1, invitation: inv.token }))
    expect(res.status).toBe(201)
    expect(await asAdmin(res.body.id)).toMatchObject({ verifiedPurchase: true, verifiedBy: 'invitation', customerId: '801' })
    expect((await t.call('GET', `/api/v1/products/${p1}/reviews/summary`, { headers: sf() })).body.verifiedCount).toBe(1)
    expect((await lookup(inv.token)).body.usable).toBe(false)
    expect((await invitations('order_id=5001')).find((i) => i.token === inv.token)?.usedAt).toEqual(expect.any(String))

    // Single use.
    const again = await submit(review({ productId: p1, invitation: inv.token }))
    expect(again.status).toBe(400)
    expect(again.body).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: expect.any(String),
        details: [{ path: 'body.invitation', message: 'has already been used' }],
      },
    })
  })

  it("verifies a guest-checkout buyer's review, linked to nobody", async () => {
    const p = nextProduct()
    await order({ order_id: '5002', email: 'guest-buyer@example.com', line_items: [{ product_id: p }] })
    const [inv] = await invitations('order_id=5002')
    expect(inv).toMatchObject({ customerId: null, email: 'guest-buyer@example.com', productId: p })
    const res = await submit(review({ productId: p, customerEmail: 'guest-buyer@example.com', invitation: inv?.token }))
    expect(res.status).toBe(201)
    expect(await asAdmin(res.body.id)).toMatchObject({ verifiedPurchase: true, verifiedBy: 'invitation', customerId: null })
  })

  it('invites nobody again when the same order is delivered twice', async () => {
    const p = nextProduct()
    const event = { order_id: '5003', customer_id: '803', line_items: [{ product_id: p }] }
    await order(event)
    await order(event)
    expect(await invitations('order_id=5003')).toHaveLength(1)
  })

  it('refuses an order_id that is neither digits nor an order GID', async () => {
    const res = await t.call('POST', '/v1/events', {
      token: admin,
      body: {
        events: [{ type: 'order.created', order_id: 'gid://shopify/Product/1', customer_id: '1', line_items: [{ product_id: '1' }] }],
      },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.details[0]).toMatchObject({ path: 'body.events.0.order_id', index: 0 })
  })
})

describe('refused invitations (400 VALIDATION_ERROR)', () => {
  const invitationFor = async (orderId: string, s: TestShop = shop, customer = '810') => {
    const p = nextProduct()
    await order({ order_id: orderId, customer_id: customer, line_items: [{ product_id: p }] }, s)
    const [inv] = await invitations(`order_id=${orderId}`, await s.adminToken())
    return { p, token: inv?.token as string }
  }
  const refusal = (path: string, message: string) => ({
    error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: [{ path, message }] },
  })

  it('refuses an expired invitation', async () => {
    const { p, token } = await invitationFor('6001')
    await t.storage.db
      .updateTable('review_invitations')
      .set({ expires_at: Date.now() - 1000 })
      .where('token', '=', token)
      .execute()
    expect((await lookup(token)).body.usable).toBe(false)
    const res = await submit(review({ productId: p, invitation: token }))
    expect(res.status).toBe(400)
    expect(res.body).toEqual(refusal('body.invitation', 'has expired'))
  })

  it("refuses another shop's invitation", async () => {
    const { p, token } = await invitationFor('6002', other)
    const res = await submit(review({ productId: p, invitation: token }))
    expect(res.status).toBe(400)
    expect(res.body).toEqual(refusal('body.invitation', 'is not a review invitation of this shop'))
    // Its own shop takes it.
    expect((await submit(review({ productId: p, invitation: token }), sf(other))).status).toBe(201)
  })

  it('refuses an unknown or malformed token', async () => {
    const p = nextProduct()
    const unknown = await submit(review({ productId: p, invitation: 'A'.repeat(32) }))
    expect(unknown.body).toEqual(refusal('body.invitation', 'is not a review invitation of this shop'))
    const malformed = await submit(review({ productId: p, invitation: 'not a token!' }))
    expect(malformed.status).toBe(400)
    expect(malformed.body.error.details).toEqual([expect.objectContaining({ path: 'body.invitation' })])
    expect((await lookup('A'.repeat(32))).body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } })
    expect((await lookup('short')).status).toBe(400)
  })

  it('refuses another product, and a duplicate, leaving the invitation usable', async () => {
    const { p, token } = await invitationFor('6003', shop, '811')
    const wrong = await submit(review({ productId: nextProduct(), invitation: token }))
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual(refusal('body.productId', `must be the invited product (${p})`))
    // The customer reviewed the product already with its own token: one review per product per customer.
    const own = await submit(review({ productId: p }), { ...sf(), authorization: `Bearer ${await shop.customerToken('811')}` })
    expect(own.status).toBe(201)
    const dup = await submit(review({ productId: p, invitation: token }))
    expect(dup.status).toBe(409)
    expect(dup.body.error.code).toBe('DUPLICATE_REVIEW')
    expect((await lookup(token)).body.usable).toBe(true)
  })
})

describe('GET /v1/admin/review-invitations', () => {
  it('is for admin tokens only and validates its query', async () => {
    expect((await t.call('GET', '/v1/admin/review-invitations')).status).toBe(401)
    expect((await t.call('GET', '/v1/admin/review-invitations', { headers: sf() })).status).toBe(403)
    expect((await t.call('GET', '/v1/admin/review-invitations', { token: await shop.customerToken('801') })).status).toBe(403)
    const bad = await t.call('GET', '/v1/admin/review-invitations?order_id=abc', { token: admin })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } })
    expect((await t.call('GET', '/v1/admin/review-invitations?limit=501', { token: admin })).status).toBe(400)
    // Another shop's admin sees none of this shop's invitations.
    expect(await invitations('order_id=5001', await other.adminToken())).toEqual([])
  })
})
