import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { runCli, runCliProcess, runCliWith } from '../helpers/cli.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'
import { SHOPIFY_ENV } from '../helpers/shopify.js'

const dir = mkdtempSync(join(tmpdir(), 'wishlist-cli-'))
let database: TestDatabase

const cli = (...args: string[]) => runCli(database, ...args)

beforeAll(async () => {
  database = await freshDatabase({ sqliteFile: join(dir, 'cli.db') })
})
afterAll(async () => {
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

// Commands run in process (`main()` with captured output); one smoke test spawns the real entry point.
describe('wishlist CLI', { timeout: 60_000 }, () => {
  let created: { shop: { id: string; domain: string; plan: string }; storefrontKey: string; apiKey: { keyId: string; secret: string } }

  it('smoke test, a real process: usage errors exit 2 on stderr; migrate prints to stdout and exits 0', async () => {
    const usage = await runCliProcess(database, 'frobnicate')
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('wishlist: unknown command "frobnicate"')
    const migrate = await runCliProcess(database, 'migrate')
    expect(migrate.code, migrate.stderr).toBe(0)
    expect(migrate.stdout).toMatch(/^(applied: |database is up to date)/)
  })

  it('migrate applies migrations, then reports the database is up to date', async () => {
    const first = await cli('migrate')
    expect(first.code, first.stderr).toBe(0)
    const again = await cli('migrate')
    expect(again.stdout.trim(), again.stderr).toBe('database is up to date')
  })

  it('shops create --json prints exactly the documented JSON object', async () => {
    const res = await cli('shops', 'create', '--domain', 'Cli-Shop.myshopify.com', '--plan', 'growth', '--json')
    expect(res.code).toBe(0)
    const lines = res.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    created = JSON.parse(lines[0] as string)
    expect(Object.keys(created).sort()).toEqual(['apiKey', 'shop', 'storefrontKey'])
    expect(created).toEqual({
      shop: { id: expect.stringMatching(/^shop_/), domain: 'cli-shop.myshopify.com', plan: 'growth' },
      storefrontKey: expect.stringMatching(/^sfk_/),
      apiKey: { keyId: expect.stringMatching(/^ak_/), secret: expect.stringMatching(/^sk_/) },
    })
  })

  it('refuses a second shop with the same domain', async () => {
    const res = await cli('shops', 'create', '--domain', 'cli-shop.myshopify.com', '--plan', 'growth', '--json')
    expect(res.code).toBe(1)
    expect(res.stdout).toBe('')
    expect(res.stderr).toMatch(/already exists/)
  })

  it('keys create --json prints {keyId, secret, scope}', async () => {
    const res = await cli('keys', 'create', '--domain', 'cli-shop.myshopify.com', '--scope', 'customer', '--json')
    expect(res.code).toBe(0)
    const key = JSON.parse(res.stdout)
    expect(key).toEqual({ keyId: expect.stringMatching(/^ak_/), secret: expect.stringMatching(/^sk_/), scope: 'customer' })
  })

  it('set-plan and settings change what the API serves', async () => {
    expect((await cli('shops', 'set-plan', '--domain', 'cli-shop.myshopify.com', '--plan', 'scale')).code).toBe(0)
    const settings = await cli(
      'shops',
      'settings',
      '--domain',
      'cli-shop.myshopify.com',
      '--set',
      'multi_wishlist_enabled=true',
      'share_link_ttl_days=9',
      'currency=EUR',
    )
    expect(settings.code).toBe(0)
    expect(JSON.parse(settings.stdout)).toMatchObject({ multi_wishlist_enabled: true, share_link_ttl_days: 9, currency: 'EUR' })

    const t: TestApp = await createTestApp({ database })
    try {
      const token = await t.call('POST', '/v1/auth/token', { body: { api_key: created.apiKey.keyId, api_secret: created.apiKey.secret } })
      expect(token.status).toBe(200)
      const shop = await t.call('GET', '/v1/admin/shop', { token: token.body.data.token })
      expect(shop.body.data).toMatchObject({
        id: created.shop.id,
        plan: 'scale',
        storefrontKey: created.storefrontKey,
        settings: { multi_wishlist_enabled: true, share_link_ttl_days: 9, currency: 'EUR' },
      })
    } finally {
      await t.close()
    }
  })

  it('in Shopify app mode, set-plan leaves a Shopify shop to Shopify Billing unless --force', async () => {
    // With PostgreSQL, Shopify app mode needs the tokens' key (the service refuses to start without it).
    const env = { ...SHOPIFY_ENV, SHOPIFY_TOKEN_KEY: randomBytes(32).toString('base64') }
    const shopify = (...args: string[]) => runCliWith(database, env, ...args)
    const refused = await shopify('shops', 'set-plan', '--domain', 'cli-shop.myshopify.com', '--plan', 'growth')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('Shopify Billing')
    expect(refused.stderr).toContain('--force')
    const plan = async () => {
      const t: TestApp = await createTestApp({ database })
      try {
        return (await t.app.services.shops.byDomain('cli-shop.myshopify.com'))?.plan
      } finally {
        await t.close()
      }
    }
    expect(await plan()).toBe('scale')
    expect((await shopify('shops', 'set-plan', '--domain', 'cli-shop.myshopify.com', '--plan', 'growth', '--force')).code).toBe(0)
    expect(await plan()).toBe('growth')
    // Outside Shopify app mode nobody else bills the shop: no --force needed.
    expect((await cli('shops', 'set-plan', '--domain', 'cli-shop.myshopify.com', '--plan', 'scale')).code).toBe(0)
    expect(await plan()).toBe('scale')
  })

  it('rejects bad input with usage errors (exit 2) and unknown shops (exit 2)', async () => {
    expect((await cli('shops', 'create', '--domain', 'x.myshopify.com', '--plan', 'platinum')).code).toBe(2)
    expect((await cli('shops', 'settings', '--domain', 'cli-shop.myshopify.com', '--set', 'share_link_ttl_days=0')).code).toBe(2)
    expect((await cli('shops', 'settings', '--domain', 'cli-shop.myshopify.com', '--set', 'bogus=true')).code).toBe(2)
    const currency = await cli('shops', 'settings', '--domain', 'cli-shop.myshopify.com', '--set', 'currency=eur')
    expect([currency.code, currency.stderr]).toEqual([2, expect.stringContaining('currency must be an ISO 4217 code')])
    expect((await cli('keys', 'create', '--domain', 'nobody.myshopify.com')).code).toBe(2)
    expect((await cli('frobnicate')).code).toBe(2)
  })

  it('shops erase --force deletes the shop and every row it owns (a shop/redact by hand); without --force it refuses', async () => {
    const made = JSON.parse((await cli('shops', 'create', '--domain', 'erase-me.myshopify.com', '--plan', 'free', '--json')).stdout) as {
      shop: { id: string }
    }
    expect((await cli('keys', 'create', '--domain', 'erase-me.myshopify.com')).code).toBe(0)
    const refused = await cli('shops', 'erase', '--domain', 'erase-me.myshopify.com')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('--force')
    const erased = await cli('shops', 'erase', '--domain', 'erase-me.myshopify.com', '--force')
    expect(erased.code).toBe(0)
    expect(JSON.parse(erased.stdout)).toMatchObject({ shops: 1, api_keys: 2 })
    expect((await cli('keys', 'create', '--domain', 'erase-me.myshopify.com')).code).toBe(2)
    expect(made.shop.id).toMatch(/^shop_/)
  })

  it('demo creates the demo shop once and prints working credentials every time', async () => {
    const first = await cli('demo')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/demo\.myshopify\.com/)
    // The storefront is served by `serve --demo` only: the banner of this command says so.
    expect(first.stdout).toContain('Demo storefront: http://127.0.0.1:3000/demo (served by `wishlist serve --demo`)')
    const key = /admin API key\s+(ak_\S+)/.exec(first.stdout)?.[1]
    const secret = /secret\s+(sk_\S+)/.exec(first.stdout)?.[1]
    expect(key).toBeDefined()
    const second = await cli('demo')
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toContain(key as string)
    const t: TestApp = await createTestApp({ database })
    try {
      const token = await t.call('POST', '/v1/auth/token', { body: { api_key: key, api_secret: secret } })
      expect(token.status).toBe(200)
    } finally {
      await t.close()
    }
  })
})
