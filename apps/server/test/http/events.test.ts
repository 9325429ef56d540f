import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeQueuedSignals } from '../../src/modules/events/product-fan-out.js'
import { createWebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { loggedFacts } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { startReceiver } from '../helpers/receiver.js'

let t: TestApp
let shop: TestShop
let admin: string
let product = 5000

const nextProduct = () => String(++product)

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('scale')
  await shop.subscribe()
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const send = (events: unknown[], token = admin) => t.call('POST', '/v1/events', { token, body: { events } })

async function accept(events: unknown[], s?: { token: string }) {
  const res = await send(events, s?.token ?? admin)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(res.body).toEqual({ ok: true, data: { accepted: events.length } })
}

async function addItem(customerId: string, productId: string, opts: { wishlist?: string; s?: TestShop; token?: string } = {}) {
  const q = opts.wishlist ? `?wishlist_id=${opts.wishlist}` : ''
  const res = await t.call('POST', `/v1/wishlists/${customerId}/items${q}`, { token: opts.token ?? admin, body: { product_id: productId } })
  expect([200, 201]).toContain(res.status)
}

async function addGuestItem(guestId: string, productId: string) {
  const res = await t.call('POST', `/v1/wishlists/${guestId}/items`, { headers: shop.guest(guestId), body: { product_id: productId } })
  expect(res.status).toBe(201)
}

/** Queued product signals written to the outbox, as the webhook worker does before it fans out. */
async function writeQueued() {
  while ((await writeQueuedSignals(t.storage.db)) > 0);
}

/** Product events this shop's outbox received (the webhook worker's input), once the queued ones are written. */
async function productEvents(productId: string) {
  await writeQueued()
  const rows = await t.storage.db
    .selectFrom('outbox')
    .selectAll()
    .where('shop_id', '=', shop.id)
    .where('event', 'like', 'wishlist.product.%')
    .orderBy('created_at')
    .execute()
  // Events written in one transaction share a timestamp and have no order among them.
  const key = (r: { event: string; data: Record<string, unknown> }) => `${r.event} ${String(r.data.variantId).padStart(32, '0')}`
  return rows
    .map((r) => ({ event: r.event, data: JSON.parse(r.payload) as Record<string, unknown> }))
    .filter((r) => r.data.productId === productId)
    .sort((a, b) => key(a).localeCompare(key(b)))
}

const update = (productId: string, variants: Array<[string, string | number, number]>, extra: Record<string, unknown> = {}) => ({
  type: 'product.updated',
  product_id: productId,
  variants: variants.map(([variant_id, price, inventory_quantity]) => ({ variant_id, price, inventory_quantity })),
  ...extra,
})

describe('POST /v1/events: validation', () => {
  it('rejects the whole batch when one event is invalid, naming its index', async () => {
    const productId = nextProduct()
    await addItem('11', productId)
    const res = await send([
      update(productId, [['1', '10.00', 3]]),
      { type: 'cart.item_added', customer_id: '11', product_id: productId },
      { type: 'product.updated', product_id: productId, variants: [{ variant_id: '1', price: 'ten', inventory_quantity: 1 }] },
    ])
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
    expect(res.body.error.details).toEqual([
      { path: 'body.events.2.variants.0.price', message: 'must be a decimal string such as "19.99" or a non-negative number', index: 2 },
    ])
    // Nothing was applied: the catalog still does not know the product's default variant.
    const list = await t.call('GET', '/v1/wishlists/11', { token: admin })
    expect(list.body.data.items.find((i: { productId: string }) => i.productId === productId).variantId).toBeNull()
  })

  it.each([
    [{ type: 'order.shipped' }, 'body.events.0.type'],
    [{ type: 'cart.item_added', product_id: '1' }, 'body.events.0'],
    [{ type: 'cart.item_added', customer_id: '1', guest_id: 'guest-123456', product_id: '1' }, 'body.events.0'],
    [{ type: 'cart.item_added', customer_id: 'abc', product_id: '1' }, 'body.events.0.customer_id'],
    [{ type: 'product.updated', product_id: '1', variants: [] }, 'body.events.0.variants'],
    [
      { type: 'product.updated', product_id: '1', variants: [{ variant_id: '2', price: '1', inventory_quantity: 1.5 }] },
      'body.events.0.variants.0.inventory_quantity',
    ],
    [
      { type: 'product.updated', product_id: '1', variants: [{ variant_id: '2', price: -1, inventory_quantity: 1 }] },
      'body.events.0.variants.0.price',
    ],
    // A number holds no more decimals than a decimal string may (6): 7.1234567 and 1e-7 are not rounded.
    [
      { type: 'product.updated', product_id: '1', variants: [{ variant_id: '2', price: 7.1234567, inventory_quantity: 1 }] },
      'body.events.0.variants.0.price',
    ],
    [
      { type: 'product.updated', product_id: '1', variants: [{ variant_id: '2', price: 1e-7, inventory_quantity: 1 }] },
      'body.events.0.variants.0.price',
    ],
    [
      {
        type: 'product.updated',
        product_id: '1',
        variants: [
          { variant_id: '2', price: '1', inventory_quantity: 1 },
          { variant_id: '2', price: '1', inventory_quantity: 1 },
        ],
      },
      'body.events.0.variants.1.variant_id',
    ],
    [{ type: 'order.created', customer_id: '1', line_items: [] }, 'body.events.0.line_items'],
    [{ type: 'order.created', email: 'not-an-email', line_items: [{ product_id: '1' }] }, 'body.events.0.email'],
  ])('refuses %j', async (event, path) => {
    const res = await send([event])
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('VALIDATION_ERROR')
    expect(res.body.error.details[0]).toMatchObject({ path, index: 0 })
  })

  it('accepts prices as numbers with up to 6 decimals', async () => {
    const prices = [0, 0.000001, 19.99, 7.123456, 1e15]
    const res = await send([
      {
        type: 'product.updated',
        product_id: '77',
        variants: prices.map((price, i) => ({ variant_id: String(i + 1), price, inventory_quantity: 1 })),
      },
    ])
    expect(res.body).toEqual({ ok: true, data: { accepted: 1 } })
  })

  it('accepts at most 500 events per call', async () => {
    const event = { type: 'cart.item_added', guest_id: 'guest-batch-1', product_id: '1' }
    expect((await send(Array.from({ length: 501 }, () => event))).status).toBe(400)
    await accept(Array.from({ length: 500 }, () => event))
    await accept([])
  })

  it('accepts at most 5,000 order line items across one call, and writes nothing for a bigger one', async () => {
    const order = (n: number, offset: number) => ({
      type: 'order.created',
      customer_id: String(900 + n),
      line_items: Array.from({ length: 1000 }, (_, i) => ({ product_id: String(offset + i + 1) })),
    })
    // A shop of its own: the 5,000 invitations must not crowd the other tests' webhook events.
    const s = await t.createShop('scale')
    const token = await s.adminToken()
    const invitations = async () =>
      Number(
        (
          await t.storage.db
            .selectFrom('review_invitations')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('shop_id', '=', s.id)
            .executeTakeFirstOrThrow()
        ).n,
      )
    const six = Array.from({ length: 6 }, (_, n) => order(n, 500_000 + n * 1000))
    const res = await send(six, token)
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'body.events', message: expect.stringContaining('at most 5000 order line items') }],
    })
    expect(await invitations()).toBe(0)
    await accept(six.slice(0, 5), { token })
    expect(await invitations()).toBe(5000)
  })

  it('is for admin tokens only', async () => {
    const event = { type: 'cart.item_added', customer_id: '1', product_id: '1' }
    expect((await send([event], await shop.customerToken('1'))).status).toBe(403)
    expect((await t.call('POST', '/v1/events', { headers: shop.guest('guest-123456'), body: { events: [event] } })).status).toBe(403)
    expect((await t.call('POST', '/v1/events', { body: { events: [event] } })).status).toBe(401)
  })
})

