import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordPurchase } from '../../src/modules/reviews/purchases.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop // moderation on (pending by default)
let auto: TestShop // auto-approve on
let other: TestShop
let admin: string
let autoAdmin: string
let seq = 0

const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/
const sf = (s: TestShop = shop) => ({ 'x-storefront-key': s.storefrontKey })
const nextProduct = () => String(9_000_000 + ++seq)
const review = (over: Record<string, unknown> = {}) => ({
  productId: '1001',
  customerEmail: `buyer${++seq}@example.com`,
  customerName: 'Alice',
  rating: 5,
  title: 'Great',
  body: 'Works as described.',
  ...over,
})

/** Privacy rule: no public response ever carries an e-mail address. */
function expectNoEmail(body: unknown): void {
  const text = JSON.stringify(body)
  expect(text).not.toContain('customerEmail')
  expect(text).not.toContain('@example.com')
}

async function submit(s: TestShop, body: unknown, headers: Record<string, string> = sf(s)) {
  const res = await t.call('POST', '/api/v1/reviews', { headers, body })
  return res
}

/** Submits (as the customer, when given) and approves; returns the id. */
async function approved(productId: string, over: Record<string, unknown> = {}, customerId?: string): Promise<number> {
  const headers = customerId === undefined ? sf() : { ...sf(), authorization: `Bearer ${await shop.customerToken(customerId)}` }
  const res = await submit(shop, review({ productId, ...over }), headers)
  expect(res.status).toBe(201)
  const ok = await t.call('POST', `/api/v1/reviews/${res.body.id}/approve`, { token: admin })
  expect(ok.status).toBe(200)
  return res.body.id as number
}

async function setCreatedAt(id: number, ms: number): Promise<void> {
  await t.storage.db.updateTable('reviews').set({ created_at: ms }).where('id', '=', id).execute()
}

const list = (productId: string, query = '', s: TestShop = shop) =>
  t.call('GET', `/api/v1/products/${productId}/reviews${query}`, { headers: sf(s) })
const summary = (productId: string, s: TestShop = shop) =>
  t.call('GET', `/api/v1/products/${productId}/reviews/summary`, { headers: sf(s) })

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('free')
  auto = await t.createShop('free', { reviews_auto_approve: true })
  other = await t.createShop('free', { reviews_auto_approve: true })
  admin = await shop.adminToken()
  autoAdmin = await auto.adminToken()
})
afterAll(() => t.close())

describe('credentials', () => {
  it('answers 401 without a storefront key or token, in the reviews error shape', async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/products/1001/reviews'],
      ['GET', '/api/v1/products/1001/reviews/summary'],
      ['GET', '/api/v1/reviews/1'],
      ['POST', '/api/v1/reviews'],
      ['PUT', '/api/v1/reviews/1/helpful'],
      ['GET', '/api/v1/admin/reviews'],
    ] as const) {
      const res = await t.call(method, url, method === 'POST' ? { body: review() } : {})
      expect(res.status, `${method} ${url}`).toBe(401)
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } })
    }
    const bad = await list('1001', '', { ...shop, storefrontKey: 'sfk_unknown' })
    expect(bad.status).toBe(401)
    expect(bad.body.error.code).toBe('INVALID_CREDENTIALS')
  })

  it('works on the free plan with the storefront key, a guest id, a customer token or an admin token', async () => {
    const customer = await shop.customerToken('555')
    expect((await t.call('GET', '/api/v1/products/1001/reviews', { headers: sf() })).status).toBe(200)
    expect((await t.call('GET', '/api/v1/products/1001/reviews', { headers: shop.guest('guest_0001') })).status).toBe(200)
    expect((await t.call('GET', '/api/v1/products/1001/reviews', { token: customer })).status).toBe(200)
    expect((await t.call('GET', '/api/v1/products/1001/reviews', { token: admin })).status).toBe(200)
  })

  it('keeps moderation for admin tokens (403 for storefront and customer credentials)', async () => {
    const customer = await shop.customerToken('555')
    for (const opts of [{ headers: sf() }, { headers: shop.guest('guest_0001') }, { token: customer }]) {
      const res = await t.call('GET', '/api/v1/admin/reviews', opts)
      expect(res.status).toBe(403)
      expect(res.body.error.code).toBe('FORBIDDEN')
      expect(res.body.ok).toBeUndefined()
    }
    const approve = await t.call('POST', '/api/v1/reviews/1/approve', { headers: sf() })
    expect(approve.status).toBe(403)
  })
})

