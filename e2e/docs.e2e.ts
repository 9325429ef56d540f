/**
 * The browsable API reference at /docs (Scalar, rendering the served OpenAPI document) in
 * Chromium: it renders the operations and axe-core finds no serious or critical violation at a
 * laptop's and a phone's width. Its screenshots land in e2e/screenshots/ (gitignored;
 * `npm run screenshots -w e2e` copies those the docs show into docs/images).
 */
import { mkdirSync } from 'node:fs'
import { resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { seriousViolations, WIDTHS } from './helpers/axe.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), 'screenshots')

let env: Env
let browser: Browser

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  ;[env, browser] = await Promise.all([startEnv(), launchChromium()])
})
afterAll(async () => {
  await browser?.close()
  await env?.close()
})

test('/docs renders the served document with no serious or critical accessibility violation, at 1280 and 375 px, with nothing from another origin', async () => {
  for (const width of WIDTHS) {
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    const foreign: string[] = []
    page.on('request', (r) => {
      if (!r.url().startsWith(env.baseUrl) && !r.url().startsWith('data:')) foreign.push(r.url())
    })
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    const t0 = Date.now()
    await page.goto(`${env.baseUrl}/docs`, { timeout: 120_000 })
    console.log(`/docs loaded at ${width} px in ${Date.now() - t0} ms`)
    // The document, rendered: its title as the page's heading, its operations listed.
    await page.getByRole('heading', { level: 1 }).first().waitFor({ timeout: 60_000 })
    await page.getByText('Exchange an API key for an access token', { exact: true }).first().waitFor({ state: 'attached', timeout: 60_000 })
    expect(await page.getByText('Ask AI').count()).toBe(0)
    const started = Date.now()
    const found = await seriousViolations(page)
    console.log(`axe on /docs at ${width} px: ${Date.now() - started} ms`)
    expect(found, `/docs at ${width} px: ${JSON.stringify(found)}`).toEqual([])
    expect(foreign).toEqual([])
    expect(errors).toEqual([])
    await page.screenshot({ path: resolve(SCREENSHOTS, `api-reference-${width}.png`) })
    await page.close()
  }
  // A 4.8 MB script and a large document, then axe over a large page: slow on a shared machine.
}, 240_000)
