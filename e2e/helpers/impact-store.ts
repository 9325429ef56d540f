/**
 * The store the storefront-impact checks run against: the service (SQLite), Debian's Chromium,
 * and the Dawn-like pages (helpers/dawn-store.ts) with the app embed loading the widget from the
 * extension's assets, its product holding three reviews as a product page that shows them usually
 * does. Used by storefront-impact.e2e.ts (what a guest's page view asks the service) and by
 * bench/storefront-lighthouse.ts (Lighthouse with and without the app).
 */
import { execFileSync } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { expect } from 'vitest'
import { type DawnStore, PRODUCT, startDawnStore } from './dawn-store.js'
import { type Env, launchChromium, startEnv } from './env.js'

const SECRET = 'shpss_e2e_impact_secret_0123456789abcd'
const SHOP = 'e2e-impact.myshopify.com'
const HERE = dirname(fileURLToPath(import.meta.url))

export interface ImpactStore {
  env: Env
  browser: Browser
  store: DawnStore
  close(): Promise<void>
}

export async function startImpactStore(): Promise<ImpactStore> {
  // The app embed loads the widget from the extension's assets (a copy of the widget's build).
  execFileSync(process.execPath, [resolve(HERE, '..', '..', 'scripts', 'build-extension.mjs')])
  const [env, browser] = await Promise.all([
    startEnv({ SHOPIFY_API_SECRET: SECRET, SHOPIFY_API_KEY: 'e2e-impact-client-id' }),
    launchChromium(),
  ])
  const shop = await env.testApp.app.services.shops.ensureByDomain(SHOP, 'scale')
  await env.testApp.app.services.shops.updateSettings(shop.id, { reviews_auto_approve: true })
  const store = await startDawnStore({ url: env.baseUrl, secret: SECRET, shop: SHOP }, browser)
  for (const [name, rating, body] of [
    ['Ada', 5, 'Soft from the first wash and it keeps its shape.'],
    ['Ben', 4, 'Runs a little long in the body; I took a size down.'],
    ['Chloé', 5, 'Third one I own. They really do mend them.'],
  ] as const) {
    const res = await fetch(`${store.url}/apps/wishlist/api/v1/reviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ productId: String(PRODUCT.id), customerEmail: `${name}@example.com`, customerName: name, rating, body }),
    })
    expect(res.status).toBe(201)
  }
  return {
    env,
    browser,
    store,
    async close() {
      await browser.close()
      await store.close()
      await env.close()
    },
  }
}