describe('POST /api/v1/reviews', () => {
  it('creates a pending review (201 {id, status}, Location) on a moderated shop', async () => {
    const res = await submit(shop, review())
    expect(res.status).toBe(201)
    expect(res.body).toEqual({ id: expect.any(Number), status: 'pending' })
    expect(Number.isInteger(res.body.id)).toBe(true)
    expect(res.headers.location).toBe(`/api/v1/reviews/${res.body.id}`)
    expectNoEmail(res.body)
  })

  it('approves at once when the shop auto-approves, whatever the rating', async () => {
    for (const rating of [1, 5]) {
      const res = await submit(auto, review({ rating }))
      expect(res.status).toBe(201)
      expect(res.body.status).toBe('approved')
    }
  })

  it('ignores client-sent status, verifiedPurchase and helpfulCount', async () => {
    const productId = nextProduct()
    const res = await submit(shop, review({ productId, status: 'approved', verifiedPurchase: true, helpfulCount: 99, id: 5 }))
    expect(res.status).toBe(201)
    expect(res.body.status).toBe('pending')
    const one = await t.call('GET', `/api/v1/reviews/${res.body.id}`, { token: admin })
    expect(one.body).toMatchObject({ status: 'pending', verifiedPurchase: false, helpfulCount: 0 })
    expect(one.body.id).not.toBe(5)
  })

  it('trims strings, lower-cases the e-mail and normalises a product GID', async () => {
    const res = await submit(
      auto,
      review({
        productId: ' gid://shopify/Product/4242 ',
        customerEmail: '  Mixed.Case@Example.COM ',
        customerName: '  Bob  ',
        title: '  Nice  ',
        body: '\n  Solid kettle.  \n',
        photos: [' https://cdn.example.net/a.jpg '],
      }),
    )
    expect(res.status).toBe(201)
    const one = await t.call('GET', `/api/v1/reviews/${res.body.id}`, { headers: sf(auto) })
    expect(one.body).toMatchObject({
      productId: '4242',
      customerName: 'Bob',
      title: 'Nice',
      body: 'Solid kettle.',
      photos: ['https://cdn.example.net/a.jpg'],
    })
    const mod = await t.call('GET', `/api/v1/reviews/${res.body.id}`, { token: autoAdmin })
    expect(mod.body.customerEmail).toBe('mixed.case@example.com')
    // The same address in another case is the same reviewer.
    const again = await submit(auto, review({ productId: '4242', customerEmail: 'MIXED.case@example.com' }))
    expect(again.status).toBe(409)
  })

  it('returns the documented review object with an empty title when none is given', async () => {
    const res = await submit(auto, review({ title: undefined, photos: undefined }))
    const one = await t.call('GET', `/api/v1/reviews/${res.body.id}`, { headers: sf(auto) })
    expect(one.status).toBe(200)
    expect(Object.keys(one.body).sort()).toEqual(
      [
        'body',
        'createdAt',
        'customerName',
        'helpfulCount',
        'id',
        'photos',
        'productId',
        'rating',
        'repliedAt',
        'replyBody',
        'title',
        'verifiedPurchase',
      ].sort(),
    )
    expect(one.body).toMatchObject({ title: '', photos: [], replyBody: null, repliedAt: null, verifiedPurchase: false, helpfulCount: 0 })
    expect(one.body.createdAt).toMatch(ISO_SECONDS)
  })

  it.each([
    ['rating 4.5', { rating: 4.5 }, 'body.rating'],
    ['rating "5"', { rating: '5' }, 'body.rating'],
    ['rating 0', { rating: 0 }, 'body.rating'],
    ['rating 6', { rating: 6 }, 'body.rating'],
    ['rating null', { rating: null }, 'body.rating'],
    ['no rating', { rating: undefined }, 'body.rating'],
    ['no productId', { productId: undefined }, 'body.productId'],
    ['bad productId', { productId: 'abc' }, 'body.productId'],
    ['no e-mail', { customerEmail: undefined }, 'body.customerEmail'],
    ['bad e-mail', { customerEmail: 'not-an-email' }, 'body.customerEmail'],
    ['e-mail of 255', { customerEmail: `${'a'.repeat(243)}@example.com` }, 'body.customerEmail'],
    ['no name', { customerName: undefined }, 'body.customerName'],
    ['blank name', { customerName: '   ' }, 'body.customerName'],
    ['name of 101', { customerName: 'n'.repeat(101) }, 'body.customerName'],
    ['no body', { body: undefined }, 'body.body'],
    ['blank body', { body: ' \n ' }, 'body.body'],
    ['body of 5001', { body: 'b'.repeat(5001) }, 'body.body'],
    ['title of 151', { title: 't'.repeat(151) }, 'body.title'],
    ['6 photos', { photos: Array.from({ length: 6 }, (_, i) => `https://cdn.example.net/${i}.jpg`) }, 'body.photos'],
    ['http photo', { photos: ['http://cdn.example.net/a.jpg'] }, 'body.photos.0'],
    ['non-URL photo', { photos: ['https://cdn.example.net/ok.jpg', 'not a url'] }, 'body.photos.1'],
  ])('refuses %s with 400 VALIDATION_ERROR naming the field', async (_name, over, path) => {
    const res = await submit(auto, review(over))
    expect(res.status).toBe(400)
    expect(res.body.ok).toBeUndefined()
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]))
  })

  it('reports every field error of a submission together', async () => {
    const types = await submit(auto, { customerEmail: 'z@example.com', customerName: 'n', rating: '3' })
    expect(types.status).toBe(400)
    expect(types.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['body.body', 'body.productId', 'body.rating'])
    const rules = await submit(auto, review({ customerEmail: 'zz', customerName: ' ', body: '', title: 't'.repeat(151) }))
    expect(rules.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'body.body',
      'body.customerEmail',
      'body.customerName',
      'body.title',
    ])
  })

  it('accepts the limits exactly (254-character e-mail, 100-character name, 150-character title, 5000-character body, 5 photos)', async () => {
    const res = await submit(
      auto,
      review({
        customerEmail: `${'a'.repeat(242)}@example.com`,
        customerName: '😀'.repeat(100),
        title: 't'.repeat(150),
        body: 'b'.repeat(5000),
        photos: Array.from({ length: 5 }, (_, i) => `https://cdn.example.net/${i}.jpg`),
      }),
    )
    expect(res.status).toBe(201)
  })

  it('refuses a body that is not JSON (400) or not application/json (415)', async () => {
    const notJson = await t.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers: { ...sf(), 'content-type': 'application/json' },
      payload: '{"rating":',
    })
    expect(notJson.statusCode).toBe(400)
    expect(notJson.json()).toMatchObject({ error: { code: 'INVALID_JSON' } })
    const text = await t.inject({
      method: 'POST',
      url: '/api/v1/reviews',
      headers: { ...sf(), 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(text.statusCode).toBe(415)
    expect(text.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } })
  })

  it('allows one review per shop, product and e-mail (409 DUPLICATE_REVIEW), in any status', async () => {
    const productId = nextProduct()
    const first = await submit(shop, review({ productId, customerEmail: 'dup@example.com' }))
    expect(first.status).toBe(201)
    const dup = await submit(shop, review({ productId, customerEmail: 'dup@example.com', rating: 1 }))
    expect(dup.status).toBe(409)
    expect(dup.body).toEqual({ error: { code: 'DUPLICATE_REVIEW', message: expect.any(String) } })
    await t.call('POST', `/api/v1/reviews/${first.body.id}/reject`, { token: admin })
    expect((await submit(shop, review({ productId, customerEmail: 'dup@example.com' }))).status).toBe(409)
    // Another product, or another shop, is a different review.
    expect((await submit(shop, review({ productId: nextProduct(), customerEmail: 'dup@example.com' }))).status).toBe(201)
    expect((await submit(other, review({ productId, customerEmail: 'dup@example.com' }))).status).toBe(201)
    // Deleting the review frees the address.
    await t.call('DELETE', `/api/v1/reviews/${first.body.id}`, { token: admin })
    expect((await submit(shop, review({ productId, customerEmail: 'dup@example.com' }))).status).toBe(201)
  })
})

