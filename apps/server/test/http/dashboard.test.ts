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
// As Vite writes it: the module script and the stylesheet in <head>.
const INDEX_HTML =
  '<!doctype html>\n<html lang="en">\n  <head>\n    <meta charset="utf-8" />\n    <title>Wishlist dashboard</title>\n' +
  '    <script type="module" crossorigin src="/dashboard/assets/index-AbC123.js"></script>\n' +
  '    <link rel="stylesheet" crossorigin href="/dashboard/assets/index-AbC123.css">\n  </head>\n  <body><div id="root"></div></body>\n</html>\n'
writeFileSync(join(dist, 'index.html'), INDEX_HTML)
writeFileSync(join(dist, 'assets', 'index-AbC123.js'), 'console.log("dashboard")')
writeFileSync(join(dist, 'assets', 'index-AbC123.css'), 'body{margin:0}')
writeFileSync(join(dist, 'secret.txt'), 'not an asset')

afterAll(() => rmSync(dist, { recursive: true, force: true }))

const APP_BRIDGE = 'https://cdn.shopify.com/shopifycloud/app-bridge.js'
const headOf = (html: string) => html.slice(html.indexOf('<head>'), html.indexOf('</head>'))
/** The opening tags of the scripts, in order. */
const scriptsOf = (head: string) => [...head.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])

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

  test("a request Shopify admin signed for {shop}.myshopify.com may be framed by that shop's admin only, with App Bridge first in <head>", async () => {
    const token = await sessionToken('e2e-store.myshopify.com', { secret: SECRET, aud: 'dashboard-test-key' })
    for (const query of [adminQuery('e2e-store.myshopify.com'), `shop=e2e-store.myshopify.com&host=YWRtaW4&id_token=${token}`]) {
      const res = await t.inject({ method: 'GET', url: `/dashboard?${query}` })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['cache-control']).toBe('no-cache')
      const csp = String(res.headers['content-security-policy'])
      expect(csp).toBe(
        embeddedDashboardCsp({
          frameAncestors: ['https://e2e-store.myshopify.com', 'https://admin.shopify.com'],
          script: { src: APP_BRIDGE, meta: { 'shopify-api-key': 'dashboard-test-key' } },
        }),
      )
      expect(csp).toContain('frame-ancestors https://e2e-store.myshopify.com https://admin.shopify.com')
      // The one script from elsewhere that the page may run: App Bridge, by its full URL.
      expect(csp).toContain(`script-src 'self' ${APP_BRIDGE};`)
      expect(csp).toContain("default-src 'none'")
      expect(res.headers['x-frame-options']).toBeUndefined()

      const head = headOf(res.body)
      expect(scriptsOf(head)).toEqual([
        `<script src="${APP_BRIDGE}">`,
        '<script type="module" crossorigin src="/dashboard/assets/index-AbC123.js">',
      ])
      const meta = head.indexOf('<meta name="shopify-api-key" content="dashboard-test-key" />')
      expect(meta).toBeGreaterThan(head.indexOf('<meta charset="utf-8" />'))
      expect(meta).toBeLessThan(head.indexOf('<script'))
      // Nothing else of the page changed.
      expect(
        res.body.replace(`<meta name="shopify-api-key" content="dashboard-test-key" /><script src="${APP_BRIDGE}"></script>`, ''),
      ).toBe(INDEX_HTML)
    }
  })

  test('without SHOPIFY_API_KEY, a page the admin proved is framed but gets no App Bridge (it needs the key)', async () => {
    const noKey = await createTestApp({ dashboardDist: dist, env: { SHOPIFY_API_SECRET: SECRET } })
    try {
      const res = await noKey.inject({ method: 'GET', url: `/dashboard?${adminQuery('e2e-store.myshopify.com')}` })
      expect(res.headers['content-security-policy']).toBe(
        embeddedDashboardCsp({ frameAncestors: ['https://e2e-store.myshopify.com', 'https://admin.shopify.com'] }),
      )
      expect(res.headers['content-security-policy']).toContain("script-src 'self';")
      expect(res.body).toBe(INDEX_HTML)
    } finally {
      await noKey.close()
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
      // The page as built: no App Bridge, no API key (the dashboard then signs in with an API key).
      expect(res.body, url).toBe(INDEX_HTML)
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
