/**
 * Order money (docs/api.md, "Platform events" and "Conversions"): an order line's price is
 * at most 999,999,999 with its currency's minor-unit digits and its quantity at most 10,000,
 * or the whole batch is a 400 that writes nothing; the largest lines sum exactly, far past
 * 64-bit integers, in every read the dashboard's overview makes; and sums an older version
 * stored out of range (written here with SQL) never make a read fail.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage } from '../../src/db/connect.js'
import { KNOWN_MIGRATIONS, migrateTo } from '../../src/db/migrate.js'
import { dayOf } from '../../src/modules/analytics/analytics.periods.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { BACKEND, freshDatabase } from '../helpers/db.js'

const MAX_QUANTITY = 10_000
/** The largest unit price per currency, as a string and in minor units. */
const MAX_PRICE = {
  USD: ['999999999.99', 99_999_999_999n],
  JPY: ['999999999', 999_999_999n],
  KWD: ['999999999.999', 999_999_999_999n],
  CLF: ['999999999.9999', 9_999_999_999_999n],
} as const
/** Minor units written with the currency's digits, computed here independently of the service. */
const written = (minor: bigint, digits: number) => {
  const text = minor.toString().padStart(digits + 1, '0')
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`
}
const DIGITS = { USD: 2, JPY: 0, KWD: 3, CLF: 4, EUR: 2 } as const

/** The probe of the finding: a price of 15 digits and 6 decimals times a million units. */
const PROBE = { product_id: '1', price: '999999999999999.999999', quantity: 1_000_000 }

async function setUp(t: TestApp) {
  const shop = await t.createShop('growth')
  const admin = await shop.adminToken()
  // Customer 101 holds products 1, 2 and 3: its orders of them are wishlist-influenced.
  for (const productId of ['1', '2', '3']) {
    const res = await t.call('POST', '/v1/wishlists/101/items', { token: admin, body: { product_id: productId } })
    expect(res.status).toBe(201)
  }
  return { shop, admin }
}

/** Every read of the dashboard's overview screen, plus a product's figures: each must answer 200. */
async function dashboardReads(t: TestApp, admin: string) {
  const out: Record<string, unknown> = {}
  for (const url of [
    '/v1/analytics/overview?period=30d',
    '/v1/analytics/daily?period=30d',
    '/v1/analytics/top-products?limit=10',
    '/v1/analytics/conversions?period=30d',
    '/v1/admin/analytics/conversions?period=all',
    '/v1/analytics/top-products?limit=100&sort=revenue',
    '/v1/analytics/product/1',
    '/v1/analytics/product/2',
  ]) {
    const res = await t.call('GET', url, { token: admin })
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200)
    out[url] = res.body.data
  }
  return out
}

describe('order line bounds', () => {
  let t: TestApp
  let shop: TestShop
  let admin: string
  beforeAll(async () => {
    t = await createTestApp()
    ;({ shop, admin } = await setUp(t))
  })
  afterAll(async () => {
    await t.close()
  })
  const send = (events: unknown[]) => t.call('POST', '/v1/events', { token: admin, body: { events } })
  const order = (currency: string | undefined, line: Record<string, unknown>, orderId = '7001') => ({
    type: 'order.created',
    order_id: orderId,
    customer_id: '101',
    ...(currency === undefined ? {} : { currency }),
    line_items: [{ product_id: '1', ...line }],
  })

  it('refuses the probe with 400 at its price, as part of the whole batch: nothing is written', async () => {
    const res = await send([order('USD', { price: '19.99' }, '7000'), order('USD', PROBE)])
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
    expect(res.body.error.details).toEqual([
      { path: 'body.events.1.line_items.0.price', index: 1, message: expect.stringContaining('below 1000000000') },
    ])
    // The valid order before it was not applied either.
    expect(await t.storage.db.selectFrom('orders').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])
  })

  it.each([
    ['USD', { price: '999999999.999' }, 'price'],
    ['USD', { price: '1000000000' }, 'price'],
    ['USD', { price: '1000000000.00' }, 'price'],
    ['USD', { price: '0.001' }, 'price'],
    ['USD', { price: 1e9 }, 'price'],
    ['USD', { price: 1e21 }, 'price'],
    ['USD', { price: 999_999_999.999 }, 'price'],
    ['USD', { price: 0.125 }, 'price'],
    ['EUR', { price: '0.125' }, 'price'],
    ['JPY', { price: '1.5' }, 'price'],
    ['JPY', { price: 1.5 }, 'price'],
    ['JPY', { price: '1.50' }, 'price'],
    ['USD', { price: '0.0010' }, 'price'],
    ['KWD', { price: '0.0001' }, 'price'],
    ['CLF', { price: '0.00001' }, 'price'],
    ['USD', { price: '999999999999999.999999', quantity: 1 }, 'price'],
    ['USD', { price: '1.00', quantity: 10_001 }, 'quantity'],
    ['USD', { price: '1.00', quantity: 1_000_000 }, 'quantity'],
    [undefined, { quantity: 10_001 }, 'quantity'],
    [undefined, { price: '1000000000' }, 'price'],
  ] as const)('%s %j: 400 at line_items.0.%s', async (currency, line, field) => {
    const res = await send([order(currency, line)])
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
    expect(res.body.error.details).toContainEqual(expect.objectContaining({ path: `body.events.0.line_items.0.${field}`, index: 0 }))
    expect(await t.storage.db.selectFrom('orders').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])
  })

  it('accepts each bound itself, as a string and as a JSON number, after the refusals', async () => {
    // The probe is refused and nothing was written; each bound itself goes through.
    expect((await send([order('USD', PROBE)])).status).toBe(400)
    expect(await t.storage.db.selectFrom('orders').selectAll().where('shop_id', '=', shop.id).execute()).toEqual([])
    const lines: [string, Record<string, unknown>][] = [
      ['USD', { price: MAX_PRICE.USD[0], quantity: MAX_QUANTITY }],
      ['USD', { price: 999_999_999.99, quantity: MAX_QUANTITY }],
      ['JPY', { price: MAX_PRICE.JPY[0], quantity: MAX_QUANTITY }],
      ['JPY', { price: 999_999_999 }],
      ['KWD', { price: MAX_PRICE.KWD[0] }],
      ['CLF', { price: MAX_PRICE.CLF[0] }],
      ['EUR', { price: '0' }],
      ['BHD', { price: '0.001' }],
      // Zeros past the minor unit are the same amount: "1500.00" yen is 1500 yen.
      ['JPY', { price: '999999999.0000' }],
      ['USD', { price: '19.9900' }],
    ]
    const res = await send(lines.map(([currency, line], i) => order(currency, line, String(8000 + i))))
    expect(res.body).toEqual({ ok: true, data: { accepted: lines.length } })
  })

  it('states the bounds in the OpenAPI document', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
    const text = JSON.stringify(doc)
    expect(text).toContain('"maximum":10000')
    expect(text).toContain('^[0-9]{1,9}(\\\\.[0-9]{1,4})?$')
  })
})

describe('the largest orders sum exactly', () => {
  let t: TestApp
  let admin: string
  beforeAll(async () => {
    t = await createTestApp()
    ;({ admin } = await setUp(t))
  })
  afterAll(async () => {
    await t.close()
  })

  it(
    'many orders of the largest price × the largest quantity: exact revenue in every read, per currency and per product',
    { timeout: 120_000 },
    async () => {
      let orderId = 0
      /**
       * Orders of `lines` lines each at the currency's largest price × 10,000; `split` of each order's lines buy product 1, the rest
       * product 2.
       */
      const orders = (currency: keyof typeof MAX_PRICE, count: number, lines: number, split: number) =>
        Array.from({ length: count }, () => ({
          type: 'order.created',
          order_id: String(++orderId),
          customer_id: '101',
          currency,
          line_items: Array.from({ length: lines }, (_, i) => ({
            product_id: i < split ? '1' : '2',
            price: MAX_PRICE[currency][0],
            quantity: MAX_QUANTITY,
          })),
        }))
      // 4 requests of 5 USD orders of 1,000 lines (the most one request may hold), then KWD, CLF and JPY.
      const requests = [
        ...Array.from({ length: 4 }, () => orders('USD', 5, 1000, 600)),
        orders('KWD', 5, 1000, 500),
        orders('CLF', 2, 1000, 1000),
        orders('JPY', 1, 1000, 1000),
      ]
      for (const events of requests) {
        const res = await t.call('POST', '/v1/events', { token: admin, body: { events } })
        expect(res.body).toEqual({ ok: true, data: { accepted: events.length } })
      }
      const line = (c: keyof typeof MAX_PRICE) => MAX_PRICE[c][1] * BigInt(MAX_QUANTITY)
      const total = { USD: 20_000n * line('USD'), KWD: 5_000n * line('KWD'), CLF: 2_000n * line('CLF'), JPY: 1_000n * line('JPY') }
      // Far past 64-bit integers (9.2 × 10^18) and doubles' exact integers (2^53).
      expect(total.USD > 2n ** 64n).toBe(true)
      const data = (await dashboardReads(t, admin)) as Record<
        string,
        { revenueInfluenced?: unknown; revenue?: unknown; products?: { productId: string; revenue: unknown }[] }
      >
      const expected = (['CLF', 'JPY', 'KWD', 'USD'] as const).map((c) => ({ currency: c, amount: written(total[c], DIGITS[c]) }))
      expect(data['/v1/admin/analytics/conversions?period=all']?.revenueInfluenced).toEqual(expected)
      expect(data['/v1/analytics/conversions?period=30d']?.revenueInfluenced).toEqual(expected)
      expect(expected.find((e) => e.currency === 'USD')?.amount).toBe('199999999998000000.00')
      // Per product: product 1 took 600 of each USD order's lines, product 2 the other 400.
      const product1 = [
        { currency: 'CLF', amount: written(total.CLF, 4) },
        { currency: 'JPY', amount: written(total.JPY, 0) },
        { currency: 'KWD', amount: written(2_500n * line('KWD'), 3) },
        { currency: 'USD', amount: written(12_000n * line('USD'), 2) },
      ]
      const product2 = [
        { currency: 'KWD', amount: written(2_500n * line('KWD'), 3) },
        { currency: 'USD', amount: written(8_000n * line('USD'), 2) },
      ]
      expect(data['/v1/analytics/product/1']?.revenue).toEqual(product1)
      expect(data['/v1/analytics/product/2']?.revenue).toEqual(product2)
      // By revenue in the most frequent currency (USD): product 1, then 2.
      expect(data['/v1/analytics/top-products?limit=100&sort=revenue']?.products?.map((p) => [p.productId, p.revenue])).toEqual([
        ['1', product1],
        ['2', product2],
      ])
    },
  )
})

describe('sums stored out of range by an older version', () => {
  const INT64_MAX = '9223372036854775807'
  let t: TestApp
  let admin: string
  let dir: string | undefined
  beforeAll(async () => {
    // A file, so that the rows written before the upgrade are there after it (SQLite).
    dir = BACKEND === 'sqlite' ? mkdtempSync(join(tmpdir(), 'wishlist-money-')) : undefined
    const database = await freshDatabase(dir === undefined ? {} : { sqliteFile: join(dir, 'old.db') })
    const before = KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.indexOf('0023_exact_revenue_sums') - 1] as string
    const old = openStorage(database.target)
    await migrateTo(old, before)
    const db = old.db as unknown as Kysely<unknown>
    const today = dayOf(Date.now())
    // What an older version wrote: a sum at 2^63 − 1, and on SQLite a float past 64 bits (what
    // `Number(revenue)` became there: 1.0e+23); on PostgreSQL the same 2^63 − 1 (it refused more).
    const huge = BACKEND === 'sqlite' ? sql`${1e23}` : sql`cast(${INT64_MAX} as bigint)`
    await sql`insert into analytics_revenue_daily (shop_id, day, currency, amount) values
      ('old', ${today - 1}, 'USD', cast(${INT64_MAX} as bigint)), ('old', ${today - 2}, 'USD', ${huge}),
      ('old', ${today - 3}, 'EUR', 123456789012345678), ('old', ${today - 4}, 'JPY', -5)`.execute(db)
    await sql`insert into analytics_product_revenue (shop_id, product_id, currency, purchases, amount) values
      ('old', '1', 'USD', 2, ${huge}), ('old', '2', 'USD', 1, cast(${INT64_MAX} as bigint)), ('old', '3', 'EUR', 1, 1234)`.execute(db)
    await sql`insert into analytics_currencies (shop_id, currency, lines) values ('old', 'USD', 3), ('old', 'EUR', 1)`.execute(db)
    for (let k = 1; k <= 4; k++)
      await sql`insert into analytics_daily (shop_id, day, orders_influenced, lines_influenced) values ('old', ${today - k}, 1, 1)`.execute(
        db,
      )
    await old.destroy()
    // The upgrade: this version's migrations, then its app on the same database.
    t = await createTestApp({ database })
    ;({ admin } = await setUp(t))
    const shopId = (await t.storage.db.selectFrom('shops').select('id').executeTakeFirstOrThrow()).id
    for (const table of ['analytics_revenue_daily', 'analytics_product_revenue', 'analytics_currencies', 'analytics_daily']) {
      await sql`update ${sql.table(table)} set shop_id = ${shopId} where shop_id = 'old'`.execute(t.storage.db)
    }
  })
  afterAll(async () => {
    await t.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it('are split exactly by the upgrade and read without failing', async () => {
    // The float 1e23's exact value: 99,999,999,999,999,991,611,392.
    const huge = BACKEND === 'sqlite' ? BigInt(1e23) : 2n ** 63n - 1n
    const int64 = 2n ** 63n - 1n
    const data = (await dashboardReads(t, admin)) as Record<
      string,
      { revenueInfluenced?: unknown; revenue?: unknown; products?: { productId: string }[] }
    >
    expect(data['/v1/admin/analytics/conversions?period=all']?.revenueInfluenced).toEqual([
      { currency: 'EUR', amount: written(123456789012345678n, 2) },
      { currency: 'JPY', amount: '0' },
      { currency: 'USD', amount: written(int64 + huge, 2) },
    ])
    expect(data['/v1/analytics/product/1']?.revenue).toEqual([{ currency: 'USD', amount: written(huge, 2) }])
    expect(data['/v1/analytics/product/2']?.revenue).toEqual([{ currency: 'USD', amount: written(int64, 2) }])
    expect(data['/v1/analytics/top-products?limit=100&sort=revenue']?.products?.map((p) => p.productId)).toEqual(['1', '2'])
  })

  it('out-of-range parts written by hand read at their bounds, and a new order adds to them', async () => {
    const floatOrHuge = BACKEND === 'sqlite' ? sql`${1e30}` : sql`cast(${INT64_MAX} as bigint)`
    await sql`update analytics_product_revenue set amount_high = ${floatOrHuge}, amount = -7 where product_id = '1'`.execute(t.storage.db)
    await sql`update analytics_revenue_daily set amount_high = cast(${INT64_MAX} as bigint), amount = cast(${INT64_MAX} as bigint) where currency = 'USD'`.execute(
      t.storage.db,
    )
    await dashboardReads(t, admin)
    const res = await t.call('POST', '/v1/events', {
      token: admin,
      body: {
        events: [
          {
            type: 'order.created',
            order_id: '1',
            customer_id: '101',
            currency: 'USD',
            line_items: [{ product_id: '1', price: '12.34', quantity: 2 }],
          },
        ],
      },
    })
    expect(res.body).toEqual({ ok: true, data: { accepted: 1 } })
    const data = (await dashboardReads(t, admin)) as Record<string, { revenue?: unknown }>
    // The ceiling (10^26 − 10^12 minor units) plus the new line's 2,468.
    expect(data['/v1/analytics/product/1']?.revenue).toEqual([
      { currency: 'USD', amount: written(99_999_999_999_999n * 10n ** 12n + 2_468n, 2) },
    ])
  })
})