describe('GET /api/v1/reviews/:id', () => {
  it('shows approved reviews only, unless admin; 404 for unknown ids and other shops', async () => {
    const productId = nextProduct()
    const res = await submit(shop, review({ productId, customerEmail: 'hidden@example.com' }))
    const id = res.body.id as number
    const pub = await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf() })
    expect(pub.status).toBe(404)
    expect(pub.body.error.code).toBe('NOT_FOUND')
    const mod = await t.call('GET', `/api/v1/reviews/${id}`, { token: admin })
    expect(mod.status).toBe(200)
    expect(mod.body).toMatchObject({ id, status: 'pending', customerEmail: 'hidden@example.com' })

    await t.call('POST', `/api/v1/reviews/${id}/approve`, { token: admin })
    const visible = await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf() })
    expect(visible.status).toBe(200)
    expect(visible.body).toMatchObject({ id, productId, rating: 5, customerName: 'Alice' })
    expectNoEmail(visible.body)
    const asCustomer = await t.call('GET', `/api/v1/reviews/${id}`, { token: await shop.customerToken('77') })
    expectNoEmail(asCustomer.body)

    expect((await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf(other) })).status).toBe(404)
    expect((await t.call('GET', `/api/v1/reviews/${id}`, { token: await other.adminToken() })).status).toBe(404)
    expect((await t.call('GET', '/api/v1/reviews/99999999', { headers: sf() })).status).toBe(404)
    expect((await t.call('GET', '/api/v1/reviews/abc', { headers: sf() })).status).toBe(400)
  })
})

