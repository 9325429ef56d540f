import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { runCli } from '../helpers/cli.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'

const dir = mkdtempSync(join(tmpdir(), 'wishlist-privacy-cli-'))
let database: TestDatabase
let t: TestApp
let shop: TestShop

const cli = (...args: string[]) => runCli(database, ...args)

beforeAll(async () => {
  database = await freshDatabase({ sqliteFile: join(dir, 'cli.db') })
  t = await createTestApp({ database })
  shop = await t.createShop('starter', { reviews_auto_approve: true })
  const admin = await shop.adminToken()
  await t.call('POST', '/v1/wishlists/8001/items', { token: admin, body: { product_id: '11', handle: 'mug' } })
  await t.call('GET', '/v1/wishlists/8001/share', { token: admin })
  await t.call('POST', '/api/v1/reviews', {
    headers: { 'x-storefront-key': shop.storefrontKey },
    body: { productId: '11', customerEmail: 'cli@example.com', customerName: 'Cli Person', rating: 5, body: 'Fine.' },
  })
})
afterAll(async () => {
  await t.close()
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

// The commands run in process (`main()`, output captured): see test/helpers/cli.ts.
describe('wishlist customers export|erase', { timeout: 60_000 }, () => {
  it('export prints the JSON document', async () => {
    const res = await cli('customers', 'export', '--domain', shop.domain, '--customer', '8001', '--email', 'cli@example.com')
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    const doc = JSON.parse(res.stdout)
    expect(doc).toMatchObject({
      customerId: '8001',
      emails: ['cli@example.com'],
      lists: [{ wishlistId: 'default', items: [{ productId: '11', handle: 'mug' }] }],
    })
    expect(doc.shareLinks).toHaveLength(1)
    expect(doc.reviews).toEqual([expect.objectContaining({ customerEmail: 'cli@example.com', customerName: 'Cli Person' })])
  })

  it('erase prints the erased counts, then zeros', async () => {
    const res = await cli(
      'customers',
      'erase',
      '--domain',
      shop.domain,
      '--customer',
      'gid://shopify/Customer/8001',
      '--email',
      'cli@example.com',
    )
    expect(res.code).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ wishlists: 1, items: 1, shareLinks: 1, reviewsAnonymized: 1 })
    const again = await cli('customers', 'erase', '--domain', shop.domain, '--customer', '8001')
    expect(JSON.parse(again.stdout)).toMatchObject({ wishlists: 0, items: 0, shareLinks: 0, reviewsAnonymized: 0 })
  })

  it('refuses a missing or malformed customer and an unknown shop (exit 2)', async () => {
    expect((await cli('customers', 'export', '--domain', shop.domain)).code).toBe(2)
    expect((await cli('customers', 'erase', '--domain', shop.domain, '--customer', 'abc')).code).toBe(2)
    expect((await cli('customers', 'erase', '--domain', 'nobody.myshopify.com', '--customer', '1')).code).toBe(2)
  })
})
