/**
 * The Shopify catalog sync (docs/shopify.md, "The catalog sync") against the local Shopify
 * emulator: the backfill after a shop's first token exchange and on demand, written as the
 * products webhooks write (no signal for a first sight, nothing rewritten when equal, the
 * newer `updatedAt` wins), its progress in the setup guide, the throttle waited out, a failed
 * run started again, and a run taken over after its instance stopped.
 */
import { Kind, parse, type SelectionSetNode } from 'graphql'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CATALOG_SYNC_LEASE_MS } from '../../src/platforms/shopify/catalog-sync.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { freshDatabase } from '../helpers/db.js'
import { newShopDomain, proxyCall, sendShopifyWebhook, sessionToken } from '../helpers/shopify.js'
import { connection, type ShopifyEmulator, startShopifyEmulator } from '../helpers/shopify-emulator.js'

let emulator: ShopifyEmulator
let t: TestApp
/** One token key for every instance on the test's database (a second instance must open the tokens). */
const env = () => ({ ...emulator.env, SHOPIFY_TOKEN_KEY: 'ab'.repeat(32) })

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  t = await createTestApp({ env: env() })
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

interface VariantInit {
  id: number
  price: string
  inventoryQuantity: number | null
}
/** A product as the Admin API holds it. */
const product = (id: number, updatedAt: string, variants: VariantInit[], title = `Hat ${id}`, image?: string) => ({
  __typename: 'Product',
  id: `gid://shopify/Product/${id}`,
  handle: `hat-${id}`,
  title,
  featuredImage: image === undefined ? null : { __typename: 'Image', url: image, altText: 'Not read' },
  updatedAt,
  status: 'ACTIVE',
  descriptionHtml: '<p>Not read by the sync</p>',
  variants: connection(
    variants.map((v) => ({
      __typename: 'ProductVariant',
      id: `gid://shopify/ProductVariant/${v.id}`,
      price: v.price,
      inventoryQuantity: v.inventoryQuantity,
      sku: `SKU-${v.id}`,
    })),
  ),
})

const shopOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!
const admin = async (domain: string) => ({ token: await sessionToken(domain) })
const setup = async (domain: string, app = t) => {
  const res = await app.call('GET', '/v1/admin/platform-setup', await admin(domain))
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.catalog
}
const sync = async (domain: string) => t.call('POST', '/v1/admin/platform-setup/catalog-sync', await admin(domain))
/** Waits until the setup guide shows the catalog in `state` (what the merchant's admin sees). */
const catalogIn = (domain: string, state: string, app = t) =>
  vi.waitFor(
    async () => {
      const catalog = await setup(domain, app)
      expect(catalog.state).toBe(state)
      return catalog
    },
    { timeout: 10_000, interval: 10 },
  )
const rows = async (domain: string) =>
  t.storage.db
    .selectFrom('catalog_products')
    .select(['product_id', 'handle', 'title', 'variants', 'source_updated_at', 'updated_at'])
    .where('shop_id', '=', (await shopOf(domain)).id)
    .orderBy('product_id')
    .execute()
