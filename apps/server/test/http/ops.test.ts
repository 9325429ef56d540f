import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  // Served on loopback: /metrics answers loopback clients without METRICS_TOKEN.
  t = await createTestApp({ env: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' } })
})
afterAll(() => t.close())

describe('operations endpoints', () => {
  it('GET /healthz answers without credentials', async () => {
    const res = await t.call('GET', '/healthz')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, data: { status: 'ok' } })
  })

  it('GET /readyz checks the database', async () => {
    const res = await t.call('GET', '/readyz')
    expect(res.status).toBe(200)
    expect(res.body.data.database).toBe(t.storage.backend)
  })

  it('GET /metrics counts requests by route pattern and status', async () => {
    const shop = await t.createShop('starter')
    await t.call('GET', '/v1/admin/shop', { token: await shop.adminToken() })
    await t.call('GET', '/v1/admin/shop')
    await t.call('GET', '/v1/wishlists/42', { token: await shop.adminToken() })
    await t.call('GET', '/v1/no-such-route/42')
    const res = await t.inject({ method: 'GET', url: '/metrics' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/plain')
    expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/v1\/admin\/shop",status_code="200"\} 1/)
    expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/v1\/admin\/shop",status_code="401"\} 1/)
    // The pattern, never the path's ids; requests no route matched under one label.
    expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/v1\/wishlists\/:customerId",status_code="200"\} 1/)
    expect(res.body).toMatch(/http_requests_total\{method="GET",route="unmatched",status_code="404"\} 1/)
    expect(res.body).not.toContain('42"')
    expect(res.body).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/v1\/auth\/token",status_code="200"\}/)
    expect(res.body).toContain('# TYPE http_request_duration_seconds histogram')
    // Each series: cumulative buckets in order up to +Inf, which equals _count; a _sum.
    const series = (labels: string) => {
      const of = (name: string) =>
        res.body
          .split('\n')
          .filter((l) => l.startsWith(name) && l.includes(labels))
          .map((l) => Number(l.split(' ').pop()))
      return {
        buckets: of('http_request_duration_seconds_bucket'),
        sum: of('http_request_duration_seconds_sum'),
        count: of('http_request_duration_seconds_count'),
      }
    }
    const shopCalls = series('method="GET",route="/v1/admin/shop",status_code="200"')
    expect(shopCalls.buckets).toHaveLength(13)
    expect(shopCalls.buckets.at(-1)).toBe(1)
    expect(shopCalls.count).toEqual([1])
    expect(shopCalls.buckets.every((v, i, all) => i === 0 || v >= (all[i - 1] as number))).toBe(true)
    expect(shopCalls.sum[0]).toBeGreaterThan(0)
    expect(shopCalls.sum[0]).toBeLessThan(5)
    const again = await t.inject({ method: 'GET', url: '/metrics' })
    expect(again.body).toMatch(/http_requests_total\{method="GET",route="\/metrics",status_code="200"\} 1/)
    expect(res.body).toContain('process_resident_memory_bytes')
  })

  it('GET /metrics answers loopback clients only while METRICS_TOKEN is unset', async () => {
    for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      expect((await t.inject({ method: 'GET', url: '/metrics', remoteAddress })).statusCode).toBe(200)
    for (const remoteAddress of ['203.0.113.5', '2001:db8::5', '::ffff:203.0.113.5']) {
      const res = await t.inject({ method: 'GET', url: '/metrics', remoteAddress })
      expect(res.statusCode).toBe(403)
      expect(res.json()).toEqual({ ok: false, error: { code: 'FORBIDDEN', message: expect.stringContaining('METRICS_TOKEN') } })
      expect(res.body).not.toContain('http_requests_total')
    }
  })

  it('GET /metrics behind a trusted proxy on the same host: the forwarded client must be loopback too', async () => {
    const proxied = await createTestApp({ env: { TRUST_PROXY: 'true', PUBLIC_BASE_URL: 'http://localhost:3000' } })
    try {
      expect((await proxied.inject({ method: 'GET', url: '/metrics', headers: { 'x-forwarded-for': '203.0.113.9' } })).statusCode).toBe(403)
      expect(
        (
          await proxied.inject({
            method: 'GET',
            url: '/metrics',
            remoteAddress: '203.0.113.9',
            headers: { 'x-forwarded-for': '127.0.0.1' },
          })
        ).statusCode,
      ).toBe(403)
      expect((await proxied.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200)
    } finally {
      await proxied.close()
    }
  })

  it('GET /metrics of a service with a public URL (behind a tunnel every request comes from loopback) answers only with METRICS_TOKEN, else 404', async () => {
    const tunnelled = await createTestApp({ env: { PUBLIC_BASE_URL: 'https://wishlist.example.com' } })
    try {
      for (const remoteAddress of ['127.0.0.1', '::1']) {
        const res = await tunnelled.inject({ method: 'GET', url: '/metrics', remoteAddress })
        expect(res.statusCode).toBe(404)
        expect(res.json().error.code).toBe('NOT_FOUND')
      }
    } finally {
      await tunnelled.close()
    }
    const token = 'metrics-token-tunnel-0123456789'
    const guarded = await createTestApp({ env: { PUBLIC_BASE_URL: 'https://wishlist.example.com', METRICS_TOKEN: token } })
    try {
      expect((await guarded.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200)
      expect((await guarded.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401)
    } finally {
      await guarded.close()
    }
  })

  it('GET /metrics with METRICS_TOKEN set answers only Authorization: Bearer <METRICS_TOKEN>, from anywhere', async () => {
    const token = 'metrics-token-0123456789abcdef'
    const guarded = await createTestApp({ env: { METRICS_TOKEN: token } })
    try {
      const scrape = (headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
        guarded.inject({ method: 'GET', url: '/metrics', headers, remoteAddress })
      const none = await scrape({})
      expect(none.statusCode).toBe(401)
      expect(none.json().error.code).toBe('UNAUTHORIZED')
      expect(none.headers['www-authenticate']).toBe('Bearer realm="wishlist"')
      const wrong = await scrape({ authorization: `Bearer ${token}x` })
      expect(wrong.statusCode).toBe(401)
      expect(wrong.json().error.code).toBe('INVALID_TOKEN')
      expect((await scrape({ authorization: token })).statusCode).toBe(401)
      const ok = await scrape({ authorization: `Bearer ${token}` }, '203.0.113.5')
      expect(ok.statusCode).toBe(200)
      expect(ok.body).toContain('http_requests_total')
    } finally {
      await guarded.close()
    }
  })

  it('GET /v1/openapi.json is OpenAPI 3.1 generated from the route schemas', async () => {
    const res = await t.call('GET', '/v1/openapi.json')
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe('3.1.0')
    const token = res.body.paths['/v1/auth/token'].post
    expect(token.requestBody.content['application/json'].schema.required).toEqual(['api_key', 'api_secret'])
    expect(res.body.paths['/v1/admin/shop'].get.security).toEqual([{ bearer: [] }])
    expect(res.body.paths['/docs']).toBeUndefined()
    // Guest mode takes the guest id from the header or from the query (docs/api.md, "Credentials").
    expect(res.body.paths['/v1/wishlists/{customerId}'].get.security).toContainEqual({ storefrontKey: [], guestIdQuery: [] })
    expect(res.body.components.securitySchemes.guestIdQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'guest_id' })
  })

  it('GET /docs serves the API reference', async () => {
    const res = await t.inject({ method: 'GET', url: '/docs/' })
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<html lang="en">')
    expect(res.body).toContain('<script src="js/scalar.js"></script>')
    const script = await t.inject({ method: 'GET', url: '/docs/js/scalar.js' })
    expect(script.statusCode).toBe(200)
    // The reference counts in a bucket of its own (test/http/api-reference.test.ts).
    expect(script.headers['x-ratelimit-limit']).toBe('60')
    expect(res.headers['x-ratelimit-limit']).toBe('60')
    // The page reads the service's own document; unknown paths are the documented 404.
    const doc = await t.inject({ method: 'GET', url: '/docs/openapi.json' })
    expect(doc.statusCode).toBe(200)
    expect(doc.json()).toMatchObject({ openapi: '3.1.0', paths: { '/v1/wishlists/{customerId}': {} } })
    const bare = await t.inject({ method: 'GET', url: '/docs' })
    expect([bare.statusCode, bare.headers.location]).toEqual([301, '/docs/'])
    const missing = await t.inject({ method: 'GET', url: '/docs/no-such-page' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
  })

  it('answers every response with an x-request-id: success, errors of every stage, preflights', async () => {
    const cases = [
      { method: 'GET', url: '/healthz', status: 200 },
      { method: 'GET', url: '/v1/no-such-route', status: 404 },
      { method: 'GET', url: '/v1/wishlists/me', status: 401 },
      { method: 'GET', url: '/v1/wishlists/me', headers: { authorization: 'Bearer not.a.token' }, status: 401 },
      { method: 'GET', url: '/v1/wishlists/%E0%A4%A', status: 400 },
      { method: 'GET', url: '/v1/wishlists/shared/abc%00def', status: 400 },
      { method: 'POST', url: '/v1/auth/token', headers: { 'content-type': 'text/plain' }, payload: 'x', status: 415 },
      { method: 'POST', url: '/v1/auth/token', payload: { api_key: 1 }, status: 400 },
      {
        method: 'OPTIONS',
        url: '/v1/wishlists/me',
        headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET' },
        status: 204,
      },
    ] as const
    const ids = new Set<string>()
    for (const { status, ...request } of cases) {
      const res = await t.inject(request)
      expect({ url: request.url, status: res.statusCode }).toEqual({ url: request.url, status })
      expect(res.headers['x-request-id']).toMatch(/^req_/)
      ids.add(String(res.headers['x-request-id']))
    }
    expect(ids.size).toBe(cases.length)
  })
})

describe('CORS for storefronts on other origins', () => {
  it('answers a preflight for the storefront headers from any origin', async () => {
    const res = await t.inject({
      method: 'OPTIONS',
      url: '/v1/wishlists/me/items',
      headers: {
        origin: 'https://shop.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-storefront-key,x-guest-id',
      },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example.com')
    expect(String(res.headers['access-control-allow-headers'])).toContain('x-storefront-key')
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('lets the browser read the API answer and the rate-limit headers', async () => {
    const shop = await t.createShop('starter')
    const res = await t.inject({
      method: 'GET',
      url: '/v1/wishlists/me',
      headers: { ...shop.guest('guest-cors-01'), origin: 'https://shop.example.com' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example.com')
    expect(String(res.headers['access-control-expose-headers'])).toContain('retry-after')
    expect(res.headers.vary).toContain('Origin')
  })

  it('answers a preflight to any path, before credentials are checked', async () => {
    const res = await t.inject({
      method: 'OPTIONS',
      url: '/v1/no-such-route/at-all',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'DELETE' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example.com')
    expect(String(res.headers['access-control-allow-methods'])).toContain('DELETE')
    expect(res.headers['access-control-max-age']).toBe('600')
  })

  it('sends no CORS grant without an Origin, and an OPTIONS that is no preflight is a 404', async () => {
    const plain = await t.inject({ method: 'GET', url: '/healthz' })
    expect(plain.headers['access-control-allow-origin']).toBeUndefined()
    expect(plain.headers.vary).toContain('Origin')
    const options = await t.inject({ method: 'OPTIONS', url: '/v1/wishlists/me', headers: { origin: 'https://shop.example.com' } })
    expect(options.statusCode).toBe(404)
    expect(options.json()).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
  })
})