describe('GET /api/v1/products/:productId/reviews', () => {
  it('lists approved reviews only, with the documented shape and defaults', async () => {
    const productId = nextProduct()
    const a = await approved(productId)
    await submit(shop, review({ productId })) // pending
    const rejected = await approved(productId)
    await t.call('POST', `/api/v1/reviews/${rejected}/reject`, { token: admin })
    const res = await list(productId)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [expect.objectContaining({ id: a })], page: 1, perPage: 10, total: 1, hasMore: false })
    expectNoEmail(res.body)
  })

  it('pages with page/per_page and answers a page past the end with 200 and no data', async () => {
    const productId = nextProduct()
    const ids: number[] = []
    for (let i = 0; i < 5; i++) ids.push(await approved(productId))
    const p1 = await list(productId, '?per_page=2')
    expect(p1.body).toMatchObject({ page: 1, perPage: 2, total: 5, hasMore: true })
    expect(p1.body.data).toHaveLength(2)
    const p3 = await list(productId, '?per_page=2&page=3')
    expect(p3.body).toMatchObject({ page: 3, perPage: 2, total: 5, hasMore: false })
    expect(p3.body.data).toHaveLength(1)
    const past = await list(productId, '?per_page=2&page=9')
    expect(past.status).toBe(200)
    expect(past.body).toEqual({ data: [], page: 9, perPage: 2, total: 5, hasMore: false })
    const max = await list(productId, '?per_page=50')
    expect(max.body.data).toHaveLength(5)
  })

  it.each([
    ['per_page=0'],
    ['per_page=51'],
    ['per_page=abc'],
    ['page=0'],
    ['page=1.5'],
    ['sort=best'],
    ['rating=0'],
    ['rating=6'],
    ['verified=maybe'],
  ])('refuses %s with 400 (not clamped)', async (query) => {
    const res = await list('1001', `?${query}`)
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
    expect(res.body.error.details[0].path).toMatch(/^query\./)
  })

  it('refuses a malformed product id and accepts a URL-encoded GID', async () => {
    expect((await list('not-a-product')).status).toBe(400)
    const productId = nextProduct()
    const id = await approved(productId)
    const res = await list(encodeURIComponent(`gid://shopify/Product/${productId}`))
    expect(res.status).toBe(200)
    expect(res.body.data.map((r: { id: number }) => r.id)).toEqual([id])
  })

  it('sorts with the documented tie-breakers', async () => {
    const productId = nextProduct()
    const T = Date.UTC(2026, 0, 10)
    // [rating, created_at, helpful votes]
    const spec: [number, number, number][] = [
      [3, T, 0],
      [5, T, 1],
      [5, T - 1000, 2],
      [1, T, 0],
      [3, T + 1000, 2],
      [5, T + 1000, 0],
      [1, T - 1000, 1],
    ]
    const rows: { id: number; rating: number; at: number; helpful: number }[] = []
    for (const [rating, at, helpful] of spec) {
      const id = await approved(productId, { rating })
      await setCreatedAt(id, at)
      for (let v = 0; v < helpful; v++) {
        const voted = await t.call('PUT', `/api/v1/reviews/${id}/helpful`, { headers: shop.guest(`voter_${id}_${v}`) })
        expect(voted.status).toBe(200)
      }
      rows.push({ id, rating, at, helpful })
    }
    const newest = (a: (typeof rows)[0], b: (typeof rows)[0]) => b.at - a.at || b.id - a.id
    const expected: Record<string, (a: (typeof rows)[0], b: (typeof rows)[0]) => number> = {
      newest,
      oldest: (a, b) => a.at - b.at || a.id - b.id,
      highest: (a, b) => b.rating - a.rating || newest(a, b),
      lowest: (a, b) => a.rating - b.rating || newest(a, b),
      most_helpful: (a, b) => b.helpful - a.helpful || newest(a, b),
    }
    for (const [sort, cmp] of Object.entries(expected)) {
      const res = await list(productId, `?sort=${sort}&per_page=50`)
      expect(
        res.body.data.map((r: { id: number }) => r.id),
        sort,
      ).toEqual([...rows].sort(cmp).map((r) => r.id))
    }
    const dflt = await list(productId, '?per_page=50')
    expect(dflt.body.data.map((r: { id: number }) => r.id)).toEqual([...rows].sort(newest).map((r) => r.id))
    expect(dflt.body.data[0].createdAt).toBe(new Date(T + 1000).toISOString().replace('.000Z', 'Z'))
  })

  it('filters by rating, verified and with_photos, with matching totals', async () => {
    const productId = nextProduct()
    const photo = { photos: ['https://cdn.example.net/p.jpg'] }
    const r5photo = await approved(productId, { rating: 5, ...photo })
    const r5 = await approved(productId, { rating: 5 }, '88001')
    const r4photo = await approved(productId, { rating: 4, ...photo })
    const r2 = await approved(productId, { rating: 2 })
    await t.storage.db.transaction().execute((trx) => recordPurchase(trx, shop.id, { customerId: '88001', productIds: [productId] }))
    const ids = async (q: string) => {
      const res = await list(productId, `?sort=oldest&${q}`)
      expect(res.status).toBe(200)
      expect(res.body.total).toBe(res.body.data.length)
      return res.body.data.map((r: { id: number }) => r.id)
    }
    expect(await ids('rating=5')).toEqual([r5photo, r5])
    expect(await ids('rating=3')).toEqual([])
    expect(await ids('verified=true')).toEqual([r5])
    expect(await ids('verified=false')).toEqual([r5photo, r4photo, r2])
    expect(await ids('with_photos=true')).toEqual([r5photo, r4photo])
    expect(await ids('with_photos=false')).toEqual([r5, r2])
    expect(await ids('rating=5&with_photos=true')).toEqual([r5photo])
    expect(await ids('rating=5&verified=true&with_photos=false')).toEqual([r5])
    expect(await ids('rating=4&verified=true')).toEqual([])
  })

  it('never mixes shops or products', async () => {
    const productId = nextProduct()
    await approved(productId)
    await submit(other, review({ productId }))
    expect((await list(productId, '', other)).body.total).toBe(1)
    expect((await list(productId)).body.total).toBe(1)
    expect((await list(nextProduct())).body).toEqual({ data: [], page: 1, perPage: 10, total: 0, hasMore: false })
  })
})

describe('GET /api/v1/products/:productId/reviews/summary', () => {
  it('answers zeros and a null average for a product without approved reviews', async () => {
    const productId = nextProduct()
    await submit(shop, review({ productId })) // pending: not counted
    const res = await summary(productId)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      productId,
      reviewCount: 0,
      averageRating: null,
      ratingDistribution: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 },
      verifiedCount: 0,
      withPhotosCount: 0,
      bestRating: 5,
      worstRating: 1,
    })
  })

  it('follows every approval, rejection, purchase and deletion', async () => {
    const productId = nextProduct()
    const a = await approved(productId, { rating: 5, photos: ['https://cdn.example.net/x.jpg'] })
    const b = await approved(productId, { rating: 4 }, '88002')
    const c = await approved(productId, { rating: 4 })
    expect((await summary(productId)).body).toMatchObject({
      productId,
      reviewCount: 3,
      averageRating: 4.33,
      ratingDistribution: { '1': 0, '2': 0, '3': 0, '4': 2, '5': 1 },
      verifiedCount: 0,
      withPhotosCount: 1,
    })
    await t.storage.db.transaction().execute((trx) => recordPurchase(trx, shop.id, { customerId: '88002', productIds: [productId] }))
    expect((await summary(productId)).body.verifiedCount).toBe(1)
    await t.call('POST', `/api/v1/reviews/${c}/reject`, { token: admin })
    expect((await summary(productId)).body).toMatchObject({ reviewCount: 2, averageRating: 4.5, ratingDistribution: { '4': 1, '5': 1 } })
    await t.call('DELETE', `/api/v1/reviews/${a}`, { token: admin })
    expect((await summary(productId)).body).toMatchObject({ reviewCount: 1, averageRating: 4, withPhotosCount: 0, verifiedCount: 1 })
    await t.call('POST', `/api/v1/reviews/${b}/reject`, { token: admin })
    expect((await summary(productId)).body).toMatchObject({ reviewCount: 0, averageRating: null, verifiedCount: 0 })
    await t.call('POST', `/api/v1/reviews/${c}/approve`, { token: admin })
    expect((await summary(productId)).body).toMatchObject({ reviewCount: 1, averageRating: 4, ratingDistribution: { '4': 1 } })
    // Unfiltered totals of the listing agree with the summary.
    expect((await list(productId)).body.total).toBe(1)
  })

  it('rounds the average to 2 decimals, half up', async () => {
    const productId = nextProduct()
    for (const rating of [5, 4, 4, 4, 4, 4, 4, 4]) await approved(productId, { rating }) // 33 / 8 = 4.125
    expect((await summary(productId)).body.averageRating).toBe(4.13)
  })
})

