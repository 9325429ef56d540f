import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DASHBOARD_CSP, embeddedDashboardCsp } from '../../src/modules/dashboard/dashboard.routes.js'
import { adminQueryHmac } from '../../src/platforms/shopify/signatures.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { sessionToken } from '../helpers/shopify.js'

// A stand-in build, so these tests do not depend on `npm run build`; the e2e suite drives
// the real dashboard build in Chromium.
const dist = mkdtempSync(join(tmpdir(), 'dashboard-dist-'))
mkdirSync(join(dist, 'assets'))
writeFileSync(
  join(dist, 'index.html'),
  '<!doctype html><title>Wishlist dashboard</title><script type="module" src="/dashboard/assets/index-AbC123.js"></script>',
)
writeFileSync(join(dist, 'assets', 'index-AbC123.js'), 'console.log("dashboard")')
writeFileSync(join(dist, 'assets', 'index-AbC123.css'), 'body{margin:0}')
writeFileSync(join(dist, 'secret.txt'), 'not an asset')

afterAll(() => rmSync(dist, { recursive: true, force: true }))

describe('GET /dashboard', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ dashboardDist: dist })
  })
  afterAll(() => t.close())

  test('serves index.html without credentials, revalidated on every load, with a strict CSP', async () => {
    for (const url of ['/dashboard', '/dashboard/']) {
      const res = await t.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['cache-control']).toBe('no-cache')
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP)
      expect(res.headers['x-frame-options']).toBe('DENY')
      expect(res.headers['x-ratelimit-limit']).toBeUndefined()
      expect(res.body).toContain('<title>Wishlist dashboard</title>')
    }
    const first = await t.inject({ method: 'GET', url: '/dashboard' })
    const again = await t.inject({ method: 'GET', url: '/dashboard', headers: { 'if-none-match': String(first.headers.etag) } })
    expect(again.statusCode).toBe(304)
  })

  test('serves hashed assets with a year-long immutable cache and the right types', async () => {
    const js = await t.inject({ method: 'GET', url: '/dashboard/assets/index-AbC123.js' })
    expect(js.statusCode).toBe(200)
    expect(js.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    expect(js.body).toBe('console.log("dashboard")')
    const css = await t.inject({ method: 'GET', url: '/dashboard/assets/index-AbC123.css' })
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
  })

  test('answers 404 for unknown assets and never leaves the assets folder', async () => {
    for (const url of [
      '/dashboard/assets/missing-1.js',
      '/dashboard/assets/..%2Fsecret.txt',
      '/dashboard/assets/%2E%2E%2Findex.html',
      '/dashboard/assets/.hidden.js',
      '/dashboard/secret.txt',
    ]) {
      const res = await t.inject({ method: 'GET', url })
      expect([400, 404], url).toContain(res.statusCode)
      expect(res.body, url).not.toContain('not an asset')
    }
    const missing = await t.inject({ method: 'GET', url: '/dashboard/assets/missing-1.js' })
    expect(missing.json().error.code).toBe('NOT_FOUND')
  })

  test('is not part of the API document', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard'))).toEqual([])
  })
})

describe('GET /dashboard opened by Shopify admin (Shopify app mode)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({
      dashboardDist: dist,
      env: { SHOPIFY_API_SECRET: 'dashboard-test-secret', SHOPIFY_API_KEY: 'dashboard-test-key' },
    })
  })
  afterAll(() => t.close())

  const SECRET = 'dashboard-test-secret'
  /** The query Shopify admin loads the embedded app with, signed as Shopify signs it (`hmac`). */
  const adminQuery = (shop: string, o: { timestamp?: number; secret?: string; idToken?: string } = {}) => {
    const params = new URLSearchParams({
      embedded: '1',
      host: 'YWRtaW4',
      shop,
      timestamp: String(o.timestamp ?? Math.floor(Date.now() / 1000)),
      ...(o.idToken ? { id_token: o.idToken } : {}),
    })
    params.set('hmac', adminQueryHmac(params, o.secret ?? SECRET))
    return params.toString()
  }

  test("a request Shopify admin signed for {shop}.myshopify.com may be framed by that shop's admin only", async () => {
    const token = await sessionToken('e2e-store.myshopify.com', { secret: SECRET, aud: 'dashboard-test-key' })
    for (const query of [adminQuery('e2e-store.myshopify.com'), `shop=e2e-store.myshopify.com&host=YWRtaW4&id_token=${token}`]) {
      const res = await t.inject({ method: 'GET', url: `/dashboard?${query}` })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-security-policy']).toBe(
        embeddedDashboardCsp(['https://e2e-store.myshopify.com', 'https://admin.shopify.com']),
      )
      expect(res.headers['content-security-policy']).toContain('frame-ancestors https://e2e-store.myshopify.com https://admin.shopify.com')
      expect(res.headers['x-frame-options']).toBeUndefined()
    }
  })

  test('an unsigned, wrongly signed or stale ?shop=, a session token of another shop, any other shop value, or none: never framed', async () => {
    const other = await sessionToken('other-store.myshopify.com', { secret: SECRET, aud: 'dashboard-test-key' })
    const urls = [
      '/dashboard',
      '/dashboard?shop=e2e-store.myshopify.com&host=YWRtaW4&id_token=x',
      `/dashboard?${adminQuery('e2e-store.myshopify.com', { secret: 'another-apps-secret' })}`,
      `/dashboard?${adminQuery('e2e-store.myshopify.com', { timestamp: Math.floor(Date.now() / 1000) - 600 })}`,
      `/dashboard?${adminQuery('e2e-store.myshopify.com').replace('shop=e2e-store', 'shop=attacker-store')}`,
      `/dashboard?shop=e2e-store.myshopify.com&id_token=${other}`,
      '/dashboard?shop=evil.example.com',
      '/dashboard?shop=a.myshopify.com%20https://evil.example.com',
      '/dashboard?shop=A.MYSHOPIFY.COM.evil.example',
    ]
    for (const url of urls) {
      const res = await t.inject({ method: 'GET', url })
      expect(res.headers['content-security-policy'], url).toBe(DASHBOARD_CSP)
      expect(res.headers['x-frame-options'], url).toBe('DENY')
    }
  })
})

test('without Shopify app mode, ?shop= changes nothing: never framed', async () => {
  const t = await createTestApp({ dashboardDist: dist })
  try {
    const res = await t.inject({ method: 'GET', url: '/dashboard?shop=e2e-store.myshopify.com' })
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP)
    expect(res.headers['x-frame-options']).toBe('DENY')
  } finally {
    await t.close()
  }
})

test('without a build, /dashboard says how to build it (503)', async () => {
  const t = await createTestApp({ dashboardDist: join(dist, 'does-not-exist') })
  try {
    const res = await t.inject({ method: 'GET', url: '/dashboard' })
    expect(res.statusCode).toBe(503)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toContain('npm run build')
  } finally {
    await t.close()
  }
})
