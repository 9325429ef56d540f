/**
 * Shopify app mode's Admin API access (docs/shopify.md, "Admin API access") against the local
 * Shopify emulator: the session-token exchange at a shop's session, tokens sealed at rest,
 * refresh before expiry with rotating refresh tokens (one spent by two instances refreshing
 * at once), the cost-based throttle, the shop's Shopify id, and the tokens' end at an
 * uninstall and an erasure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../src/db/connect.js'
import type { Db } from '../../src/db/types.js'
import { createShopifyAdmin, MAX_THROTTLE_WAIT_MS, ShopifyAdminError } from '../../src/platforms/shopify/admin-api.js'
import { SESSION_EXCHANGE_WAIT_MS } from '../../src/platforms/shopify/embedded-admin.service.js'
import { shopErasureRepo } from '../../src/platforms/shopify/shop-erasure.repo.js'
import { createTokenCipher } from '../../src/platforms/shopify/token-cipher.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { BACKEND } from '../helpers/db.js'
import { catalogSyncOver, newShopDomain, sendShopifyWebhook, sessionToken } from '../helpers/shopify.js'
import { connection, type ShopifyEmulator, startShopifyEmulator, TOKEN_EXCHANGE_GRANT } from '../helpers/shopify-emulator.js'

let emulator: ShopifyEmulator
let t: TestApp

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  t = await createTestApp({ env: emulator.env })
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

const session = async (domain: string) => {
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res
}
const shopOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!
const row = async (domain: string) =>
  t.storage.db
    .selectFrom('shopify_access_tokens')
    .selectAll()
    .where('shop_id', '=', (await shopOf(domain)).id)
    .executeTakeFirst()
/** The catalog sync an exchange starts (catalog-sync.ts) has ended: its Admin API calls no longer mix with the test's. */
const syncEnded = async (domain: string) => catalogSyncOver(t, (await shopOf(domain)).id)
const exchangesOf = (domain: string) => emulator.tokenRequests.filter((r) => r.shop === domain && r.grantType === TOKEN_EXCHANGE_GRANT)
const refreshesOf = (domain: string) => emulator.tokenRequests.filter((r) => r.shop === domain && r.grantType === 'refresh_token')
const issuedTo = (domain: string) => emulator.tokens.filter((x) => x.shop === domain)
/** An Admin API client of its own on the app's database: another instance of the service. */
const anotherInstance = (db: Db = t.storage.db) =>
  createShopifyAdmin({ db, config: t.config.shopify!, shops: t.app.services.shops, log: t.app.log })
/** The shop's access token as if most of its hour had passed (`ms` from now). */
const expiresIn = async (domain: string, ms: number) =>
  t.storage.db
    .updateTable('shopify_access_tokens')
    .set({ access_expires_at: Date.now() + ms })
    .where('shop_id', '=', (await shopOf(domain)).id)
    .execute()

/** A shop installed through its first session, holding its tokens. */
async function installed(init: Parameters<ShopifyEmulator['addShop']>[1] = {}) {
  const domain = newShopDomain()
  emulator.addShop(domain, init)
  await session(domain)
  await syncEnded(domain)
  return { domain, shop: await shopOf(domain) }
}