describe('moderation', () => {
  it('lists every status with e-mail and status, pending first without a status filter', async () => {
    const s = await t.createShop('free')
    const token = await s.adminToken()
    const p = nextProduct()
    const ids: number[] = []
    for (let i = 0; i < 4; i++)
      ids.push((await submit(s, review({ productId: i === 3 ? nextProduct() : p, customerEmail: `mod${i}@example.com` }))).body.id)
    for (const id of ids) await setCreatedAt(id, Date.UTC(2026, 0, 1))
    await t.call('POST', `/api/v1/reviews/${ids[0]}/approve`, { token })
    await t.call('POST', `/api/v1/reviews/${ids[1]}/reject`, { token })
    const all = await t.call('GET', '/api/v1/admin/reviews', { token })
    expect(all.status).toBe(200)
    expect(all.body).toMatchObject({ page: 1, perPage: 20, total: 4, hasMore: false })
    // Pending first, then newest first (equal seconds: higher id first).
    expect(all.body.data.map((r: { status: string }) => r.status)).toEqual(['pending', 'pending', 'rejected', 'approved'])
    expect(all.body.data.map((r: { id: number }) => r.id)).toEqual([ids[3], ids[2], ids[1], ids[0]])
    expect(all.body.data[0]).toMatchObject({ customerEmail: 'mod3@example.com', status: 'pending' })
    const pending = await t.call('GET', '/api/v1/admin/reviews?status=pending', { token })
    expect(pending.body.data.map((r: { id: number }) => r.id)).toEqual([ids[3], ids[2]])
    const rejected = await t.call('GET', '/api/v1/admin/reviews?status=rejected', { token })
    expect(rejected.body.data.map((r: { id: number }) => r.id)).toEqual([ids[1]])
    const byProduct = await t.call('GET', `/api/v1/admin/reviews?product_id=${p}&per_page=2&page=2`, { token })
    expect(byProduct.body).toMatchObject({ total: 3, page: 2, perPage: 2, hasMore: false })
    expect(byProduct.body.data).toHaveLength(1)
    expect((await t.call('GET', '/api/v1/admin/reviews?status=hidden', { token })).status).toBe(400)
    expect((await t.call('GET', '/api/v1/admin/reviews?per_page=101', { token })).status).toBe(400)
    // Another shop's admin sees none of it.
    expect(
      (await t.call('GET', '/api/v1/admin/reviews', { token: await other.adminToken() })).body.data.some((r: { id: number }) =>
        ids.includes(r.id),
      ),
    ).toBe(false)
  })

  it('allows pending → approved | rejected and approved ↔ rejected; the same status again is a harmless 200', async () => {
    const productId = nextProduct()
    const id = (await submit(shop, review({ productId }))).body.id
    const step = async (action: 'approve' | 'reject', status: string, count: number) => {
      const res = await t.call('POST', `/api/v1/reviews/${id}/${action}`, { token: admin })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ id, status })
      expect((await summary(productId)).body.reviewCount).toBe(count)
    }
    await step('approve', 'approved', 1)
    await step('approve', 'approved', 1)
    await step('reject', 'rejected', 0)
    await step('reject', 'rejected', 0)
    await step('approve', 'approved', 1)
    const fresh = (await submit(shop, review({ productId }))).body.id
    const rej = await t.call('POST', `/api/v1/reviews/${fresh}/reject`, { token: admin })
    expect(rej.body.status).toBe('rejected')
    expect((await summary(productId)).body.reviewCount).toBe(1)
    for (const action of ['approve', 'reject']) {
      expect((await t.call('POST', `/api/v1/reviews/99999999/${action}`, { token: admin })).status).toBe(404)
      expect((await t.call('POST', `/api/v1/reviews/${id}/${action}`, { token: await other.adminToken() })).status).toBe(404)
    }
  })

  it('sets, replaces and removes the merchant reply', async () => {
    const id = await approved(nextProduct())
    const res = await t.call('PUT', `/api/v1/reviews/${id}/reply`, { token: admin, body: { body: '  Thank you!  ' } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id, replyBody: 'Thank you!' })
    expect(res.body.repliedAt).toMatch(ISO_SECONDS)
    const pub = await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf() })
    expect(pub.body).toMatchObject({ replyBody: 'Thank you!', repliedAt: res.body.repliedAt })
    const replaced = await t.call('PUT', `/api/v1/reviews/${id}/reply`, { token: admin, body: { body: 'Updated' } })
    expect(replaced.body.replyBody).toBe('Updated')
    expect((await t.call('PUT', `/api/v1/reviews/${id}/reply`, { token: admin, body: { body: '  ' } })).status).toBe(400)
    expect((await t.call('PUT', `/api/v1/reviews/${id}/reply`, { token: admin, body: {} })).status).toBe(400)
    const removed = await t.call('DELETE', `/api/v1/reviews/${id}/reply`, { token: admin })
    expect(removed.status).toBe(200)
    expect(removed.body).toMatchObject({ replyBody: null, repliedAt: null })
    expect((await t.call('DELETE', `/api/v1/reviews/${id}/reply`, { token: admin })).status).toBe(200)
    expect((await t.call('PUT', '/api/v1/reviews/99999999/reply', { token: admin, body: { body: 'x' } })).status).toBe(404)
    expect((await t.call('PUT', `/api/v1/reviews/${id}/reply`, { headers: sf(), body: { body: 'x' } })).status).toBe(403)
  })

  it('deletes a review with its votes; a second delete is 404', async () => {
    const productId = nextProduct()
    const id = await approved(productId)
    await t.call('PUT', `/api/v1/reviews/${id}/helpful`, { headers: shop.guest('deleter_1') })
    const res = await t.call('DELETE', `/api/v1/reviews/${id}`, { token: admin })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ deleted: true })
    expect((await t.call('GET', `/api/v1/reviews/${id}`, { token: admin })).status).toBe(404)
    expect((await t.call('DELETE', `/api/v1/reviews/${id}`, { token: admin })).status).toBe(404)
    expect((await summary(productId)).body.reviewCount).toBe(0)
    const votes = await t.storage.db.selectFrom('review_votes').select('review_id').where('review_id', '=', id).execute()
    expect(votes).toEqual([])
    expect((await t.call('DELETE', `/api/v1/reviews/${id}`, { headers: sf() })).status).toBe(403)
  })
})

