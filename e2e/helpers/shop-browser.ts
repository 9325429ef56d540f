/**
 * A storefront test's world: the service (startEnv), a shop origin serving the shop's own
 * pages (another origin than the service, as a storefront is), and Chromium with a fresh
 * context and page for each test; a test fails when its page threw. `useShopBrowser()`
 * registers the hooks; the bindings below are live (read them inside tests and hooks).
 */
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest'
import { type Env, launchChromium, startEnv } from './env.js'
import { type ShopOrigin, startShopOrigin } from './shop-origin.js'

export const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'screenshots')

export let env: Env
export let shop: ShopOrigin
export let page: Page
let browser: Browser
let context: BrowserContext
const pageErrors: string[] = []

export function useShopBrowser(): void {
  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    ;[shop, env, browser] = await Promise.all([startShopOrigin(), startEnv(), launchChromium()])
  })
  afterAll(async () => {
    await browser?.close()
    await env?.close()
    await shop?.close()
  })
  beforeEach(async () => {
    context = await browser.newContext()
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
    page.on('pageerror', (err) => pageErrors.push(err.message))
  })
  afterEach(async () => {
    await context.close()
    expect(pageErrors.splice(0)).toEqual([])
  })
}
