/**
 * Inputs that are valid JSON Schema but reached a 500, or were stored changed: a leap second,
 * JSON nested past 64 levels (deep metadata once overflowed the stack), metadata nested past 8, a
 * charset other than UTF-8, bytes that are not UTF-8 (once stored as U+FFFD). Both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string
beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('scale')
  admin = await shop.adminToken()
})
afterAll(() => t.close())

const LEAP = '2016-12-31T23:59:60Z'
const LAST_MS = '2016-12-31T23:59:59.999Z'
const asAdmin = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...extra })

describe('a leap second (second 60, valid RFC 3339)', () => {
  it('is read as the last millisecond of its minute in merge added_at, import added_at and events occurred_at', async () => {
    const merged = await t.call('POST', '/v1/wishlists/8101/merge', {
      token: admin,
      body: { guest_items: [{ product_id: '1', added_at: LEAP }] },
    })
    expect(merged.status).toBe(200)
    const imported = await t.call('POST', '/v1/wishlists/import', {
      token: admin,
      body: { items: [{ customer_id: '8102', product_id: '2', added_at: LEAP }] },
    })
    expect(imported.status).toBe(200)
    for (const customer of ['8101', '8102']) {
      const list = await t.call('GET', `/v1/wishlists/${customer}`, { token: admin })
      expect(list.body.data.items.map((i: { addedAt: string }) => i.addedAt)).toEqual([LAST_MS])
    }
    const offset = await t.call('POST', '/v1/wishlists/import', {
      token: admin,
      body: { items: [{ customer_id: '8103', product_id: '3', added_at: '2016-12-31T18:59:60-05:00' }] },
    })
    expect(offset.status).toBe(200)
    expect((await t.call('GET', '/v1/wishlists/8103', { token: admin })).body.data.items[0].addedAt).toBe(LAST_MS)
    const events = await t.call('POST', '/v1/events', {
      token: admin,
      body: { events: [{ type: 'cart.item_added', customer_id: '8101', product_id: '1', occurred_at: LEAP }] },
    })
    expect(events.status).toBeLessThan(300)
  })
})

describe('nesting', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

  it('JSON deeper than 64 levels is 400 INVALID_JSON; 64 levels are parsed', async () => {
    const deep = await t.inject({
      method: 'POST',
      url: '/v1/wishlists/8201/items',
      headers: asAdmin(),
      payload: `{"product_id":"1","x":${nested(64)}}`,
    })
    expect(deep.statusCode).toBe(400)
    expect(deep.json().error.code).toBe('INVALID_JSON')
    const fine = await t.inject({
      method: 'POST',
      url: '/v1/wishlists/8201/items',
      headers: asAdmin(),
      payload: `{"product_id":"1","x":${nested(63)}}`,
    })
    expect(fine.statusCode).toBe(201)
    const huge = await t.inject({
      method: 'POST',
      url: '/v1/wishlists/8201/items',
      headers: asAdmin(),
      payload: `{"product_id":"1","metadata":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}}`,
    })
    expect(huge.statusCode).toBe(400)
    expect(huge.json().error.code).toBe('INVALID_JSON')
  })

  it('metadata deeper than 8 levels is 400 VALIDATION_ERROR; 8 levels are stored', async () => {
    const meta = (depth: number) => JSON.parse('{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1)) as object
    const deep = await t.call('POST', '/v1/wishlists/8202/items', { token: admin, body: { product_id: '1', metadata: meta(9) } })
    expect(deep.status).toBe(400)
    expect(deep.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'body.metadata', message: expect.stringContaining('8 levels') }],
    })
    const ok = await t.call('POST', '/v1/wishlists/8202/items', { token: admin, body: { product_id: '1', metadata: meta(8) } })
    expect(ok.status).toBe(201)
    expect(ok.body.data.item.metadata).toEqual(meta(8))
    const imported = await t.call('POST', '/v1/wishlists/import', {
      token: admin,
      body: { items: [{ customer_id: '8203', product_id: '1', metadata: meta(9) }] },
    })
    expect(imported.status).toBe(400)
    expect(imported.body.error.details[0]).toMatchObject({ path: 'body.items.0.metadata', index: 0 })
  })
})

describe('text encoding', () => {
  it('a charset other than UTF-8 is 415 UNSUPPORTED_MEDIA_TYPE; utf-8 in any spelling is accepted', async () => {
    for (const charset of ['iso-8859-1', 'utf-16', 'UTF-16LE', 'windows-1252', '"latin1"']) {
      const res = await t.inject({
        method: 'POST',
        url: '/v1/wishlists/8301/items',
        headers: asAdmin({ 'content-type': `application/json; charset=${charset}` }),
        payload: '{"product_id":"1"}',
      })
      expect({ charset, status: res.statusCode, code: res.json().error.code }).toEqual({
        charset,
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      })
    }
    for (const charset of ['utf-8', 'UTF-8', 'utf8', '"utf-8"']) {
      const res = await t.inject({
        method: 'POST',
        url: '/v1/wishlists/8301/items',
        headers: asAdmin({ 'content-type': `application/json; charset=${charset}` }),
        payload: '{"product_id":"1"}',
      })
      expect(res.statusCode).toBeLessThan(300)
    }
  })

  it('bytes that are not UTF-8 are 400 INVALID_JSON, never stored as U+FFFD', async () => {
    for (const bytes of [Buffer.from([0xe9]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff, 0xfe])]) {
      const payload = Buffer.concat([Buffer.from('{"product_id":"1","handle":"caf'), bytes, Buffer.from('"}')])
      const res = await t.inject({ method: 'POST', url: '/v1/wishlists/8302/items', headers: asAdmin(), payload })
      expect(res.statusCode).toBe(400)
      expect(res.json().error.code).toBe('INVALID_JSON')
    }
    expect((await t.call('GET', '/v1/wishlists/8302', { token: admin })).body.data.items).toEqual([])
    const good = await t.inject({
      method: 'POST',
      url: '/v1/wishlists/8302/items',
      headers: asAdmin(),
      payload: Buffer.from('{"product_id":"1","handle":"café"}'),
    })
    expect(good.statusCode).toBe(201)
    expect(good.json().data.item.handle).toBe('café')
  })
})