describe('cart.item_added', () => {
  it('records a cart add for the customer or the guest, with its time', async () => {
    const productId = nextProduct()
    await accept([
      {
        type: 'cart.item_added',
        customer_id: 'gid://shopify/Customer/31',
        product_id: `gid://shopify/Product/${productId}`,
        variant_id: '9',
      },
      { type: 'cart.item_added', guest_id: 'guest-cart-001', product_id: productId, occurred_at: '2026-01-02T03:04:05.678Z' },
    ])
    const facts = await (await loggedFacts(t.storage.db, shop.id)).selectAll().where('product_id', '=', productId).orderBy('id').execute()
    expect(facts.map((f) => [f.type, f.owner_type, f.owner_id])).toEqual([
      ['cart_add', 'customer', '31'],
      ['cart_add', 'guest', 'guest-cart-001'],
    ])
    expect(facts[1]!.occurred_at).toBe(Date.parse('2026-01-02T03:04:05.678Z'))
  })
})

describe('product.updated', () => {
  it('keeps the catalog: the first variant becomes the default variant of wishlist items', async () => {
    const productId = nextProduct()
    await addItem('12', productId)
    await accept([
      update(
        productId,
        [
          ['71', '5.00', 1],
          ['72', '6.00', 1],
        ],
        { handle: 'blue-shirt' },
      ),
    ])
    const list = await t.call('GET', '/v1/wishlists/12', { token: admin })
    expect(list.body.data.items[0]).toMatchObject({ productId, variantId: '71' })
    await accept([
      update(productId, [
        ['73', '5.00', 1],
        ['71', '5.00', 1],
      ]),
    ])
    expect((await t.call('GET', '/v1/wishlists/12', { token: admin })).body.data.items[0].variantId).toBe('73')
  })

  it('first sight sets the baseline and emits nothing', async () => {
    const productId = nextProduct()
    await addItem('13', productId)
    await accept([update(productId, [['1', '10.00', 0]])])
    expect(await productEvents(productId)).toEqual([])
  })

  it('back_in_stock when a variant goes from ≤ 0 to > 0, with who holds the product', async () => {
    const productId = nextProduct()
    await addItem('14', productId)
    await addItem('15', productId)
    await addGuestItem('guest-stock-01', productId)
    await accept([
      update(
        productId,
        [
          ['1', '10.00', 0],
          ['2', '10.00', -2],
          ['3', '10.00', 4],
        ],
        { handle: 'lamp' },
      ),
    ])
    await accept([
      update(productId, [
        ['1', '10.00', 2],
        ['2', '10.00', 8],
        ['3', '10.00', 9],
      ]),
    ])
    expect(await productEvents(productId)).toEqual([
      {
        event: 'wishlist.product.back_in_stock',
        data: {
          productId,
          variantId: '1',
          handle: 'lamp',
          before: { price: '10.00', inventoryQuantity: 0 },
          after: { price: '10.00', inventoryQuantity: 2 },
          wishlistCount: 3,
          customerIds: ['14', '15'],
          truncated: false,
        },
      },
      {
        event: 'wishlist.product.back_in_stock',
        data: expect.objectContaining({
          variantId: '2',
          before: { price: '10.00', inventoryQuantity: -2 },
          after: { price: '10.00', inventoryQuantity: 8 },
        }),
      },
    ])
  })

  it('price_dropped when a price falls, compared as decimals', async () => {
    const productId = nextProduct()
    await addItem('16', productId)
    await accept([
      update(productId, [
        ['1', '20.00', 10],
        ['2', 5, 10],
      ]),
    ])
    await accept([
      update(productId, [
        ['1', 20, 10],
        ['2', '5.0', 10],
      ]),
    ]) // same prices, other spellings
    await accept([
      update(productId, [
        ['1', '21', 10],
        ['2', '5', 10],
      ]),
    ]) // a rise
    expect(await productEvents(productId)).toEqual([])
    await accept([
      update(productId, [
        ['1', '19.99', 10],
        ['2', 4.5, 10],
      ]),
    ])
    const events = await productEvents(productId)
    expect(events.map((e) => [e.event, e.data.variantId, e.data.before, e.data.after])).toEqual([
      ['wishlist.product.price_dropped', '1', { price: '21.00', inventoryQuantity: 10 }, { price: '19.99', inventoryQuantity: 10 }],
      ['wishlist.product.price_dropped', '2', { price: '5.00', inventoryQuantity: 10 }, { price: '4.50', inventoryQuantity: 10 }],
    ])
  })

  it('low_stock when inventory goes from ≥ 5 to 1..4, and only then', async () => {
    const productId = nextProduct()
    await addItem('17', productId)
    await accept([
      update(productId, [
        ['1', '1', 5],
        ['2', '1', 10],
        ['3', '1', 4],
        ['4', '1', 10],
      ]),
    ])
    await accept([
      update(productId, [
        ['1', '1', 4],
        ['2', '1', 1],
        ['3', '1', 3],
        ['4', '1', 0],
      ]),
    ])
    const events = await productEvents(productId)
    expect(events.map((e) => [e.event, e.data.variantId])).toEqual([
      ['wishlist.product.low_stock', '1'],
      ['wishlist.product.low_stock', '2'],
    ])
    expect(events[0]!.data).toMatchObject({
      before: { inventoryQuantity: 5 },
      after: { inventoryQuantity: 4 },
      wishlistCount: 1,
      customerIds: ['17'],
    })
  })

  it('writes only the signals a webhook of the shop takes, and moves the baseline either way', async () => {
    const s = await t.createShop('scale')
    const token = await s.adminToken()
    const productId = nextProduct()
    const outbox = async () => {
      await writeQueued()
      return (await t.storage.db.selectFrom('outbox').select(['event', 'payload']).where('shop_id', '=', s.id).execute()).map((r) => [
        r.event,
        JSON.parse(r.payload).before,
      ])
    }
    await addItem('30', productId, { token })
    await accept([update(productId, [['1', '10', 0]])], { token })
    await accept([update(productId, [['1', '9', 3]])], { token }) // back in stock and cheaper: no webhook takes either
    expect(await outbox()).toEqual([])
    await s.subscribe(['wishlist.product.price_dropped'])
    await accept([update(productId, [['1', '8', 10]])], { token }) // cheaper again, from the moved baseline
    expect(await outbox()).toEqual([['wishlist.product.price_dropped', { price: '9.00', inventoryQuantity: 3 }]])
    await accept([update(productId, [['1', '8', 2]])], { token }) // low stock: not taken
    expect(await outbox()).toHaveLength(1)
  })

  it('emits nothing for products no list holds, but still moves their baseline', async () => {
    const productId = nextProduct()
    await accept([update(productId, [['1', '10', 0]])])
    await accept([update(productId, [['1', '8', 5]])])
    expect(await productEvents(productId)).toEqual([])
    await addItem('18', productId)
    await accept([
      update(productId, [
        ['1', '8', 3],
        ['9', '1', 7],
      ]),
    ]) // low stock vs the last state; variant 9 is new
    expect((await productEvents(productId)).map((e) => [e.event, e.data.variantId])).toEqual([['wishlist.product.low_stock', '1']])
  })

  it('compares each update of one batch with the one before it', async () => {
    const productId = nextProduct()
    await addItem('19', productId)
    await accept([update(productId, [['1', '10', 0]]), update(productId, [['1', '10', 7]]), update(productId, [['1', '9', 2]])])
    expect((await productEvents(productId)).map((e) => e.event)).toEqual([
      'wishlist.product.back_in_stock',
      'wishlist.product.low_stock',
      'wishlist.product.price_dropped',
    ])
  })

  it('counts distinct holders and lists at most 1,000 customer ids', async () => {
    const productId = nextProduct()
    const at = Date.now()
    const rows = Array.from({ length: 1002 }, (_, i) => ({
      shop_id: shop.id,
      owner_type: 'customer' as const,
      owner_id: String(100000 + i),
      list_id: 'default',
      product_id: productId,
      variant_id: null,
      handle: null,
      metadata: null,
      added_at: at,
    }))
    // The same customer in a second list counts once.
    rows.push({ ...rows[0]!, list_id: 'wl_second' })
    for (let i = 0; i < rows.length; i += 200)
      await t.storage.db
        .insertInto('wishlist_items')
        .values(rows.slice(i, i + 200))
        .execute()
    await accept([update(productId, [['1', '10', 0]])])
    await accept([update(productId, [['1', '10', 1]])])
    const [event] = await productEvents(productId)
    expect(event!.data.wishlistCount).toBe(1002)
    expect(event!.data.customerIds).toHaveLength(1000)
    expect(event!.data.truncated).toBe(true)
  })

  it('reaches a subscribed webhook, signed, with the documented payload', async () => {
    const receiver = await startReceiver()
    const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks })
    try {
      const created = await t.call('POST', '/v1/webhooks', {
        token: admin,
        body: { url: `${receiver.url}/hook`, events: ['wishlist.product.back_in_stock'] },
      })
      expect(created.status).toBe(201)
      await worker.runOnce() // earlier tests' events happened before the webhook existed: not sent
      const productId = nextProduct()
      await addItem('20', productId)
      await accept([update(productId, [['1', '10', 0]])])
      await accept([update(productId, [['1', '9', 3]])]) // back in stock and a price drop: only the first is subscribed
      await worker.runOnce()
      const [hit] = await receiver.waitFor(1)
      expect(receiver.received).toHaveLength(1)
      expect(new Webhook(created.body.data.secret).verify(hit!.body, hit!.headers as Record<string, string>)).toEqual({
        event: 'wishlist.product.back_in_stock',
        shopDomain: shop.domain,
        occurredAt: expect.any(String),
        data: {
          productId,
          variantId: '1',
          before: { price: '10.00', inventoryQuantity: 0 },
          after: { price: '9.00', inventoryQuantity: 3 },
          wishlistCount: 1,
          customerIds: ['20'],
          truncated: false,
        },
      })
      await t.call('DELETE', `/v1/webhooks/${created.body.data.webhookId}`, { token: admin })
    } finally {
      await worker.stop()
      await receiver.close()
    }
  })
})