describe('helpful votes', () => {
  it('counts one vote per voter, idempotently, and takes it back', async () => {
    const id = await approved(nextProduct())
    const vote = (method: 'PUT' | 'DELETE', opts: { headers?: Record<string, string>; token?: string }) =>
      t.call(method, `/api/v1/reviews/${id}/helpful`, opts)
    const customer = await shop.customerToken('9001')
    expect((await vote('PUT', { headers: shop.guest('guest_aaaa') })).body).toEqual({ helpfulCount: 1 })
    expect((await vote('PUT', { headers: shop.guest('guest_aaaa') })).body).toEqual({ helpfulCount: 1 })
    expect((await vote('PUT', { headers: shop.guest('guest_bbbb') })).body).toEqual({ helpfulCount: 2 })
    expect((await vote('PUT', { token: customer })).body).toEqual({ helpfulCount: 3 })
    expect((await vote('PUT', { token: customer })).body).toEqual({ helpfulCount: 3 })
    // guest_id in the query works as well as the header.
    const viaQuery = await t.call('PUT', `/api/v1/reviews/${id}/helpful?guest_id=guest_cccc`, { headers: sf() })
    expect(viaQuery.body).toEqual({ helpfulCount: 4 })
    expect((await vote('DELETE', { headers: shop.guest('guest_aaaa') })).body).toEqual({ helpfulCount: 3 })
    expect((await vote('DELETE', { headers: shop.guest('guest_aaaa') })).body).toEqual({ helpfulCount: 3 })
    expect((await vote('DELETE', { headers: shop.guest('guest_never') })).body).toEqual({ helpfulCount: 3 })
    expect((await vote('DELETE', { token: customer })).body).toEqual({ helpfulCount: 2 })
    const pub = await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf() })
    expect(pub.body.helpfulCount).toBe(2)
  })

  it('needs a voter (400 without a customer token or guest id) and an approved review (404)', async () => {
    const id = await approved(nextProduct())
    for (const opts of [{ headers: sf() }, { token: admin }]) {
      const res = await t.call('PUT', `/api/v1/reviews/${id}/helpful`, opts)
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    const pending = (await submit(shop, review({ productId: nextProduct() }))).body.id
    expect((await t.call('PUT', `/api/v1/reviews/${pending}/helpful`, { headers: shop.guest('guest_aaaa') })).status).toBe(404)
    expect((await t.call('DELETE', `/api/v1/reviews/${pending}/helpful`, { headers: shop.guest('guest_aaaa') })).status).toBe(404)
    expect((await t.call('PUT', `/api/v1/reviews/${id}/helpful`, { headers: other.guest('guest_aaaa') })).status).toBe(404)
    expect((await t.call('PUT', '/api/v1/reviews/99999999/helpful', { headers: shop.guest('guest_aaaa') })).status).toBe(404)
  })
})

