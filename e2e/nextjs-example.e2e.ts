/**
 * The Next.js example (examples/nextjs), built with `next build` and run with `next start`
 * against the real server: the shared wishlist rendered on the server, the client wishlist
 * page with the SDK's React hooks and a customer token minted by the example's route handler.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Browser, BrowserContext, Page, Route } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { createWishlistClient, type WishlistClient } from 'wishlist-service-sdk'
import { seriousViolations } from './helpers/axe.js'
import { type Env, launchChromium, startEnv } from './helpers/env.js'

const EXAMPLE = fileURLToPath(new URL('../examples/nextjs/', import.meta.url))
const NEXT_BIN = createRequire(`${EXAMPLE}package.json`).resolve('next/dist/bin/next')
/** The example's customer (its session stands in for a login) and another one who shares a list. */
const CUSTOMER = '4001'
const SHARER = '4100'

let env: Env
let browser: Browser
let context: BrowserContext
let page: Page
let next: ChildProcess | undefined
let site: string
/** The merchant's admin client, to set up data and check what the server holds. */
let admin: WishlistClient
/** The API key the example runs with: a customer-scope key (it can mint customer tokens only). */
let exampleKey: { keyId: string; secret: string }

const nextEnv = (extra: Record<string, string> = {}) => ({
  ...process.env,
  NEXT_TELEMETRY_DISABLED: '1',
  NODE_ENV: 'production',
  ...extra,
})

/** `next start` on a free port; resolves with its address once it is ready. */
async function startNext(extra: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [NEXT_BIN, 'start', '--hostname', '127.0.0.1', '--port', '0'], {
    cwd: EXAMPLE,
    env: nextEnv(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  next = child
  let output = ''
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString()
      const url = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
      if (url && output.includes('Ready')) resolve(url)
    })
    child.once('exit', (code) => reject(new Error(`next start exited (${code}):\n${output}`)))
  })
}