describe('the session-token exchange at a shop session', () => {
  it("exchanges the first session's token for an expiring offline token, kept sealed, and stores the shop's Shopify id", async () => {
    const domain = newShopDomain()
    emulator.addShop(domain, { id: '71234567890' })
    const before = Date.now()
    await session(domain)
    expect(exchangesOf(domain)).toEqual([expect.objectContaining({ status: 200 })])
    const [issued] = issuedTo(domain)
    const stored = (await row(domain))!
    const shop = await shopOf(domain)
    // Sealed: neither token in clear, and each opens with the key for this shop and column only.
    expect(stored.access_token).toMatch(/^v1\./)
    expect(JSON.stringify(stored)).not.toContain(issued!.accessToken)
    expect(JSON.stringify(stored)).not.toContain(issued!.refreshToken)
    const cipher = createTokenCipher(t.config.shopify!.tokenKey)
    expect(cipher.open(shop.id, 'access_token', stored.access_token)).toBe(issued!.accessToken)
    expect(cipher.open(shop.id, 'refresh_token', stored.refresh_token!)).toBe(issued!.refreshToken)
    expect(() => cipher.open('another-shop', 'access_token', stored.access_token)).toThrow()
    expect(() => cipher.open(shop.id, 'refresh_token', stored.access_token)).toThrow()
    expect(stored.access_expires_at).toBeGreaterThanOrEqual(before + 3600_000)
    expect(stored.refresh_expires_at).toBeGreaterThanOrEqual(before + 90 * 86_400_000)
    expect(stored.scope).toBe('read_products,read_orders')

    // The shop's id read with the new token, from the pinned version (beside the catalog sync's calls).
    expect(shop.shopifyShopId).toBe('71234567890')
    await syncEnded(domain)
    expect(emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields[0] === 'shop')).toEqual([
      expect.objectContaining({ version: '2026-10', fields: ['shop'], token: issued!.accessToken, status: 200 }),
    ])

    // The next session finds a valid token: no exchange.
    await session(domain)
    expect(exchangesOf(domain)).toHaveLength(1)
  })

  it('exchanges as well when the session token is sent as the bearer credential of an admin call', async () => {
    const domain = newShopDomain()
    emulator.addShop(domain)
    const res = await t.call('GET', '/v1/admin/shop', { token: await sessionToken(domain) })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(exchangesOf(domain)).toEqual([expect.objectContaining({ status: 200 })])
    expect(await row(domain)).toBeDefined()
  })

  it('answers the session while Shopify cannot be reached, and exchanges at a later session', async () => {
    const domain = newShopDomain()
    emulator.addShop(domain)
    await emulator.goDown()
    try {
      const res = await session(domain)
      expect(res.body.data.token).toEqual(expect.any(String))
    } finally {
      await emulator.comeBack()
    }
    expect(await row(domain)).toBeUndefined()
    expect(exchangesOf(domain)).toHaveLength(0)

    await session(domain)
    expect(exchangesOf(domain)).toEqual([expect.objectContaining({ status: 200 })])
    expect(await row(domain)).toBeDefined()
    expect((await shopOf(domain)).shopifyShopId).toBe(emulator.shop(domain).id)
  })

  it('waits for a slow Shopify at most SESSION_EXCHANGE_WAIT_MS; the exchange finishes beside the answer, once', async () => {
    const domain = newShopDomain()
    emulator.addShop(domain)
    const release = emulator.hold()
    const started = performance.now()
    try {
      await session(domain)
    } finally {
      release()
    }
    const waited = performance.now() - started
    expect(waited).toBeGreaterThanOrEqual(SESSION_EXCHANGE_WAIT_MS - 50)
    expect(waited).toBeLessThan(SESSION_EXCHANGE_WAIT_MS + 1500)
    // The next session shares the exchange still in flight, or finds its token: one exchange.
    await session(domain)
    expect(await row(domain)).toBeDefined()
    expect(exchangesOf(domain)).toHaveLength(1)
  })

  it('runs the token-granted listeners after an exchange (they may call the API), and not again while the shop holds its token', async () => {
    const domain = newShopDomain()
    emulator.addShop(domain, { name: 'Linen & Co' })
    const shop = await t.app.services.shops.install(domain, 'free', Math.floor(Date.now() / 1000))
    const admin = anotherInstance()
    const granted: string[] = []
    admin.onTokenGranted(async (shopId) => {
      granted.push(`${shopId}: ${(await admin.graphql<{ shop: { name: string } }>(shopId, 'query { shop { name } }')).shop.name}`)
    })
    await admin.exchangeSessionToken(shop, await sessionToken(domain))
    expect(granted).toEqual([`${shop.id}: Linen & Co`])
    expect(await admin.hasToken(shop.id)).toBe(true)
    await admin.exchangeSessionToken(shop, await sessionToken(domain))
    expect(granted).toHaveLength(1)
  })
})