describe('verified purchase (order.created → recordPurchase)', () => {
  const purchase = (s: TestShop, p: { customerId?: string | null; email?: string | null; productIds: string[] }) =>
    t.storage.db.transaction().execute((trx) => recordPurchase(trx, s.id, p))
  const verified = async (id: number, token: string) => (await t.call('GET', `/api/v1/reviews/${id}`, { token })).body.verifiedPurchase

  const as = async (customerId: string) => ({ ...sf(auto), authorization: `Bearer ${await auto.customerToken(customerId)}` })

  it("marks a customer's review submitted before the order, by customer id", async () => {
    const productId = nextProduct()
    const id = (await submit(auto, review({ productId, customerEmail: 'early@example.com' }), await as('5101'))).body.id
    expect(await verified(id, autoAdmin)).toBe(false)
    const result = await purchase(auto, {
      customerId: 'gid://shopify/Customer/5101',
      productIds: [`gid://shopify/Product/${productId}`, '1'],
    })
    expect(result).toEqual({ verified: 1 })
    const row = (await t.call('GET', `/api/v1/reviews/${id}`, { token: autoAdmin })).body
    expect(row).toMatchObject({ verifiedPurchase: true, verifiedBy: 'customer_order', customerId: '5101' })
    expect((await summary(productId, auto)).body.verifiedCount).toBe(1)
    // Idempotent: a redelivered order changes nothing.
    expect(await purchase(auto, { customerId: '5101', productIds: [productId] })).toEqual({ verified: 0 })
    expect((await summary(productId, auto)).body.verifiedCount).toBe(1)
  })

  it("verifies a customer's review submitted after the order at submit time, and nothing else", async () => {
    const productId = nextProduct()
    await purchase(auto, { customerId: '5102', email: 'later@example.com', productIds: [productId] })
    const id = (await submit(auto, review({ productId, customerEmail: 'anything@example.com' }), await as('5102'))).body.id
    const pub = await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf(auto) })
    expect(pub.body.verifiedPurchase).toBe(true)
    expect((await summary(productId, auto)).body.verifiedCount).toBe(1)
    // Another product, another customer, or the order's e-mail without the customer's token: not verified.
    const otherProduct = (await submit(auto, review({ productId: nextProduct() }), await as('5102'))).body.id
    expect(await verified(otherProduct, autoAdmin)).toBe(false)
    const otherCustomer = (await submit(auto, review({ productId }), await as('5103'))).body.id
    expect(await verified(otherCustomer, autoAdmin)).toBe(false)
    const byEmail = (await submit(auto, review({ productId, customerEmail: 'Later@Example.com' }))).body.id
    expect((await t.call('GET', `/api/v1/reviews/${byEmail}`, { token: autoAdmin })).body).toMatchObject({
      verifiedPurchase: false,
      verifiedBy: null,
      customerId: null,
    })
  })

  it('links a review to the customer by customer token, and verifies it by customer id before and after', async () => {
    const [p1, p2] = [nextProduct(), nextProduct()]
    const token = await auto.customerToken('31337')
    const before = await submit(auto, review({ productId: p1, customerEmail: 'tok@example.com' }), {
      ...sf(auto),
      authorization: `Bearer ${token}`,
    })
    expect(before.status).toBe(201)
    expect((await t.call('GET', `/api/v1/reviews/${before.body.id}`, { token: autoAdmin })).body.customerId).toBe('31337')
    await purchase(auto, { customerId: '31337', productIds: [p1, p2] })
    expect(await verified(before.body.id, autoAdmin)).toBe(true)
    const after = await submit(auto, review({ productId: p2, customerEmail: 'other-address@example.com' }), {
      authorization: `Bearer ${token}`,
    })
    expect(await verified(after.body.id, autoAdmin)).toBe(true)
  })

  it('never links or verifies a review by the e-mail an order gives, before or after the order', async () => {
    const [p1, p2] = [nextProduct(), nextProduct()]
    const r1 = (await submit(auto, review({ productId: p1, customerEmail: 'link@example.com' }))).body.id
    expect(await purchase(auto, { customerId: '4711', email: 'link@example.com', productIds: [p1, p2] })).toEqual({ verified: 0 })
    const r2 = (await submit(auto, review({ productId: p2, customerEmail: 'link@example.com' }))).body.id
    for (const id of [r1, r2]) {
      expect((await t.call('GET', `/api/v1/reviews/${id}`, { token: autoAdmin })).body).toMatchObject({
        customerId: null,
        verifiedPurchase: false,
      })
    }
    expect((await summary(p1, auto)).body.verifiedCount).toBe(0)
  })

  it('never crosses shops', async () => {
    const productId = nextProduct()
    const id = (await submit(auto, review({ productId }), await as('5104'))).body.id
    await purchase(other, { customerId: '5104', productIds: [productId] })
    expect(await verified(id, autoAdmin)).toBe(false)
  })
})

describe('an e-mail in a submission proves nothing', () => {
  const customerHeaders = async (customerId: string) => ({ ...sf(auto), authorization: `Bearer ${await auto.customerToken(customerId)}` })
  const orderCreated = async (event: Record<string, unknown>) => {
    const res = await t.call('POST', '/v1/events', { token: autoAdmin, body: { events: [{ type: 'order.created', ...event }] } })
    expect(res.status).toBe(200)
  }

  it("a review posted with only the storefront key under a buyer's address is not verified, not linked, not in the buyer's export, and does not block the buyer", async () => {
    const productId = nextProduct()
    const ALICE = '7701'
    await orderCreated({ customer_id: ALICE, email: 'alice@example.com', line_items: [{ product_id: productId }] })

    const forged = await submit(auto, review({ productId, customerEmail: 'Alice@Example.com', rating: 1 }))
    expect(forged.status).toBe(201)
    expect((await t.call('GET', `/api/v1/reviews/${forged.body.id}`, { token: autoAdmin })).body).toMatchObject({
      verifiedPurchase: false,
      verifiedBy: null,
      customerId: null,
    })
    expect((await summary(productId, auto)).body).toMatchObject({ reviewCount: 1, verifiedCount: 0 })
    const exported = (await t.call('GET', `/v1/admin/customers/${ALICE}/export`, { token: autoAdmin })).body.data
    expect(exported.reviews).toEqual([])

    // Alice's own review: accepted and verified (one per product per customer, whatever unlinked reviews use her address).
    const own = await submit(auto, review({ productId, customerEmail: 'alice@example.com', rating: 5 }), await customerHeaders(ALICE))
    expect(own.status).toBe(201)
    expect((await t.call('GET', `/api/v1/reviews/${own.body.id}`, { token: autoAdmin })).body).toMatchObject({
      verifiedPurchase: true,
      verifiedBy: 'customer_order',
      customerId: ALICE,
    })
    expect((await summary(productId, auto)).body).toMatchObject({ reviewCount: 2, verifiedCount: 1 })
    // 409 only within one kind.
    expect((await submit(auto, review({ productId, customerEmail: 'other-alice@example.com' }), await customerHeaders(ALICE))).status).toBe(
      409,
    )
    expect((await submit(auto, review({ productId, customerEmail: 'ALICE@example.com' }))).status).toBe(409)
  })

  it("five invented addresses make zero verified reviews, and a buyer's token one review at most", async () => {
    const productId = nextProduct()
    const BUYER = '7702'
    await orderCreated({ customer_id: BUYER, email: 'buyer7702@example.com', line_items: [{ product_id: productId }] })
    for (let i = 0; i < 5; i++) {
      expect((await submit(auto, review({ productId, customerEmail: `invented${i}@example.com`, rating: 1 }))).status).toBe(201)
    }
    expect((await summary(productId, auto)).body).toMatchObject({ reviewCount: 5, verifiedCount: 0 })
    expect((await list(productId, '?verified=true', auto)).body.total).toBe(0)
    // With the buyer's own token, invented addresses still make one review (the buyer's), not five.
    const statuses: number[] = []
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await submit(auto, review({ productId, customerEmail: `made-up${i}@example.com` }), await customerHeaders(BUYER))).status,
      )
    expect(statuses).toEqual([201, 409, 409, 409, 409])
    expect((await summary(productId, auto)).body).toMatchObject({ reviewCount: 6, verifiedCount: 1 })
  })
})