const count = async (table: string, domain: string) =>
  Number(
    (
      await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where shop_id = ${(await shopOf(domain)).id}`.execute(
        t.storage.db,
      )
    ).rows[0]!.n,
  )
/** What the shop's holders could be told: outbox events, queued fan-outs and recorded signals. */
const signalled = async (domain: string) =>
  (await count('outbox', domain)) + (await count('outbox_fan_outs', domain)) + (await count('analytics_signals', domain))
const requestsOf = (domain: string, field: string) => emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields.includes(field))

const SIGNALS = ['wishlist.product.back_in_stock', 'wishlist.product.price_dropped', 'wishlist.product.low_stock']
/** A shop installed through its first session (its catalog sync starts), with a customer holding `held` and a webhook taking every event. */
async function installed(products: ReturnType<typeof product>[], held = '9001') {
  const domain = newShopDomain()
  emulator.addShop(domain, { products })
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const shop = await shopOf(domain)
  await t.app.services.shops.setPlan(shop.id, 'growth')
  const hooked = await t.call('POST', '/v1/webhooks', {
    ...(await admin(domain)),
    body: { url: 'https://hooks.example.com/w', events: SIGNALS },
  })
  expect(hooked.status, JSON.stringify(hooked.body)).toBe(201)
  const added = await proxyCall(t, 'POST', '/v1/wishlists/me/items', { shop: domain, customerId: '7701' }, { body: { product_id: held } })
  expect(added.status, JSON.stringify(added.body)).toBeLessThan(300)
  return domain
}

/** Every field name a GraphQL selection asks, nested ones as `parent.child`. */
function fieldsAsked(selection: SelectionSetNode | undefined, prefix = ''): string[] {
  return (selection?.selections ?? []).flatMap((s) => {
    if (s.kind !== Kind.FIELD) return []
    const name = s.name.value
    const skip = ['edges', 'node', 'nodes'].includes(name)
    const path = skip ? prefix : prefix === '' ? name : `${prefix}.${name}`
    return [...(skip || s.selectionSet !== undefined ? [] : [path]), ...fieldsAsked(s.selectionSet, path)]
  })
}

describe('the catalog sync after install', () => {
  it('fills the catalog from one bulk query (titles, handles, images, variants, prices) with no signal or event, and a second run changes nothing', async () => {
    const domain = await installed([
      product(9001, '2026-11-20T10:00:00Z', [
        { id: 90011, price: '19.90', inventoryQuantity: 0 },
        { id: 90012, price: '24.00', inventoryQuantity: 7 },
      ]),
      product(9002, '2026-11-21T10:00:00Z', [{ id: 90021, price: '5', inventoryQuantity: null }], 'Scarf'),
      product(
        9003,
        '2026-11-22T10:00:00Z',
        [{ id: 90031, price: '120.5', inventoryQuantity: 2 }],
        'Hat 9003',
        'https://cdn.shopify.com/s/files/hat-9003.jpg',
      ),
    ])
    const done = await catalogIn(domain, 'done')
    // The featured image is kept (notifications carry it); a product without one has none.
    const images = await t.storage.db
      .selectFrom('catalog_products')
      .select(['product_id', 'image_url'])
      .where('shop_id', '=', (await shopOf(domain)).id)
      .orderBy('product_id')
      .execute()
    expect(images).toEqual([
      { product_id: '9001', image_url: null },
      { product_id: '9002', image_url: null },
      { product_id: '9003', image_url: 'https://cdn.shopify.com/s/files/hat-9003.jpg' },
    ])
    expect(done).toMatchObject({
      products: 3,
      sync: { productsRead: 3, productsChanged: 3, error: null, finishedAt: expect.any(String) },
    })
    const filled = await rows(domain)
    expect(filled.map((r) => ({ ...r, variants: JSON.parse(r.variants), source_updated_at: Number(r.source_updated_at) }))).toEqual([
      {
        product_id: '9001',
        handle: 'hat-9001',
        title: 'Hat 9001',
        variants: [
          { variant_id: '90011', price: '19.90', inventory_quantity: 0 },
          { variant_id: '90012', price: '24.00', inventory_quantity: 7 },
        ],
        source_updated_at: Date.parse('2026-11-20T10:00:00Z'),
        updated_at: expect.anything(),
      },
      {
        product_id: '9002',
        handle: 'hat-9002',
        title: 'Scarf',
        // Untracked inventory: nothing to compare, as the products webhook reads it.
        variants: [{ variant_id: '90021', price: '5.00', inventory_quantity: 0 }],
        source_updated_at: Date.parse('2026-11-21T10:00:00Z'),
        updated_at: expect.anything(),
      },
      {
        product_id: '9003',
        handle: 'hat-9003',
        title: 'Hat 9003',
        variants: [{ variant_id: '90031', price: '120.50', inventory_quantity: 2 }],
        source_updated_at: Date.parse('2026-11-22T10:00:00Z'),
        updated_at: expect.anything(),
      },
    ])
    // A first sight is a baseline: a held product's state tells its holder nothing.
    expect(await signalled(domain)).toBe(0)

    // One bulk operation, asking only what the catalog keeps; no paginated product reads.
    const [run] = requestsOf(domain, 'bulkOperationRunQuery')
    expect(requestsOf(domain, 'bulkOperationRunQuery')).toHaveLength(1)
    expect(requestsOf(domain, 'products')).toHaveLength(0)
    const bulkQuery = parse(String(run!.variables.query))
    const root = bulkQuery.definitions[0]!
    expect(root.kind === Kind.OPERATION_DEFINITION && fieldsAsked(root.selectionSet).sort()).toEqual(
      [
        'products.id',
        'products.handle',
        'products.title',
        'products.featuredImage.url',
        'products.updatedAt',
        'products.variants.id',
        'products.variants.price',
        'products.variants.inventoryQuantity',
      ].sort(),
    )

    // Again, on demand: the same products, nothing rewritten, nothing signalled.
    const again = await sync(domain)
    expect(again.status, JSON.stringify(again.body)).toBe(202)
    const second = await vi.waitFor(
      async () => {
        const catalog = await setup(domain)
        expect(catalog).toMatchObject({ state: 'done', sync: { startedAt: again.body.data.sync.startedAt } })
        return catalog
      },
      { timeout: 10_000, interval: 10 },
    )
    expect(second).toMatchObject({ products: 3, sync: { productsRead: 3, productsChanged: 0, error: null } })
    expect(await rows(domain)).toEqual(filled)
    expect(await signalled(domain)).toBe(0)
    expect(requestsOf(domain, 'bulkOperationRunQuery')).toHaveLength(2)
  })

  it('shows running while Shopify builds the file, answers a second request with the running sync, then done with its counts', async () => {
    const domain = await installed([])
    await catalogIn(domain, 'done')
    emulator.shop(domain).products = [
      product(9101, '2026-11-20T10:00:00Z', [{ id: 91011, price: '10.00', inventoryQuantity: 1 }]),
      product(9102, '2026-11-20T11:00:00Z', [{ id: 91021, price: '11.00', inventoryQuantity: 1 }]),
    ]
    const release = emulator.hold()
    let first: Awaited<ReturnType<typeof sync>>
    let second: Awaited<ReturnType<typeof sync>>
    try {
      first = await sync(domain)
      second = await sync(domain)
      expect(first.status, JSON.stringify(first.body)).toBe(202)
      expect(first.body.data).toMatchObject({
        state: 'running',
        products: 0,
        sync: { productsRead: 0, productsChanged: 0, finishedAt: null, error: null },
      })
      expect(second.status).toBe(202)
      expect(second.body.data).toEqual(first.body.data)
      expect(await setup(domain)).toEqual(first.body.data)
    } finally {
      release()
    }
    const done = await vi.waitFor(
      async () => {
        const catalog = await setup(domain)
        expect(catalog).toMatchObject({ state: 'done', sync: { startedAt: first.body.data.sync.startedAt } })
        return catalog
      },
      { timeout: 10_000, interval: 10 },
    )
    expect(done).toMatchObject({ products: 2, sync: { productsRead: 2, productsChanged: 2, error: null } })
    // One run: one bulk operation since the install's.
    expect(requestsOf(domain, 'bulkOperationRunQuery')).toHaveLength(2)
  })
})

describe('the sync and the products webhooks', () => {
  const webhook = (domain: string, id: number, updatedAt: string, quantity: number, price = '10.00') =>
    sendShopifyWebhook(
      t,
      {
        id,
        title: `Hat ${id}`,
        handle: `hat-${id}`,
        updated_at: updatedAt,
        variants: [{ id: id * 10 + 1, price, inventory_quantity: quantity }],
      },
      { topic: 'products/update', shop: domain },
    )
  const variantsOf = async (domain: string, id: string) => {
    const row = (await rows(domain)).find((r) => r.product_id === id)
    return { variants: JSON.parse(row!.variants) as unknown[], sourceUpdatedAt: Number(row!.source_updated_at) }
  }

  it('a webhook newer than the file wins; one older than the synced state is ignored; a newer one applies', async () => {
    const domain = await installed([], '9201')
    await catalogIn(domain, 'done')
    // Sold out at 12:00, as a webhook says; Shopify's file still has the 10:00 state.
    expect((await webhook(domain, 9201, '2026-11-20T12:00:00Z', 0)).body.data.result).toBe('processed')
    emulator.shop(domain).products = [
      product(9201, '2026-11-20T10:00:00Z', [{ id: 92011, price: '10.00', inventoryQuantity: 5 }]),
      product(9202, '2026-11-20T10:00:00Z', [{ id: 92021, price: '10.00', inventoryQuantity: 5 }]),
    ]
    const started = await sync(domain)
    const done = await vi.waitFor(
      async () => {
        const catalog = await setup(domain)
        expect(catalog).toMatchObject({ state: 'done', sync: { startedAt: started.body.data.sync.startedAt } })
        return catalog
      },
      { timeout: 10_000, interval: 10 },
    )
    expect(done).toMatchObject({ products: 2, sync: { productsRead: 2, productsChanged: 1 } })
    expect(await variantsOf(domain, '9201')).toEqual({
      variants: [{ variant_id: '92011', price: '10.00', inventory_quantity: 0 }],
      sourceUpdatedAt: Date.parse('2026-11-20T12:00:00Z'),
    })
    expect(await signalled(domain)).toBe(0)

    // A webhook older than the synced 9202 (delivered late) is ignored; a newer one applies.
    expect((await webhook(domain, 9202, '2026-11-20T09:00:00Z', 0)).body.data.result).toBe('ignored')
    expect((await variantsOf(domain, '9202')).variants).toEqual([{ variant_id: '92021', price: '10.00', inventory_quantity: 5 }])
    expect((await webhook(domain, 9202, '2026-11-20T11:00:00Z', 3, '8.00')).body.data.result).toBe('processed')
    expect(await variantsOf(domain, '9202')).toEqual({
      variants: [{ variant_id: '92021', price: '8.00', inventory_quantity: 3 }],
      sourceUpdatedAt: Date.parse('2026-11-20T11:00:00Z'),
    })
  })

  it('brings a product a webhook wrote earlier up to date, signalling its real change to the holder (back in stock)', async () => {
    const domain = await installed([], '9301')
    await catalogIn(domain, 'done')
    expect((await webhook(domain, 9301, '2026-11-20T08:00:00Z', 0)).body.data.result).toBe('processed')
    expect(await signalled(domain)).toBe(0)
    // Back in stock at 10:00; its webhook has not arrived.
    emulator.shop(domain).products = [product(9301, '2026-11-20T10:00:00Z', [{ id: 93011, price: '10.00', inventoryQuantity: 4 }])]
    const started = await sync(domain)
    await vi.waitFor(
      async () => expect(await setup(domain)).toMatchObject({ state: 'done', sync: { startedAt: started.body.data.sync.startedAt } }),
      { timeout: 10_000, interval: 10 },
    )
    expect((await variantsOf(domain, '9301')).variants).toEqual([{ variant_id: '93011', price: '10.00', inventory_quantity: 4 }])
    expect(await count('outbox_fan_outs', domain)).toBe(1)
    // The late webhook of that change is then older than the catalog's: ignored, not signalled twice.
    expect((await webhook(domain, 9301, '2026-11-20T10:00:00Z', 4)).body.data.result).toBe('ignored')
    expect(await count('outbox_fan_outs', domain)).toBe(1)
  })
})

describe('a sync that meets trouble', () => {
  it("waits out Shopify's THROTTLED answers", async () => {
    const domain = await installed([])
    await catalogIn(domain, 'done')
    const shop = emulator.shop(domain)
    shop.products = [product(9401, '2026-11-20T10:00:00Z', [{ id: 94011, price: '3.00', inventoryQuantity: 9 }])]
    // The bucket is empty and refills 20 points a second: the next request waits about 50 ms.
    shop.bucket = { maximumAvailable: 100, restoreRate: 20, currentlyAvailable: 0 }
    shop.bucketAt = performance.now()
    const started = await sync(domain)
    expect(started.status).toBe(202)
    const done = await vi.waitFor(
      async () => {
        const catalog = await setup(domain)
        expect(catalog).toMatchObject({ state: 'done', sync: { startedAt: started.body.data.sync.startedAt } })
        return catalog
      },
      { timeout: 10_000, interval: 10 },
    )
    expect(done).toMatchObject({ products: 1, sync: { productsRead: 1, productsChanged: 1, error: null } })
    const runs = requestsOf(domain, 'bulkOperationRunQuery')
    expect(runs.some((r) => r.throttled !== undefined)).toBe(true)
    expect(runs.at(-1)).toMatchObject({ status: 200, throttled: undefined })
  })

  it('a bulk operation Shopify fails shows failed with its error, and the next sync runs again', async () => {
    const domain = await installed([])
    await catalogIn(domain, 'done')
    const shop = emulator.shop(domain)
    shop.products = [product(9501, '2026-11-20T10:00:00Z', [{ id: 95011, price: '3.00', inventoryQuantity: 9 }])]
    shop.bulkErrorCode = 'ACCESS_DENIED'
    expect((await sync(domain)).status).toBe(202)
    const failed = await catalogIn(domain, 'failed')
    expect(failed).toMatchObject({
      products: 0,
      sync: {
        productsRead: 0,
        productsChanged: 0,
        error: "Shopify's bulk operation ended FAILED (ACCESS_DENIED)",
        finishedAt: expect.any(String),
      },
    })

    shop.bulkErrorCode = null
    const again = await sync(domain)
    expect(again.body.data).toMatchObject({ state: 'running', sync: { error: null, finishedAt: null } })
    expect(await catalogIn(domain, 'done')).toMatchObject({ products: 1, sync: { productsRead: 1, error: null } })
  })

  it('a shop without Admin API access is told to open the app first', async () => {
    const shop = await t.createShop()
    const res = await t.call('POST', '/v1/admin/platform-setup/catalog-sync', { token: await shop.adminToken() })
    expect(res.status).toBe(403)
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('Admin API access') })
    const guide = await t.call('GET', '/v1/admin/platform-setup', { token: await shop.adminToken() })
    expect(guide.body.data.catalog).toEqual({ state: 'not_started', products: 0, updatedAt: null, sync: null })
  })
})

describe('a sync whose instance stopped', () => {
  it('is taken over by the next instance to start once its lease has passed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wishlist-catalog-sync-'))
    const database = await freshDatabase({ sqliteFile: join(dir, 'shared.db') })
    const first = await createTestApp({ env: env(), database })
    let next: TestApp | undefined
    try {
      const domain = newShopDomain()
      emulator.addShop(domain)
      const res = await first.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
      expect(res.status).toBe(200)
      await catalogIn(domain, 'done', first)
      emulator.shop(domain).products = [product(9601, '2026-11-20T10:00:00Z', [{ id: 96011, price: '3.00', inventoryQuantity: 9 }])]
      // Its instance stopped mid-run: the row says running, its lease passed.
      const startedAt = Date.now() - 2 * CATALOG_SYNC_LEASE_MS
      await first.storage.db
        .updateTable('shopify_catalog_syncs')
        .set({
          state: 'running',
          run_id: 'stopped-run',
          lease_until: startedAt + CATALOG_SYNC_LEASE_MS,
          started_at: startedAt,
          finished_at: null,
        })
        .execute()
      await first.close()
      expect(emulator.shop(domain).bulkOperations).toHaveLength(1)

      next = await createTestApp({ env: env(), database })
      const done = await catalogIn(domain, 'done', next)
      expect(done).toMatchObject({ products: 1, sync: { productsRead: 1, productsChanged: 1, error: null } })
      expect(Date.parse(done.sync.startedAt)).toBeGreaterThan(startedAt)
    } finally {
      await next?.close()
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
