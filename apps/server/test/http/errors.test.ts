import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { openStorage } from '../../src/db/connect.js'
import { createTestApp, testConfig, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('scale')
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const patch = (payload: string, contentType = 'application/json') =>
  t.inject({
    method: 'PATCH',
    url: '/v1/admin/settings',
    headers: { authorization: `Bearer ${admin}`, 'content-type': contentType },
    payload,
  })

describe('error envelope', () => {
  it('400 INVALID_JSON for a body that is not JSON', async () => {
    const res = await patch('{"reviews_auto_approve": tru')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ ok: false, error: { code: 'INVALID_JSON', message: expect.any(String) } })
  })

  it('400 INVALID_JSON for an empty JSON body', async () => {
    const res = await patch('')
    expect(res.statusCode).toBe(400)
    expect(res.json().error.code).toBe('INVALID_JSON')
  })

  it('answers requests the HTTP parser refuses (431, malformed) in the documented shape', async () => {
    const base = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }))
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(base.port), base.hostname, () => socket.end(request))
        let text = ''
        socket.on('data', (chunk) => (text += chunk.toString('latin1')))
        socket.on('close', () => resolve(text))
        socket.on('error', reject)
      })
    const parse = (text: string) => ({ status: Number(text.split(' ')[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) })
    const big = parse(await raw(`GET /v1/wishlists/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
    expect(big).toEqual({ status: 431, body: { ok: false, error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String) } } })
    const bigApi = parse(await raw(`GET /api/v1/reviews/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
    expect(bigApi).toEqual({ status: 431, body: { error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String) } } })
    const malformed = parse(await raw('POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'))
    expect(malformed).toEqual({
      status: 400,
      body: { ok: false, error: { code: 'VALIDATION_ERROR', message: 'The HTTP request is malformed' } },
    })
  })

  it('names the allowed values once for a value outside a fixed set', async () => {
    const period = await t.call('GET', '/v1/analytics/overview?period=5d', { token: admin })
    expect(period.body.error.details).toEqual([{ path: 'query.period', message: 'must be one of: 7d, 14d, 30d, 90d, 1y, all' }])
    const events = await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: 'https://hooks.example.com/x', events: ['wishlist.shared', 'nope'] },
    })
    expect(events.body.error.details).toEqual([
      { path: 'body.events.1', message: expect.stringMatching(/^must be one of: wishlist\.item\.added, /), index: 1 },
    ])
    const sort = await t.call('GET', '/api/v1/products/1/reviews?sort=best', { token: admin })
    expect(sort.body.error.details).toEqual([
      { path: 'query.sort', message: 'must be one of: newest, oldest, highest, lowest, most_helpful' },
    ])
  })

  it('names the failing element of each batch its route declares (`index`)', async () => {
    const ids = await t.call('POST', '/v1/wishlists/1/items/bulk-delete', { token: admin, body: { product_ids: ['1', 'x'] } })
    expect(ids.body.error.details).toEqual([
      { path: 'body.product_ids.1', message: expect.stringMatching(/^must match pattern/), index: 1 },
    ])
    const handles = await t.call('POST', '/v1/wishlists/1/items/bulk-delete', { token: admin, body: { handles: ['a', 'b', ''] } })
    expect(handles.body.error.details).toEqual([{ path: 'body.handles.2', message: 'must NOT have fewer than 1 characters', index: 2 }])
    const photos = await t.call('POST', '/api/v1/reviews', {
      headers: { 'x-storefront-key': shop.storefrontKey },
      body: {
        productId: '1',
        customerEmail: 'a@example.com',
        customerName: 'Ann',
        rating: 5,
        body: 'Good',
        photos: ['https://cdn.example.com/a.jpg', 7],
      },
    })
    expect(photos.body.error.details).toEqual([{ path: 'body.photos.1', message: 'must be string', index: 1 }])
  })

  it('ignores a Content-Type sent with an empty body on a route that takes no body', async () => {
    const auth = { authorization: `Bearer ${admin}` }
    for (const type of ['application/json', 'text/plain']) {
      const del = await t.inject({
        method: 'DELETE',
        url: '/v1/wishlists/1/items/3',
        headers: { ...auth, 'content-type': type },
        payload: '',
      })
      expect(del.json()).toEqual({ ok: true, data: { removed: false, count: 0 } })
      const rotate = await t.inject({
        method: 'POST',
        url: '/v1/admin/storefront-key/rotate',
        headers: { ...auth, 'content-type': type },
        payload: '',
      })
      expect(rotate.statusCode).toBe(200)
    }
    const withBody = await t.inject({
      method: 'DELETE',
      url: '/v1/wishlists/1/items/3',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'x',
    })
    expect(withBody.statusCode).toBe(415)
    const review = await t.inject({
      method: 'DELETE',
      url: '/api/v1/reviews/999999',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '',
    })
    expect(review.json()).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } })
  })

  it('415 UNSUPPORTED_MEDIA_TYPE for a body that is not application/json', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await patch('reviews_auto_approve=true', type)
      expect(res.statusCode).toBe(415)
      expect(res.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
    }
  })

  it('413 PAYLOAD_TOO_LARGE for a body over 1 MiB', async () => {
    const res = await patch(JSON.stringify({ reviews_auto_approve: true, pad: 'x'.repeat(1024 * 1024) }))
    expect(res.statusCode).toBe(413)
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE')
  })

  it('400 VALIDATION_ERROR with details for a schema failure, nothing written', async () => {
    const res = await patch(JSON.stringify({ share_link_ttl_days: 0 }))
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: [{ path: 'body.share_link_ttl_days', message: expect.any(String) }],
    })
    const wrongType = await patch(JSON.stringify({ reviews_auto_approve: 'true' }))
    expect(wrongType.statusCode).toBe(400)
    const unknown = await patch(JSON.stringify({ multi_wishlist: true }))
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error.details[0].path).toBe('body.multi_wishlist')
    const view = await t.call('GET', '/v1/admin/shop', { token: admin })
    expect(view.body.data.settings).toEqual({
      multi_wishlist_enabled: false,
      reviews_auto_approve: false,
      share_link_ttl_days: 30,
      remove_on_purchase: false,
      attribution_window_days: 30,
      notification_cooldown_hours: 24,
      notifications_per_day: 3,
      reminder_after_days: 7,
      currency: null,
      storefront_strings: null,
    })
  })

  it('applies a valid settings patch and returns the full settings object', async () => {
    const res = await patch(JSON.stringify({ share_link_ttl_days: 7, remove_on_purchase: true }))
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      ok: true,
      data: {
        multi_wishlist_enabled: false,
        reviews_auto_approve: false,
        share_link_ttl_days: 7,
        remove_on_purchase: true,
        attribution_window_days: 30,
        notification_cooldown_hours: 24,
        notifications_per_day: 3,
        reminder_after_days: 7,
        currency: null,
        storefront_strings: null,
      },
    })
  })

  it('404 NOT_FOUND for an unknown route and for an unknown API key', async () => {
    const route = await t.call('GET', '/v1/nothing-here')
    expect(route.status).toBe(404)
    expect(route.body).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: expect.any(String) } })
    const key = await t.call('DELETE', '/v1/admin/api-keys/ak_missing', { token: admin })
    expect(key.status).toBe(404)
    expect(key.body.error.code).toBe('NOT_FOUND')
  })

  it('405 METHOD_NOT_ALLOWED with Allow for a method the path does not have; an unknown path stays 404', async () => {
    const res = await t.inject({ method: 'PUT', url: '/v1/admin/api-keys', headers: { authorization: `Bearer ${admin}` } })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD, POST')
    expect(res.json()).toEqual({
      ok: false,
      error: { code: 'METHOD_NOT_ALLOWED', message: 'PUT is not allowed on /v1/admin/api-keys; allowed: GET, HEAD, POST' },
    })
    // A path with parameters, with a trailing slash, and the reviews interface's shape.
    const webhook = await t.inject({ method: 'GET', url: '/v1/webhooks/wh_123/' })
    expect([webhook.statusCode, webhook.headers.allow]).toEqual([405, 'DELETE'])
    const review = await t.inject({ method: 'PATCH', url: '/api/v1/reviews/1?x=1' })
    expect([review.statusCode, review.headers.allow, review.json().error.code]).toEqual([405, 'DELETE, GET, HEAD', 'METHOD_NOT_ALLOWED'])
    expect(review.json().ok).toBeUndefined()
    // Unknown paths, whatever the method, and OPTIONS without a preflight.
    for (const [method, url] of [
      ['PUT', '/v1/nothing-here'],
      ['GET', '/v1/nothing-here'],
      ['DELETE', '/v1/admin'],
      ['OPTIONS', '/v1/admin/api-keys'],
    ] as const) {
      const other = await t.inject({ method, url })
      expect({ method, url, status: other.statusCode, allow: other.headers.allow }).toEqual({ method, url, status: 404, allow: undefined })
    }
  })

  it('uses the bare {error} shape under /api/', async () => {
    const res = await t.call('GET', '/api/v1/nothing-here')
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } })
  })
})