describe('helpful-vote stuffing in guest mode', () => {
  const vote = (id: number, guestId: string, remoteAddress: string, method: 'PUT' | 'DELETE' = 'PUT') =>
    t.inject({ method, url: `/api/v1/reviews/${id}/helpful`, headers: auto.guest(guestId), remoteAddress })

  it('refuses a sixth guest vote for one review from one address within 24 h (429 RATE_LIMITED with Retry-After)', async () => {
    const id = (await submit(auto, review({ productId: nextProduct() }))).body.id
    for (let i = 0; i < 5; i++) expect((await vote(id, `stuffer_${i}_guest`, '203.0.113.7')).statusCode).toBe(200)
    const sixth = await vote(id, 'stuffer_5_guest', '203.0.113.7')
    expect(sixth.statusCode).toBe(429)
    expect(sixth.json()).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } })
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(86_000)
    // The same address written as IPv4-mapped IPv6 is the same client.
    expect((await vote(id, 'stuffer_6_guest', '::ffff:203.0.113.7')).statusCode).toBe(429)
    expect((await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf(auto) })).body.helpfulCount).toBe(5)
    // A vote already cast stays idempotent; other addresses and customers still vote.
    expect((await vote(id, 'stuffer_0_guest', '203.0.113.7')).json()).toEqual({ helpfulCount: 5 })
    expect((await vote(id, 'honest_guest_1', '198.51.100.1')).json()).toEqual({ helpfulCount: 6 })
    const customer = await t.call('PUT', `/api/v1/reviews/${id}/helpful`, { token: await auto.customerToken('7703') })
    expect(customer.body).toEqual({ helpfulCount: 7 })
  })

  it('counts IPv6 clients by their /64', async () => {
    const id = (await submit(auto, review({ productId: nextProduct() }))).body.id
    for (let i = 1; i <= 5; i++) expect((await vote(id, `v6_guest_${i}`, `2001:db8:1:2::${i}`)).statusCode).toBe(200)
    expect((await vote(id, 'v6_guest_6', '2001:db8:1:2:ffff::6')).statusCode).toBe(429)
    expect((await vote(id, 'v6_guest_7', '2001:db8:1:3::1')).statusCode).toBe(200)
  })
})

describe('concurrent writes', () => {
  it('keeps one review per e-mail, one vote per voter and one aggregate entry per approval', async () => {
    const productId = nextProduct()
    const body = review({ productId, customerEmail: 'race@example.com' })
    const submits = await Promise.all(Array.from({ length: 5 }, () => submit(shop, body)))
    expect(submits.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
    const id = submits.find((r) => r.status === 201)?.body.id as number
    await Promise.all(Array.from({ length: 5 }, () => t.call('POST', `/api/v1/reviews/${id}/approve`, { token: admin })))
    expect((await summary(productId)).body).toMatchObject({ reviewCount: 1, ratingDistribution: { '5': 1 } })
    await Promise.all(
      Array.from({ length: 5 }, () => t.call('PUT', `/api/v1/reviews/${id}/helpful`, { headers: shop.guest('guest_race') })),
    )
    expect((await t.call('GET', `/api/v1/reviews/${id}`, { headers: sf() })).body.helpfulCount).toBe(1)
    await Promise.all(Array.from({ length: 5 }, () => t.call('POST', `/api/v1/reviews/${id}/reject`, { token: admin })))
    expect((await summary(productId)).body.reviewCount).toBe(0)
  })
})

describe('privacy', () => {
  it('no public endpoint returns customerEmail', async () => {
    const productId = nextProduct()
    const created = await submit(auto, review({ productId, customerEmail: 'private@example.com' }))
    expectNoEmail(created.body)
    const id = created.body.id
    const customer = await auto.customerToken('1234')
    for (const opts of [{ headers: sf(auto) }, { headers: auto.guest('guest_priv') }, { token: customer }]) {
      expectNoEmail((await t.call('GET', `/api/v1/products/${productId}/reviews`, opts)).body)
      expectNoEmail((await t.call('GET', `/api/v1/products/${productId}/reviews?sort=most_helpful&verified=false`, opts)).body)
      expectNoEmail((await t.call('GET', `/api/v1/products/${productId}/reviews/summary`, opts)).body)
      expectNoEmail((await t.call('GET', `/api/v1/reviews/${id}`, opts)).body)
      expectNoEmail((await t.call('PUT', `/api/v1/reviews/${id}/helpful`, opts.token ? opts : { headers: auto.guest('guest_priv') })).body)
      expectNoEmail(
        (await t.call('DELETE', `/api/v1/reviews/${id}/helpful`, opts.token ? opts : { headers: auto.guest('guest_priv') })).body,
      )
    }
    const dup = await submit(auto, review({ productId, customerEmail: 'private@example.com' }))
    expect(dup.status).toBe(409)
    expectNoEmail(dup.body)
  })
})

describe('rate limits', () => {
  it('answers 429 RATE_LIMITED with Retry-After in the reviews error shape once the storefront bucket is spent', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_STOREFRONT_PER_MIN: '3' } })
    try {
      const s = await limited.createShop('free')
      const get = () => limited.call('GET', '/api/v1/products/1001/reviews', { headers: { 'x-storefront-key': s.storefrontKey } })
      for (let i = 0; i < 3; i++) expect((await get()).status).toBe(200)
      const res = await get()
      expect(res.status).toBe(429)
      expect(res.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } })
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
      expect(res.headers['x-ratelimit-limit']).toBe('3')
    } finally {
      await limited.close()
    }
  })
})