describe('calls of the Admin API', () => {
  it('refreshes a token before it expires, with the rotated refresh token kept', async () => {
    const { domain, shop } = await installed()
    const [first] = issuedTo(domain)
    await expiresIn(domain, 60_000)
    const admin = anotherInstance()
    expect(await admin.graphql<{ shop: { id: string } }>(shop.id, 'query { shop { id } }')).toEqual({
      shop: { id: `gid://shopify/Shop/${emulator.shop(domain).id}` },
    })
    expect(refreshesOf(domain)).toEqual([expect.objectContaining({ status: 200 })])
    const second = issuedTo(domain)[1]!
    // Refreshed while the first was still valid at Shopify; the call made with the new one.
    expect(first!.accessExpiresAt).toBeGreaterThan(refreshesOf(domain)[0]!.at)
    expect(first!.spent).toBe(true)
    expect(emulator.graphqlRequests.at(-1)).toMatchObject({ shop: domain, token: second.accessToken, status: 200 })
    const stored = (await row(domain))!
    expect(stored.generation).toBe(2)
    expect(createTokenCipher(t.config.shopify!.tokenKey).open(shop.id, 'refresh_token', stored.refresh_token!)).toBe(second.refreshToken)
    // Refreshed once: the next call uses it as it is.
    await admin.graphql(shop.id, 'query { shop { id } }')
    expect(refreshesOf(domain)).toHaveLength(1)
  })

  it('two instances refreshing an expired token at once spend its refresh token once; both calls succeed with the new one', async () => {
    const { domain, shop } = await installed()
    await expiresIn(domain, -1000)
    const second = BACKEND === 'postgres' ? openStorage(t.database.target) : undefined
    try {
      const [a, b] = [anotherInstance(), anotherInstance(second?.db)]
      const query = 'query { shop { id } }'
      const answers = await Promise.all([a.graphql(shop.id, query), b.graphql(shop.id, query), a.graphql(shop.id, query)])
      expect(answers).toEqual(Array(3).fill({ shop: { id: `gid://shopify/Shop/${emulator.shop(domain).id}` } }))
    } finally {
      await second?.destroy()
    }
    expect(refreshesOf(domain)).toEqual([expect.objectContaining({ status: 200 })])
    const fresh = issuedTo(domain)[1]!
    const calls = emulator.graphqlRequests.filter((r) => r.shop === domain).slice(-3)
    expect(calls.map((c) => [c.token, c.status])).toEqual(Array(3).fill([fresh.accessToken, 200]))
  })

  it("drops tokens Shopify refuses (401) and the shop's next session exchanges again", async () => {
    const { domain, shop } = await installed()
    emulator.revokeTokens(domain)
    const error = await anotherInstance()
      .graphql(shop.id, 'query { shop { id } }')
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ShopifyAdminError)
    expect((error as ShopifyAdminError).reason).toBe('unauthorized')
    expect(await row(domain)).toBeUndefined()
    await expect(anotherInstance().graphql(shop.id, 'query { shop { id } }')).rejects.toMatchObject({ reason: 'no-token' })
    await session(domain)
    expect(exchangesOf(domain)).toHaveLength(2)
    expect(await anotherInstance().hasToken(shop.id)).toBe(true)
  })

  it('drops tokens whose refresh token Shopify refuses', async () => {
    const { domain, shop } = await installed()
    await expiresIn(domain, -1000)
    emulator.revokeTokens(domain)
    await expect(anotherInstance().graphql(shop.id, 'query { shop { id } }')).rejects.toMatchObject({ reason: 'no-token' })
    expect(refreshesOf(domain)).toEqual([expect.objectContaining({ status: 400 })])
    expect(await row(domain)).toBeUndefined()
  })

  it('waits out THROTTLED for the time the cost extensions say, then succeeds', async () => {
    const { domain, shop } = await installed()
    emulator.handle('throttleProbe', () => ({ ok: true }))
    emulator.costs.set('throttleProbe', 100)
    // Empty, restoring 1,000 points a second: 100 ms until the query's 100 points are back.
    Object.assign(emulator.shop(domain).bucket, { maximumAvailable: 1000, restoreRate: 1000, currentlyAvailable: 0 })
    emulator.shop(domain).bucketAt = performance.now()
    expect(await anotherInstance().graphql(shop.id, 'query Probe { throttleProbe { ok } }')).toEqual({ throttleProbe: { ok: true } })
    const calls = emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields[0] === 'throttleProbe')
    expect(calls.map((c) => [c.status, c.throttled !== undefined])).toEqual([
      [200, true],
      [200, false],
    ])
    // Retried once the bucket held the query's cost again, not before.
    const { requestedQueryCost, currentlyAvailable, restoreRate } = calls[0]!.throttled!
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(
      Math.floor(((requestedQueryCost - currentlyAvailable) / restoreRate) * 1000) - 2,
    )
  })

  it('gives up at once (throttled) when the bucket needs longer than MAX_THROTTLE_WAIT_MS', async () => {
    const { domain, shop } = await installed()
    emulator.handle('slowProbe', () => ({ ok: true }))
    emulator.costs.set('slowProbe', 100)
    Object.assign(emulator.shop(domain).bucket, { maximumAvailable: 1000, restoreRate: 1, currentlyAvailable: 0 })
    emulator.shop(domain).bucketAt = performance.now()
    const error = await anotherInstance()
      .graphql(shop.id, 'query { slowProbe { ok } }')
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ reason: 'throttled' })
    // 100 points at 1 a second: 100 s, beyond the bound.
    expect((error as Error).message).toContain('in 100000 ms')
    expect(100_000).toBeGreaterThan(MAX_THROTTLE_WAIT_MS)
    expect(emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields[0] === 'slowProbe')).toHaveLength(1)
  })

  it('answers GraphQL errors as failed, with the errors', async () => {
    const { shop } = await installed()
    const error = await anotherInstance()
      .graphql(shop.id, 'query { noSuchField }')
      .catch((e: unknown) => e)
    expect(error).toMatchObject({
      reason: 'failed',
      errors: [expect.objectContaining({ message: "Field 'noSuchField' doesn't exist on type 'QueryRoot'" })],
    })
  })
})

