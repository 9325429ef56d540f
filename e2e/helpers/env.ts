/**
 * The e2e environment: the real server app (apps/server) on a fresh in-memory SQLite
 * database with the demo shop, listening on 127.0.0.1, and Debian's Chromium driven by
 * playwright-core. Never downloads a browser.
 */
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { createTestApp, type TestApp } from '../../apps/server/test/helpers/app.js'
import { DEMO_DOMAIN } from '../../apps/server/src/modules/storefront/storefront.routes.js'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export interface Env {
  baseUrl: string
  testApp: TestApp
  storefrontKey: string
  /** The admin API key of the demo shop. */
  adminKey: { keyId: string; secret: string }
  /** A customer token of the demo shop (through /demo/login, served by `serve --demo` only). */
  customerToken(customerId: string): Promise<string>
  close(): Promise<void>
}

export async function startEnv(env: Record<string, string> = {}): Promise<Env> {
  // /demo and /demo/login exist only where `wishlist serve --demo` turns them on.
  const testApp = await createTestApp({ env, demoPages: true })
  const created = await testApp.app.services.shops.create({ domain: DEMO_DOMAIN, plan: 'scale' })
  await testApp.app.services.shops.updateSettings(created.shop.id, { reviews_auto_approve: true, multi_wishlist_enabled: true })
  await testApp.app.listen({ host: '127.0.0.1', port: 0 })
  const address = testApp.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  const baseUrl = `http://127.0.0.1:${address.port}`
  return {
    baseUrl,
    testApp,
    storefrontKey: created.shop.storefrontKey,
    adminKey: { keyId: created.apiKey.keyId, secret: created.apiKey.secret },
    async customerToken(customerId) {
      const res = await testApp.call('POST', '/demo/login', { body: { customerId } })
      return res.body.data.token as string
    },
    close: () => testApp.close(),
  }
}

export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (never download a browser)`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  })
}
