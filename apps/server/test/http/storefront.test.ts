import { existsSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DEMO_DOMAIN } from '../../src/cli/demo.js'
import { WIDGET_FILE } from '../../src/modules/storefront/storefront.routes.js'
import { createTestApp, type TestApp } from '../helpers/app.js'

// The widget is built by the root `npm install` (prepare → build); packages/widget tests
// check its behaviour and size, this file the way the server serves it. A missing build
// fails here rather than skipping: the server would serve nothing at /widget.js.
describe('GET /widget.js', () => {
  let t: TestApp
  beforeAll(async () => {
    if (!existsSync(WIDGET_FILE)) throw new Error(`${WIDGET_FILE} is missing: run \`npm run build\` at the repository root`)
    t = await createTestApp()
  })
  afterAll(() => t.close())

  test('serves the built script with an ETag and long cache headers, no credentials needed', async () => {
    const res = await t.inject({ method: 'GET', url: '/widget.js' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(res.headers['cache-control']).toContain('max-age=86400')
    expect(res.headers.etag).toMatch(/^"[\w-]{16}"$/)
    expect(res.headers['x-ratelimit-limit']).toBeUndefined()
    expect(res.body.length).toBeGreaterThan(1000)

    const again = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'if-none-match': String(res.headers.etag) } })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')

    const versioned = await t.inject({ method: 'GET', url: `/widget.js?v=${String(res.headers['x-widget-version'])}` })
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable')
  })

  test('is sent gzipped to clients that accept it, as its own representation', async () => {
    const plain = await t.inject({ method: 'GET', url: '/widget.js' })
    const res = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'br, gzip;q=0.8' } })
    expect(res.headers['content-encoding']).toBe('gzip')
    expect(res.headers.vary).toBe('accept-encoding')
    expect(res.rawPayload.length).toBeLessThan(plain.rawPayload.length / 1.5)
    expect(gunzipSync(res.rawPayload).toString()).toBe(plain.body)
    expect(res.headers.etag).not.toBe(plain.headers.etag)
    const again = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'gzip', 'if-none-match': String(res.headers.etag) } })
    expect(again.statusCode).toBe(304)
    const refused = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'gzip;q=0, identity' } })
    expect(refused.headers['content-encoding']).toBeUndefined()
  })
})

describe('/demo', () => {
  test('is not served in production', async () => {
    const t = await createTestApp()
    try {
      // createTestApp builds with the default (NODE_ENV is "test" under vitest): on.
      expect((await t.inject({ method: 'GET', url: '/demo' })).statusCode).toBe(200)
    } finally {
      await t.close()
    }
    const { buildApp } = await import('../../src/app.js')
    const prod = await createTestApp()
    try {
      const app = await buildApp({ config: prod.config, storage: prod.storage, logger: false, demoPages: false })
      expect((await app.inject({ method: 'GET', url: '/demo' })).statusCode).toBe(404)
      expect((await app.inject({ method: 'POST', url: '/demo/login', payload: { customerId: '1' } })).statusCode).toBe(404)
      await app.close()
    } finally {
      await prod.close()
    }
  })

  test('demo login mints customer tokens for the demo shop only', async () => {
    const t = await createTestApp()
    try {
      expect((await t.call('POST', '/demo/login', { body: { customerId: '1001' } })).status).toBe(404)
      await t.app.services.shops.create({ domain: DEMO_DOMAIN, plan: 'scale' })
      const res = await t.call('POST', '/demo/login', { body: { customerId: '1001' } })
      expect(res.status).toBe(200)
      const list = await t.call('GET', '/v1/wishlists/1001', { token: res.body.data.token })
      expect(list.status).toBe(200)
      expect((await t.call('GET', '/v1/wishlists/1002', { token: res.body.data.token })).status).toBe(403)
      const page = await t.inject({ method: 'GET', url: '/demo' })
      expect(page.body).toContain('sfk_')
    } finally {
      await t.close()
    }
  })
})