describe('database unavailable', () => {
  it('answers 503 UNAVAILABLE with Retry-After and no internals when the database cannot be reached', async () => {
    // A PostgreSQL URL where nothing listens: every query fails to connect.
    const storage = openStorage({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:1/none' })
    const app = await buildApp({ config: testConfig(), storage, logger: false })
    try {
      const token = await app.inject({ method: 'POST', url: '/v1/auth/token', payload: { api_key: 'ak_x', api_secret: 'sk_y' } })
      expect(token.statusCode).toBe(503)
      expect(token.headers['retry-after']).toBe('5')
      expect(token.json()).toEqual({ ok: false, error: { code: 'UNAVAILABLE', message: expect.any(String) } })
      expect(token.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|select/i)
      const ready = await app.inject({ method: 'GET', url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json().error.code).toBe('UNAVAILABLE')
    } finally {
      await app.close()
      await storage.destroy()
    }
  })
})

describe('unexpected errors', () => {
  it('answers 500 INTERNAL_ERROR without the message, stack or SQL of the failure', async () => {
    const storage = openStorage({ kind: 'sqlite', file: ':memory:' })
    const app = await buildApp({ config: testConfig(), storage, logger: false })
    app.get('/v1/boom', { config: { access: ['public'] } }, async () => {
      throw new Error('select secret_hash from api_keys where id = 1')
    })
    try {
      const res = await app.inject({ method: 'GET', url: '/v1/boom' })
      expect(res.statusCode).toBe(500)
      expect(res.json()).toEqual({ ok: false, error: { code: 'INTERNAL_ERROR', message: 'Internal server error' } })
      expect(res.body).not.toMatch(/select|secret_hash|at .*\.ts/)
    } finally {
      await app.close()
      await storage.destroy()
    }
  })
})