describe('the end of the tokens', () => {
  it('deletes them when the app is uninstalled', async () => {
    const { domain, shop } = await installed()
    // Shopify revokes the tokens first: the uninstall is confirmed.
    emulator.revokeTokens(domain)
    const res = await sendShopifyWebhook(
      t,
      { id: Number(emulator.shop(domain).id), myshopify_domain: domain },
      { topic: 'app/uninstalled', shop: domain },
    )
    expect(res.body).toEqual({ ok: true, data: { result: 'processed' } })
    expect(await row(domain)).toBeUndefined()
    expect(await anotherInstance().hasToken(shop.id)).toBe(false)
  })

  it("erases them with the shop's other rows", async () => {
    const { shop } = await installed()
    expect(await shopErasureRepo.scopedTables(t.storage.db)).toContain('shopify_access_tokens')
    const counts = await shopErasureRepo.erase(t.storage.db, shop.id)
    expect(counts.shopify_access_tokens).toBe(1)
    expect(await t.storage.db.selectFrom('shopify_access_tokens').select('shop_id').where('shop_id', '=', shop.id).execute()).toEqual([])
    t.app.services.shops.forget(shop)
  })
})

describe("the emulator's built-in answers, through the Admin API client", () => {
  const product = (n: number) => ({
    __typename: 'Product',
    id: `gid://shopify/Product/${n}`,
    handle: `linen-shirt-${n}`,
    title: `Linen shirt ${n}`,
    variants: connection([{ id: `gid://shopify/ProductVariant/${n}1`, price: '49.00', inventoryQuantity: n }]),
  })

  it('pages products, cut to the fields selected', async () => {
    const { shop } = await installed({ products: [1, 2, 3].map(product) })
    const admin = anotherInstance()
    type Page = { products: { nodes: { handle: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }
    const query =
      'query Products($after: String) { products(first: 2, after: $after) { nodes { handle } pageInfo { hasNextPage endCursor } } }'
    const first = await admin.graphql<Page>(shop.id, query)
    expect(first.products.nodes).toEqual([{ handle: 'linen-shirt-1' }, { handle: 'linen-shirt-2' }])
    expect(first.products.pageInfo.hasNextPage).toBe(true)
    const second = await admin.graphql<Page>(shop.id, query, { after: first.products.pageInfo.endCursor })
    expect(second.products).toEqual({
      nodes: [{ handle: 'linen-shirt-3' }],
      pageInfo: { hasNextPage: false, endCursor: expect.any(String) },
    })
  })

  it('runs a bulk query, polled to COMPLETED, its JSONL with the variants under their product', async () => {
    const { shop } = await installed({ products: [1, 2].map(product) })
    const admin = anotherInstance()
    const bulk = 'query { products { edges { node { id handle variants { edges { node { id price } } } } } } }'
    const run = await admin.graphql<{ bulkOperationRunQuery: { bulkOperation: { id: string; status: string }; userErrors: unknown[] } }>(
      shop.id,
      'mutation Run($query: String!) { bulkOperationRunQuery(query: $query) { bulkOperation { id status } userErrors { field message } } }',
      { query: bulk },
    )
    expect(run.bulkOperationRunQuery).toEqual({
      bulkOperation: { id: expect.stringMatching(/^gid:\/\/shopify\/BulkOperation\//), status: 'CREATED' },
      userErrors: [],
    })
    const polled = await admin.graphql<{ node: { status: string; objectCount: string; url: string } }>(
      shop.id,
      'query Poll($id: ID!) { node(id: $id) { ... on BulkOperation { status objectCount url } } }',
      { id: run.bulkOperationRunQuery.bulkOperation.id },
    )
    expect(polled.node).toMatchObject({ status: 'COMPLETED', objectCount: '4' })
    const lines = (await (await fetch(polled.node.url)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toEqual([
      { id: 'gid://shopify/Product/1', handle: 'linen-shirt-1' },
      { id: 'gid://shopify/ProductVariant/11', price: '49.00', __parentId: 'gid://shopify/Product/1' },
      { id: 'gid://shopify/Product/2', handle: 'linen-shirt-2' },
      { id: 'gid://shopify/ProductVariant/21', price: '49.00', __parentId: 'gid://shopify/Product/2' },
    ])
    expect(await admin.graphql(shop.id, 'query { currentBulkOperation { id status } }')).toEqual({
      currentBulkOperation: { id: run.bulkOperationRunQuery.bulkOperation.id, status: 'COMPLETED' },
    })
  })

  it('creates an app subscription pending approval; active ones are listed on the installation; orders by id', async () => {
    const { domain, shop } = await installed({ orders: [{ id: 'gid://shopify/Order/501', name: '#1001' }] })
    const admin = anotherInstance()
    const created = await admin.graphql<{
      appSubscriptionCreate: { appSubscription: { id: string; status: string }; confirmationUrl: string }
    }>(
      shop.id,
      `mutation Subscribe($name: String!, $returnUrl: URL!, $lineItems: [AppSubscriptionLineItemInput!]!) {
        appSubscriptionCreate(name: $name, returnUrl: $returnUrl, lineItems: $lineItems, test: true) {
          appSubscription { id status } confirmationUrl userErrors { field message }
        }
      }`,
      {
        name: 'Growth',
        returnUrl: 'https://wishlist.example.com/dashboard',
        lineItems: [{ plan: { appRecurringPricingDetails: { price: { amount: 19, currencyCode: 'USD' } } } }],
      },
    )
    expect(created.appSubscriptionCreate.appSubscription.status).toBe('PENDING')
    expect(created.appSubscriptionCreate.confirmationUrl).toMatch(new RegExp(`^https://${domain}/admin/charges/`))
    const active = 'query { currentAppInstallation { activeSubscriptions { id name status } } }'
    expect(await admin.graphql(shop.id, active)).toEqual({ currentAppInstallation: { activeSubscriptions: [] } })
    emulator.shop(domain).subscriptions[0]!.status = 'ACTIVE'
    expect(await admin.graphql(shop.id, active)).toEqual({
      currentAppInstallation: {
        activeSubscriptions: [{ id: created.appSubscriptionCreate.appSubscription.id, name: 'Growth', status: 'ACTIVE' }],
      },
    })
    const order = 'query Order($id: ID!) { order(id: $id) { id name } }'
    expect(await admin.graphql(shop.id, order, { id: 'gid://shopify/Order/501' })).toEqual({
      order: { id: 'gid://shopify/Order/501', name: '#1001' },
    })
    expect(await admin.graphql(shop.id, order, { id: 'gid://shopify/Order/502' })).toEqual({ order: null })
  })
})

describe('the emulator refuses what Shopify refuses', () => {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${emulator.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })

  it('the wrong client, a session token of another shop, an unknown shop, a spent refresh token', async () => {
    const { domain } = await installed()
    const exchange = async (shop: string, token: string, secret = emulator.apiSecret) =>
      post(`/${shop}/admin/oauth/access_token`, {
        client_id: emulator.apiKey,
        client_secret: secret,
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        requested_token_type: 'urn:shopify:params:oauth:token-type:offline-access-token',
        expiring: '1',
      })
    expect((await exchange(domain, await sessionToken(domain), 'not-the-secret')).status).toBe(401)
    expect((await exchange(domain, await sessionToken(newShopDomain()))).status).toBe(400)
    expect((await exchange(domain, await sessionToken(domain, { secret: 'another-app' }))).status).toBe(400)
    expect((await exchange(newShopDomain(), await sessionToken(domain))).status).toBe(404)
    const spent = issuedTo(domain)[0]!.refreshToken
    const refresh = () =>
      post(`/${domain}/admin/oauth/access_token`, {
        client_id: emulator.apiKey,
        client_secret: emulator.apiSecret,
        grant_type: 'refresh_token',
        refresh_token: spent,
      })
    expect((await refresh()).status).toBe(200)
    expect(await (await refresh()).json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('a token of another shop or none, a version Shopify does not name so', async () => {
    const a = await installed()
    const b = await installed()
    const token = issuedTo(a.domain)[0]!.accessToken
    const graphql = (domain: string, version: string, accessToken?: string) =>
      post(
        `/${domain}/admin/api/${version}/graphql.json`,
        { query: '{ shop { id } }' },
        accessToken === undefined ? {} : { 'x-shopify-access-token': accessToken },
      )
    expect((await graphql(a.domain, '2026-10', token)).status).toBe(200)
    expect((await graphql(b.domain, '2026-10', token)).status).toBe(401)
    expect((await graphql(a.domain, '2026-10')).status).toBe(401)
    expect((await graphql(a.domain, '2026-11', token)).status).toBe(404)
    expect((await graphql(a.domain, 'latest', token)).status).toBe(404)
  })
})
