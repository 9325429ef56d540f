import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { DEMO_DOMAIN, WIDGET_CHUNKS, WIDGET_FILE } from '../../src/modules/storefront/storefront.routes.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { BACKEND, freshDatabase } from '../helpers/db.js'
import { type ServerProcess, startServerProcess } from '../helpers/server-process.js'

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

  test('GET /favicon.ico: a small icon, cached and revalidated, no credentials needed', async () => {
    const res = await t.inject({ method: 'GET', url: '/favicon.ico' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/x-icon')
    expect(res.headers['cache-control']).toBe('public, max-age=604800')
    // An ICO file (reserved 0, type 1, one image) of 16 × 16 at 32 bits per pixel.
    expect([...res.rawPayload.subarray(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 16, 16])
    expect(res.rawPayload.length).toBeLessThan(2048)
    const again = await t.inject({ method: 'GET', url: '/favicon.ico', headers: { 'if-none-match': String(res.headers.etag) } })
    expect(again.statusCode).toBe(304)
  })

  test('serves the built script with an ETag and long cache headers, no credentials needed', async () => {
    const res = await t.inject({ method: 'GET', url: '/widget.js' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(res.headers['cache-control']).toContain('max-age=86400')
    expect(res.headers.etag).toMatch(/^W\/"[\w-]+"$/)
    expect(res.headers['x-ratelimit-limit']).toBeUndefined()
    expect(res.body.length).toBeGreaterThan(1000)

    const again = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'if-none-match': String(res.headers.etag) } })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')

    const versioned = await t.inject({ method: 'GET', url: `/widget.js?v=${String(res.headers['x-widget-version'])}` })
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable')
  })

  test('serves the chunks next to the first script, cached like it (immutable under the current version)', async () => {
    const first = await t.inject({ method: 'GET', url: '/widget.js' })
    const hash = String(first.headers['x-widget-version'])
    expect(WIDGET_CHUNKS).toContain('widget-review-form.js')
    for (const file of WIDGET_CHUNKS) {
      const res = await t.inject({ method: 'GET', url: `/${file}`, headers: { 'accept-encoding': 'gzip' } })
      expect(res.statusCode, file).toBe(200)
      expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
      expect(res.headers['content-encoding']).toBe('gzip')
      expect(res.headers['cache-control']).toContain('max-age=86400')
      expect(gunzipSync(res.rawPayload).toString()).toContain('__wishlistChunk')
      const versioned = await t.inject({ method: 'GET', url: `/${file}?v=${hash}` })
      expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    }
    expect((await t.inject({ method: 'GET', url: '/widget-nope.js' })).statusCode).toBe(404)
  })

  test('is sent gzipped to clients that accept it, as its own representation', async () => {
    const plain = await t.inject({ method: 'GET', url: '/widget.js' })
    const res = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'br, gzip;q=0.8' } })
    expect(res.headers['content-encoding']).toBe('gzip')
    expect(res.headers.vary).toBe('accept-encoding')
    expect(res.rawPayload.length).toBeLessThan(plain.rawPayload.length / 1.5)
    expect(gunzipSync(res.rawPayload).toString()).toBe(plain.body)
    expect(res.headers.etag).not.toBe(plain.headers.etag)
    const again = await t.inject({
      method: 'GET',
      url: '/widget.js',
      headers: { 'accept-encoding': 'gzip', 'if-none-match': String(res.headers.etag) },
    })
    expect(again.statusCode).toBe(304)
    const refused = await t.inject({ method: 'GET', url: '/widget.js', headers: { 'accept-encoding': 'gzip;q=0, identity' } })
    expect(refused.headers['content-encoding']).toBeUndefined()
  })
})

describe('/demo', () => {
  test('is served only by `wishlist serve --demo`, never by a plain `serve`, whatever NODE_ENV says', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wishlist-demo-'))
    const database = await freshDatabase(BACKEND === 'sqlite' ? { sqliteFile: join(dir, 'demo.db') } : {})
    const started: ServerProcess[] = []
    const serve = async (args: string[], NODE_ENV: string) => {
      const server = await startServerProcess({ DATABASE_URL: database.url, NODE_ENV, WEBHOOK_WORKER: 'off' }, { args, cwd: dir })
      started.push(server)
      return server
    }
    const login = (url: string) =>
      fetch(`${url}/demo/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: '301' }),
      })
    try {
      // The demo shop exists (a plain serve on a database once used by the demo is the case to cover).
      const demo = await serve(['--demo'], 'development')
      expect((await fetch(`${demo.url}/demo`)).status).toBe(200)
      const minted = await login(demo.url)
      expect(minted.status).toBe(200)
      for (const plain of await Promise.all(['development', 'test', ''].map((NODE_ENV) => serve([], NODE_ENV)))) {
        expect((await fetch(`${plain.url}/demo`)).status).toBe(404)
        const refused = await login(plain.url)
        expect(refused.status).toBe(404)
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND')
      }
      // An in-process app is the same: off unless asked for.
      const t = await createTestApp()
      try {
        expect((await t.inject({ method: 'GET', url: '/demo' })).statusCode).toBe(404)
        expect((await t.inject({ method: 'POST', url: '/demo/login', payload: { customerId: '1' } })).statusCode).toBe(404)
      } finally {
        await t.close()
      }
    } finally {
      for (const server of started) {
        server.child.kill('SIGTERM')
        await server.exited
      }
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  test('demo login mints customer tokens for the demo shop only, from one key per process (an earlier process’s key is revoked)', async () => {
    // A file, so that a second app (a restarted process) sees the same SQLite database.
    const dir = mkdtempSync(join(tmpdir(), 'wishlist-demo-login-'))
    const database = await freshDatabase(BACKEND === 'sqlite' ? { sqliteFile: join(dir, 'demo.db') } : {})
    const t = await createTestApp({ demoPages: true, database })
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
      // Logins of one process share its key; a restart (another app on the database) replaces it instead of adding one.
      expect((await t.call('POST', '/demo/login', { body: { customerId: '1002' } })).status).toBe(200)
      const restarted = await createTestApp({ demoPages: true, database: t.database })
      try {
        expect((await restarted.call('POST', '/demo/login', { body: { customerId: '1001' } })).status).toBe(200)
        const shop = await t.app.services.shops.byDomain(DEMO_DOMAIN)
        const keys = await t.app.services.shops.listApiKeys(shop!.id)
        expect(keys.filter((k) => k.name === 'Demo storefront login')).toHaveLength(1)
        expect((await restarted.call('GET', '/v1/wishlists/1001', { token: res.body.data.token })).body.error.code).toBe('INVALID_TOKEN')
      } finally {
        await restarted.close()
      }
    } finally {
      await t.close()
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