describe('order.created', () => {
  it("removes the bought products from the customer's lists when remove_on_purchase is on", async () => {
    const s = await t.createShop('scale', { remove_on_purchase: true, multi_wishlist_enabled: true })
    const token = await s.adminToken()
    const [a, b, c] = [nextProduct(), nextProduct(), nextProduct()]
    const list = await t.call('POST', '/v1/wishlists/21/lists', { token, body: { name: 'Gifts' } })
    expect(list.status).toBe(201)
    const gifts = list.body.data.wishlist.wishlistId
    await addItem('21', a, { token })
    await addItem('21', b, { token })
    await addItem('21', a, { token, wishlist: gifts })
    await addItem('22', a, { token })
    await accept(
      [
        {
          type: 'order.created',
          customer_id: '21',
          email: 'c21@example.com',
          line_items: [{ product_id: a }, { product_id: c, variant_id: '5' }],
        },
      ],
      { token },
    )
    const items = async (customerId: string, wishlist = 'default') =>
      (await t.call('GET', `/v1/wishlists/${customerId}?wishlist_id=${wishlist}`, { token })).body.data
    expect((await items('21')).items.map((i: { productId: string }) => i.productId)).toEqual([b])
    expect((await items('21')).total).toBe(1)
    expect((await items('21', gifts)).items).toEqual([])
    expect((await items('22')).items.map((i: { productId: string }) => i.productId)).toEqual([a]) // another customer keeps it
    const removes = await (await loggedFacts(t.storage.db, s.id)).selectAll().where('type', '=', 'remove').execute()
    expect(removes.map((r) => [r.owner_id, r.product_id])).toEqual([
      ['21', a],
      ['21', a],
    ])
    const owner = await t.storage.db
      .selectFrom('wishlist_owners')
      .select('item_count')
      .where('shop_id', '=', s.id)
      .where('owner_id', '=', '21')
      .executeTakeFirst()
    expect(owner?.item_count).toBe(1)
  })

  it('keeps wishlists as they are when remove_on_purchase is off', async () => {
    const productId = nextProduct()
    await addItem('23', productId)
    await accept([{ type: 'order.created', customer_id: '23', line_items: [{ product_id: productId }] }])
    expect(
      (await t.call('GET', '/v1/wishlists/23', { token: admin })).body.data.items.map((i: { productId: string }) => i.productId),
    ).toEqual([productId])
  })

  it("marks the buyer's linked reviews of those products as verified purchases, never reviews by its e-mail", async () => {
    const s = await t.createShop('free', { reviews_auto_approve: true })
    const token = await s.adminToken()
    const productId = nextProduct()
    const submit = async (email: string, customerId?: string) => {
      const auth: Record<string, string> = customerId === undefined ? {} : { authorization: `Bearer ${await s.customerToken(customerId)}` }
      const res = await t.call('POST', '/api/v1/reviews', {
        headers: { 'x-storefront-key': s.storefrontKey, ...auth },
        body: { productId, customerEmail: email, customerName: 'Ann', rating: 5, body: 'Lovely.' },
      })
      expect(res.status).toBe(201)
      return res.body.id as number
    }
    const mine = await submit('ann@example.com', '61')
    const typed = await submit('Buyer@Example.com')
    await accept(
      [
        {
          type: 'order.created',
          customer_id: '61',
          email: 'buyer@example.com',
          line_items: [{ product_id: `gid://shopify/Product/${productId}` }],
        },
      ],
      { token },
    )
    const verified = async (id: number) => (await t.call('GET', `/api/v1/reviews/${id}`, { token })).body.verifiedPurchase
    expect(await verified(mine)).toBe(true)
    expect(await verified(typed)).toBe(false)
  })
})
