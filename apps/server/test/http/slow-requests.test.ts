/**
 * Slow and large requests against a real listening server (raw sockets): a body that
 * stalls is answered 408 and its connection closed within REQUEST_TIMEOUT_MS; credentials are
 * checked before a byte of the body is read; callers without a bearer token may send 64 KiB
 * (256 KiB in guest mode on wishlist routes), chunked or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { portOf, rawRequest, requestHead } from '../helpers/raw-http.js'

const TIMEOUT_MS = 800
let t: TestApp
let port: number
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp({ env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } })
  port = portOf(await t.app.listen({ port: 0, host: '127.0.0.1' }))
  shop = await t.createShop('scale')
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const json = { 'content-type': 'application/json' }

describe('a body that does not arrive in time', () => {
  it('is answered 408 REQUEST_TIMEOUT and its connection closed, and the server goes on serving', async () => {
    const started = Date.now()
    const stalled = await rawRequest(
      port,
      requestHead('POST', '/v1/events', { ...json, authorization: `Bearer ${admin}`, 'content-length': 1_000_000 }),
      '{"events":[',
    )
    const res = await stalled.response
    expect(res.status).toBe(408)
    expect(JSON.parse(res.body)).toEqual({ ok: false, error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) } })
    await stalled.closed
    // The limit, plus at most one of Node's connection checks (a quarter of it), plus slack for a busy machine.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 1.25 + 1500)
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
    const after = await rawRequest(port, requestHead('GET', '/healthz', {}))
    expect((await after.response).status).toBe(200)
    after.socket.destroy()
  })

  it("under /api answers in the reviews interface's shape", async () => {
    const stalled = await rawRequest(
      port,
      requestHead('POST', '/api/v1/reviews', { ...json, 'x-storefront-key': shop.storefrontKey, 'content-length': 1000 }),
      '{"productId":',
    )
    const res = await stalled.response
    expect(res.status).toBe(408)
    expect(JSON.parse(res.body)).toEqual({ error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) } })
  })
})

describe('credentials are checked before the body is read', () => {
  it('a wrong bearer token or storefront key is refused at once, the body never awaited', async () => {
    const attempts: Record<string, string>[] = [
      { authorization: 'Bearer not-a-token' },
      { 'x-storefront-key': 'sfk_unknown', 'x-guest-id': 'g_slow_guest_1' },
    ]
    for (const headers of attempts) {
      const started = Date.now()
      const ex = await rawRequest(port, requestHead('POST', '/v1/wishlists/me/items', { ...json, ...headers, 'content-length': 200_000 }))
      const res = await ex.response
      expect(res.status).toBe(401)
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS)
      ex.socket.destroy()
    }
  })
})

describe('body limits by caller', () => {
  const big = (bytes: number) => JSON.stringify({ api_key: 'ak_x', api_secret: 'x'.repeat(bytes) })

  it('the token exchange (credentials in the body) reads at most 64 KiB', async () => {
    const small = await t.inject({ method: 'POST', url: '/v1/auth/token', headers: json, payload: big(60 * 1024) })
    expect(small.statusCode).not.toBe(413)
    const large = await t.inject({ method: 'POST', url: '/v1/auth/token', headers: json, payload: big(70 * 1024) })
    expect(large.statusCode).toBe(413)
    expect(large.json().error.code).toBe('PAYLOAD_TOO_LARGE')
  })

  it('the storefront key reads 64 KiB (public reviews), guest mode 256 KiB on wishlist routes, bearer tokens 1 MiB', async () => {
    const review = (bytes: number) => ({
      productId: '1',
      customerEmail: 'a@example.com',
      customerName: 'A',
      rating: 5,
      body: 'x'.repeat(bytes),
    })
    const storefront = { 'x-storefront-key': shop.storefrontKey }
    expect(
      (await t.inject({ method: 'POST', url: '/api/v1/reviews', headers: { ...json, ...storefront }, payload: review(70 * 1024) }))
        .statusCode,
    ).toBe(413)
    const guest = shop.guest('g_body_limit_guest')
    const item = (bytes: number) => ({ product_id: '1', handle: 'h', metadata: { pad: 'x'.repeat(bytes) } })
    // Under 256 KiB a guest's body is read (and then refused by its schema: metadata is small).
    expect(
      (await t.inject({ method: 'POST', url: '/v1/wishlists/me/items', headers: { ...json, ...guest }, payload: item(200 * 1024) }))
        .statusCode,
    ).toBe(400)
    expect(
      (await t.inject({ method: 'POST', url: '/v1/wishlists/me/items', headers: { ...json, ...guest }, payload: item(300 * 1024) }))
        .statusCode,
    ).toBe(413)
    expect(
      (
        await t.inject({
          method: 'POST',
          url: '/v1/wishlists/77/items',
          headers: { ...json, authorization: `Bearer ${admin}` },
          payload: item(300 * 1024),
        })
      ).statusCode,
    ).toBe(400)
  })

  it("a chunked body (no Content-Length) is cut off at the caller's limit", async () => {
    const ex = await rawRequest(port, requestHead('POST', '/v1/auth/token', { ...json, 'transfer-encoding': 'chunked' }))
    const chunk = Buffer.alloc(16 * 1024, 'x')
    for (let i = 0; i < 6; i++) ex.socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`)
    const res = await ex.response
    expect(res.status).toBe(413)
    ex.socket.destroy()
  })
})