beforeAll(async () => {
  const t0 = Date.now()
  const build = promisify(execFile)(process.execPath, [NEXT_BIN, 'build'], { cwd: EXAMPLE, env: nextEnv(), maxBuffer: 16 * 1024 * 1024 })
  build.catch(() => {}) // awaited below; not an unhandled rejection if the server fails to start first
  ;[env, browser] = await Promise.all([startEnv(), launchChromium()])
  admin = createWishlistClient({ baseUrl: env.baseUrl, credentials: { apiKey: env.adminKey.keyId, apiSecret: env.adminKey.secret } })
  const key = await admin.admin.createApiKey({ name: 'Next.js example', scope: 'customer' })
  exampleKey = { keyId: key.keyId, secret: key.secret }
  await build
  console.log(`next build took ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  site = await startNext({
    WISHLIST_URL: env.baseUrl,
    WISHLIST_STOREFRONT_KEY: env.storefrontKey,
    WISHLIST_API_KEY: exampleKey.keyId,
    WISHLIST_API_SECRET: exampleKey.secret,
    WISHLIST_CUSTOMER_ID: CUSTOMER,
  })
}, 180_000)

afterAll(async () => {
  if (next && next.exitCode === null && next.signalCode === null) {
    next.kill('SIGTERM')
    await once(next, 'exit')
  }
  await browser?.close()
  await env?.close()
})

beforeEach(async () => {
  // Each test starts from an empty wishlist of the example's customer.
  await admin.admin.eraseCustomer(CUSTOMER)
  context = await browser.newContext()
  page = await context.newPage()
})
afterEach(() => context.close())

/** The page's text as a browser without JavaScript shows it: no scripts, no tags. */
const visibleText = (html: string) =>
  html
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<!-- -->/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')

/** Holds the browser's adds (POST …/items) until `release()`: what shows meanwhile is optimistic. */
async function holdAdds(): Promise<{ release: () => void; held: Promise<void> }> {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  let seen!: () => void
  const held = new Promise<void>((r) => (seen = r))
  await page.route('**/v1/wishlists/*/items', async (route: Route) => {
    if (route.request().method() !== 'POST') return route.continue()
    seen()
    await gate
    await route.continue()
  })
  return { release, held }
}

const product = (title: string) => page.locator('ul.products li').filter({ hasText: title })
const saved = () => page.locator('[data-testid="saved-items"] li strong')

describe('Next.js example (examples/nextjs)', () => {
  test('the shared wishlist page: list name and items in the HTML from the server; an unknown link is not found', async () => {
    const sharer = createWishlistClient({
      baseUrl: env.baseUrl,
      credentials: { apiKey: env.adminKey.keyId, apiSecret: env.adminKey.secret, customerId: SHARER },
    })
    const { wishlist } = await sharer.lists.create(SHARER, 'Birthday ideas')
    const scope = { wishlistId: wishlist.wishlistId }
    await sharer.wishlist.add(SHARER, { product_id: '7002', quantity: 2, note: 'Size M, navy' }, scope)
    await sharer.wishlist.add(SHARER, { product_id: '7004' }, scope)
    await admin.events.send({
      events: [{ type: 'order.created', order_id: '9001', customer_id: SHARER, line_items: [{ product_id: '7004' }] }],
    })
    await expect
      .poll(
        async () =>
          (await sharer.wishlist.get(SHARER, { wishlist_id: wishlist.wishlistId })).items.find((i) => i.productId === '7004')?.purchasedAt,
      )
      .toBeTruthy()
    const { token } = await sharer.share.get(SHARER, scope)

    // A plain request, no JavaScript: the server's HTML already holds the list.
    const res = await fetch(`${site}/shared/${token}`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('<title>Birthday ideas · Wishlist example</title>')
    expect(html).toContain('<h1>Birthday ideas</h1>')
    const text = visibleText(html)
    expect(text).toContain('Linen shirt #7002 Quantity: 2 Note: Size M, navy Not purchased yet')
    expect(text).toMatch(/Ceramic mug #7004 Quantity: 1 Purchased on \d{1,2} \w+ \d{4}/)

    await page.goto(`${site}/shared/${token}`)
    expect(await page.title()).toBe('Birthday ideas · Wishlist example')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Birthday ideas')
    expect(await page.locator('ul.items li strong').allTextContents()).toEqual(['Ceramic mug', 'Linen shirt'])
    expect(await seriousViolations(page)).toEqual([])

    // Unknown (and, the same for the service, revoked) links: 404 and a clear page.
    await sharer.share.revoke(SHARER, scope)
    for (const url of [`${site}/shared/${token}`, `${site}/shared/no-such-link`]) {
      expect((await fetch(url)).status).toBe(404)
      await page.goto(url)
      await page.getByRole('heading', { level: 1, name: 'This wishlist is not available' }).waitFor()
    }
    expect(await seriousViolations(page)).toEqual([])
  })

  test('the wishlist page: an add shows at once, the server confirms it, and it is there after a reload', async () => {
    // The merchant's API key stays on the server: not in the page, not in its scripts.
    const html = await (await fetch(`${site}/wishlist`)).text()
    expect(html).not.toContain(exampleKey.secret)
    expect(html).not.toContain(exampleKey.keyId)
    const tokenCalls: string[] = []
    const requestBodies: string[] = []
    page.on('request', (r) => {
      if (r.url().endsWith('/api/wishlist-token')) tokenCalls.push(r.method())
      requestBodies.push(r.postData() ?? '')
    })

    await page.goto(`${site}/wishlist`)
    await page.getByText('Nothing saved yet.').waitFor()
    expect(await seriousViolations(page)).toEqual([])

    const adds = await holdAdds()
    await product('Rain jacket').getByRole('button', { name: 'Add to wishlist' }).click()
    await adds.held
    // The service has not answered yet (its answer is held): the item shows already.
    await expect.poll(() => saved().allTextContents()).toEqual(['Rain jacket'])
    expect(await product('Rain jacket').getByRole('button').textContent()).toBe('Remove from wishlist')
    adds.release()
    await expect.poll(() => page.getByRole('main').getByRole('status').textContent()).toBe('Rain jacket was added to your wishlist.')
    expect(await page.getByRole('heading', { name: /^Saved items/ }).textContent()).toBe('Saved items (1)')

    const stored = await admin.wishlist.get(CUSTOMER)
    expect(stored.items.map((i) => [i.productId, i.handle])).toEqual([['7005', 'rain-jacket']])
    expect(tokenCalls).toEqual(['POST'])
    expect(requestBodies.join('\n')).not.toContain(exampleKey.secret)

    await page.unroute('**/v1/wishlists/*/items')
    await page.reload()
    await expect.poll(() => saved().allTextContents()).toEqual(['Rain jacket'])
    expect(await product('Rain jacket').getByRole('button').textContent()).toBe('Remove from wishlist')
    expect(await seriousViolations(page)).toEqual([])
  })

  test('a refused add (the 2,500-item limit) is rolled back and the reason announced', async () => {
    // Fill the customer's lists to the limit through the merchant's import.
    for (let batch = 0; batch < 5; batch++) {
      const items = Array.from({ length: 500 }, (_, i) => ({ customer_id: CUSTOMER, product_id: String(8_000_000 + batch * 500 + i) }))
      expect((await admin.wishlist.import({ items })).imported).toBe(500)
    }

    await page.goto(`${site}/wishlist`)
    await expect.poll(() => page.getByRole('heading', { name: /^Saved items/ }).textContent()).toBe('Saved items (2500)')
    const adds = await holdAdds()
    await product('Wool scarf').getByRole('button', { name: 'Add to wishlist' }).click()
    await adds.held
    await expect.poll(() => saved().first().textContent()).toBe('Wool scarf')
    adds.release()

    await expect
      .poll(() => page.getByRole('main').getByRole('alert').first().textContent())
      .toBe('Wool scarf was not added: your wishlist is full (2,500 items). Remove something first.')
    expect(await saved().first().textContent()).not.toBe('Wool scarf')
    expect(await saved().count()).toBe(2500)
    expect(await product('Wool scarf').getByRole('button').textContent()).toBe('Add to wishlist')
    expect(await page.getByRole('main').getByRole('status').textContent()).toBe('')
    const first = await admin.wishlist.get(CUSTOMER, { limit: 1 })
    expect(first.total).toBe(2500)
    expect(first.items[0]?.productId).not.toBe('7003')
  })
})
