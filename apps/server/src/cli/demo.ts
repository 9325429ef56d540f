/**
 * The demo shop behind `wishlist demo` and `npm start` (`serve --demo`): created once,
 * reused afterwards. Its admin secret is kept in the data folder so the banner can be
 * printed again on every start (a development convenience; real keys are hashed only).
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { Config } from '../config.js'
import type { Storage } from '../db/connect.js'
import type { Services } from '../app.js'
import { AppError } from '../lib/errors.js'
import { ensurePrivateDir, writePrivateFile } from '../lib/private-files.js'
import type { RequestContext } from '../modules/auth/auth.types.js'
import type { Shop } from '../modules/shops/shops.types.js'
import { DEMO_DOMAIN } from '../modules/storefront/storefront.routes.js'

export interface DemoCredentials {
  domain: string
  plan: string
  storefrontKey: string
  apiKey: { keyId: string; secret: string }
  customerId: string
}

function credentialsFile(config: Config): string {
  const dir = config.database.kind === 'sqlite' && config.database.file !== ':memory:' ? dirname(config.database.file) : resolve('data')
  return join(dir, 'demo-credentials.json')
}

async function keyStillWorks(services: Services, keyId: string, secret: string): Promise<boolean> {
  try {
    await services.auth.exchange({ api_key: keyId, api_secret: secret })
    return true
  } catch (err) {
    if (err instanceof AppError) return false
    throw err
  }
}

/** A few items and a second list for customer 1001, so a fresh demo shows a non-empty wishlist. */
async function addSampleWishlist(services: Services, shop: Shop): Promise<void> {
  const ctx: RequestContext = { shop, actor: { kind: 'admin', keyId: 'demo' }, requestId: 'demo-seed' }
  const owner = { type: 'customer' as const, id: '1001' }
  const samples = [
    { product_id: '7001', handle: 'classic-leather-bag' },
    { product_id: '7002', handle: 'linen-shirt', variant_id: '70021' },
    { product_id: '7003', handle: 'wool-scarf', metadata: { note: 'for winter' } },
  ]
  for (const item of samples) await services.wishlists.addItem(ctx, owner, undefined, item)
  const gifts = await services.lists.create(ctx, owner, 'Gift ideas')
  await services.wishlists.addItem(ctx, owner, gifts.wishlistId, { product_id: '7004', handle: 'ceramic-mug' })
}

export async function ensureDemoShop(services: Services, _storage: Storage, config: Config): Promise<DemoCredentials> {
  const file = credentialsFile(config)
  let shop = await services.shops.byDomain(DEMO_DOMAIN)
  let apiKey: DemoCredentials['apiKey'] | undefined
  if (!shop) {
    const created = await services.shops.create({ domain: DEMO_DOMAIN, plan: 'scale' })
    shop = await services.shops.updateSettings(created.shop.id, { multi_wishlist_enabled: true, reviews_auto_approve: true })
    apiKey = { keyId: created.apiKey.keyId, secret: created.apiKey.secret }
    await addSampleWishlist(services, shop)
  } else if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials
    if (await keyStillWorks(services, saved.apiKey.keyId, saved.apiKey.secret)) apiKey = saved.apiKey
  }
  if (!apiKey) {
    const key = await services.shops.createApiKey(shop.id, { name: 'Demo admin key' })
    apiKey = { keyId: key.keyId, secret: key.secret }
  }
  const demo: DemoCredentials = { domain: shop.domain, plan: shop.plan, storefrontKey: shop.storefrontKey, apiKey, customerId: '1001' }
  // An admin secret: 0600 (an older 0644 file too) in a 0700 folder.
  ensurePrivateDir(dirname(file))
  writePrivateFile(file, `${JSON.stringify(demo, null, 2)}\n`)
  return demo
}

export function printDemoBanner(
  demo: DemoCredentials,
  baseUrl: string,
  stdout: { write(text: string): unknown } = process.stdout,
  opts: { serving: boolean } = { serving: true },
): void {
  const lines = [
    '',
    `Demo shop ${demo.domain} (plan ${demo.plan})`,
    `  admin API key   ${demo.apiKey.keyId}`,
    `  secret          ${demo.apiKey.secret}`,
    `  storefront key  ${demo.storefrontKey}`,
    '',
    "First call: get a customer token, then read that customer's wishlist:",
    `  TOKEN=$(curl -s -X POST ${baseUrl}/v1/auth/token -H 'content-type: application/json' \\`,
    `    -d '{"api_key":"${demo.apiKey.keyId}","api_secret":"${demo.apiKey.secret}","customer_id":"${demo.customerId}"}' | sed -E 's/.*"token":"([^"]+)".*/\\1/')`,
    `  curl -s ${baseUrl}/v1/wishlists/me -H "authorization: Bearer $TOKEN"`,
    '',
    `Demo storefront: ${baseUrl}/demo${opts.serving ? '' : ' (served by `wishlist serve --demo`)'}`,
    `Dashboard: ${baseUrl}/dashboard (sign in with the admin API key and secret above)`,
    `API reference: ${baseUrl}/docs   OpenAPI: ${baseUrl}/v1/openapi.json`,
    '',
  ]
  stdout.write(lines.join('\n'))
}
