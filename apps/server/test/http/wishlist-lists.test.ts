import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { up as rekeyListNames } from '../../src/db/migrations/0012_list_name_keys.js'
import { loggedFacts } from '../helpers/analytics.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'

let t: TestApp
let shop: TestShop
let admin: string

beforeAll(async () => {
  t = await createTestApp()
  shop = await t.createShop('growth', { multi_wishlist_enabled: true })
  await shop.subscribe()
  admin = await shop.adminToken()
})
afterAll(() => t.close())

let nextCustomer = 100
const newCustomer = () => String(++nextCustomer)
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const createList = (c: string, name: string, token = admin) => t.call('POST', `/v1/wishlists/${c}/lists`, { token, body: { name } })
const add = (c: string, productId: string, listId?: string, token = admin) =>
  t.call('POST', `/v1/wishlists/${c}/items${listId ? `?wishlist_id=${listId}` : ''}`, { token, body: { product_id: productId } })
const lists = (c: string, token = admin) => t.call('GET', `/v1/wishlists/${c}/lists`, { token })

describe('lists', () => {
  it('has an implicit default list named "My Wishlist" without creating anything, as old as the shop on every read', async () => {
    const c = newCustomer()
    const shopCreated = new Date((await t.app.services.shops.get(shop.id))!.createdAt).toISOString()
    const res = await lists(c)
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({
      wishlists: [{ wishlistId: 'default', name: 'My Wishlist', itemCount: 0, createdAt: shopCreated, updatedAt: shopCreated }],
    })
    // Read again: the same times (nothing was written).
    expect((await lists(c)).body.data).toEqual(res.body.data)
    const owners = await t.storage.db
      .selectFrom('wishlist_owners')
      .select('owner_id')
      .where('shop_id', '=', shop.id)
      .where('owner_id', '=', c)
      .execute()
    expect(owners).toEqual([])
  })

  it('creates lists (201, itemCount 0), lists them default first then by creation, with item counts', async () => {
    const c = newCustomer()
    const a = await createList(c, '  Birthday  ')
    expect(a.status).toBe(201)
    expect(a.body.data.wishlist).toEqual({
      wishlistId: expect.stringMatching(/^wl_/),
      name: 'Birthday',
      itemCount: 0,
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: expect.stringMatching(ISO_MS),
    })
    const b = await createList(c, 'Xmas')
    await add(c, '1')
    await add(c, '2', a.body.data.wishlist.wishlistId)
    await add(c, '3', a.body.data.wishlist.wishlistId)
    const res = await lists(c)
    expect(res.body.data.wishlists.map((l: { wishlistId: string; itemCount: number }) => [l.wishlistId, l.itemCount])).toEqual([
      ['default', 1],
      [a.body.data.wishlist.wishlistId, 2],
      [b.body.data.wishlist.wishlistId, 0],
    ])
  })

  it('validates names: trimmed 1..100 characters, unique ignoring case, including the default name', async () => {
    const c = newCustomer()
    for (const name of ['', '   ', 'x'.repeat(101), '🎁'.repeat(101)]) {
      const res = await createList(c, name)
      expect(res.status, JSON.stringify(name)).toBe(400)
      expect(res.body.error.code).toBe('VALIDATION_ERROR')
    }
    expect((await createList(c, 'x'.repeat(100))).status).toBe(201)
    // Characters are code points: 100 emoji (200 UTF-16 units) are 100 characters.
    const emoji = await createList(c, '🎁'.repeat(100))
    expect(emoji.status).toBe(201)
    const rename = await t.call('PUT', `/v1/wishlists/${c}/lists/${emoji.body.data.wishlist.wishlistId}`, {
      token: admin,
      body: { name: `${'🎀'.repeat(100)} ` },
    })
    expect(rename.body).toEqual({ ok: true, data: { updated: true } })
    expect((await createList(c, 'Gifts')).status).toBe(201)
    const dup = await createList(c, ' GIFTS ')
    expect(dup.status).toBe(409)
    expect(dup.body.error.code).toBe('LIST_NAME_TAKEN')
    expect((await createList(c, 'my wishlist')).body.error.code).toBe('LIST_NAME_TAKEN')
  })

  it('compares names after NFKC, without format characters, case-folded: Gifts, Gifts\u200b and ＧＩＦＴＳ are one name', async () => {
    const c = newCustomer()
    const gifts = await createList(c, 'Gifts')
    expect(gifts.status).toBe(201)
    for (const lookalike of ['Gifts\u200b', 'ＧＩＦＴＳ', 'G\u200dif\u00adts', '\u202eGifts', 'gifts\ufeff', 'ｇｉｆｔｓ\u2060']) {
      const dup = await createList(c, lookalike)
      expect({ lookalike, status: dup.status, code: dup.body.error?.code }).toEqual({ lookalike, status: 409, code: 'LIST_NAME_TAKEN' })
    }
    // Full case folding: ß is ss.
    expect((await createList(c, 'Straße')).status).toBe(201)
    expect((await createList(c, 'STRASSE')).body.error.code).toBe('LIST_NAME_TAKEN')
    // The default list's name too, and on rename.
    expect((await createList(c, 'Ｍｙ Ｗｉｓｈｌｉｓｔ')).body.error.code).toBe('LIST_NAME_TAKEN')
    const other = await createList(c, 'Birthday')
    const rename = await t.call('PUT', `/v1/wishlists/${c}/lists/${other.body.data.wishlist.wishlistId}`, {
      token: admin,
      body: { name: 'GIFTS\u200b' },
    })
    expect(rename.status).toBe(409)
    expect(rename.body.error.code).toBe('LIST_NAME_TAKEN')
    // Renaming a list to a variant of its own name is allowed; the name is stored as sent.
    const self = await t.call('PUT', `/v1/wishlists/${c}/lists/${gifts.body.data.wishlist.wishlistId}`, {
      token: admin,
      body: { name: 'ＧＩＦＴＳ' },
    })
    expect(self.status).toBe(200)
    expect((await lists(c)).body.data.wishlists.map((l: { name: string }) => l.name)).toEqual([
      'My Wishlist',
      'ＧＩＦＴＳ',
      'Straße',
      'Birthday',
    ])
    // A name of nothing but format characters is no name.
    const invisible = await createList(c, '\u200b\u200d')
    expect(invisible.status).toBe(400)
    expect(invisible.body.error.details).toEqual([{ path: 'body.name', message: expect.stringContaining('format characters') }])
    // Each owner has its own names.
    expect((await createList(newCustomer(), 'Gifts\u200b')).status).toBe(201)
  })

  it('migration 0012 re-keys existing names: lookalikes that now collide get a numbered name, the default and older lists keep theirs', async () => {
    const c = newCustomer()
    const c2 = newCustomer()
    expect((await add(c, '1')).status).toBe(201)
    expect((await add(c2, '1')).status).toBe(201)
    // Rows as the former rule (trimmed, lower-cased) let them coexist.
    const legacy = [
      { owner_id: c, id: 'wl_legacy1', name: 'Gifts (2)' },
      { owner_id: c, id: 'wl_legacy2', name: 'Gifts' },
      { owner_id: c, id: 'wl_legacy3', name: 'Gifts\u200b' },
      { owner_id: c, id: 'wl_legacy4', name: 'ＧＩＦＴＳ' },
      { owner_id: c, id: 'wl_legacy5', name: 'My Wishlist\u200b' },
      { owner_id: c, id: 'wl_legacy6', name: '\u200b' },
      { owner_id: c2, id: 'wl_legacy7', name: 'Gifts\u200b' },
    ]
    await t.storage.db
      .insertInto('wishlist_lists')
      .values(
        legacy.map((r, i) => ({
          shop_id: shop.id,
          owner_type: 'customer' as const,
          ...r,
          name_key: r.name.toLowerCase(),
          created_at: 1_000 + i,
          updated_at: 1_000 + i,
        })),
      )
      .execute()
    await rekeyListNames(t.storage.db as unknown as Kysely<unknown>, t.storage.backend)
    const rows = await t.storage.db
      .selectFrom('wishlist_lists')
      .select(['owner_id', 'id', 'name', 'name_key'])
      .where('shop_id', '=', shop.id)
      .where('id', 'like', 'wl_legacy%')
      .orderBy('id')
      .execute()
    expect(rows).toEqual([
      { owner_id: c, id: 'wl_legacy1', name: 'Gifts (2)', name_key: 'gifts (2)' },
      { owner_id: c, id: 'wl_legacy2', name: 'Gifts', name_key: 'gifts' },
      { owner_id: c, id: 'wl_legacy3', name: 'Gifts\u200b (3)', name_key: 'gifts (3)' },
      { owner_id: c, id: 'wl_legacy4', name: 'ＧＩＦＴＳ (4)', name_key: 'gifts (4)' },
      { owner_id: c, id: 'wl_legacy5', name: 'My Wishlist\u200b (2)', name_key: 'my wishlist (2)' },
      { owner_id: c, id: 'wl_legacy6', name: 'List (2)', name_key: 'list (2)' },
      { owner_id: c2, id: 'wl_legacy7', name: 'Gifts\u200b', name_key: 'gifts' },
    ])
    // Running it again changes nothing; the new keys hold through the API.
    await rekeyListNames(t.storage.db as unknown as Kysely<unknown>, t.storage.backend)
    expect(
      await t.storage.db
        .selectFrom('wishlist_lists')
        .select(['owner_id', 'id', 'name', 'name_key'])
        .where('shop_id', '=', shop.id)
        .where('id', 'like', 'wl_legacy%')
        .orderBy('id')
        .execute(),
    ).toEqual(rows)
    expect((await createList(c2, 'GIFTS')).body.error.code).toBe('LIST_NAME_TAKEN')
    expect((await createList(c, 'gifts (3)')).body.error.code).toBe('LIST_NAME_TAKEN')
    expect((await lists(c)).body.data.wishlists).toHaveLength(7)
  })

  it('allows 20 lists including the default one, then WISHLIST_LIMIT', async () => {
    const c = newCustomer()
    for (let i = 1; i <= 19; i++) expect((await createList(c, `List ${i}`)).status).toBe(201)
    const over = await createList(c, 'List 20')
    expect(over.status).toBe(400)
    expect(over.body.error.code).toBe('WISHLIST_LIMIT')
    expect((await lists(c)).body.data.wishlists).toHaveLength(20)
  })

  it('lists named lists in creation order, even when created in the same millisecond', async () => {
    const c = newCustomer()
    const created = await Promise.all(['One', 'Two', 'Three', 'Four', 'Five', 'Six'].map((name) => createList(c, name)))
    const views = created.map((r) => r.body.data.wishlist as { wishlistId: string; createdAt: string })
    expect(new Set(views.map((v) => v.createdAt)).size).toBe(views.length)
    const byCreation = [...views].sort((x, y) => x.createdAt.localeCompare(y.createdAt)).map((v) => v.wishlistId)
    const listed = (await lists(c)).body.data.wishlists.map((l: { wishlistId: string }) => l.wishlistId)
    expect(listed).toEqual(['default', ...byCreation])
  })

  it('renames lists, the default one too, keeping names unique', async () => {
    const c = newCustomer()
    const a = (await createList(c, 'Alpha')).body.data.wishlist.wishlistId
    await createList(c, 'Beta')
    const renamed = await t.call('PUT', `/v1/wishlists/${c}/lists/${a}`, { token: admin, body: { name: 'Gamma' } })
    expect(renamed.body).toEqual({ ok: true, data: { updated: true } })
    const clash = await t.call('PUT', `/v1/wishlists/${c}/lists/${a}`, { token: admin, body: { name: 'beta' } })
    expect(clash.status).toBe(409)
    const sameName = await t.call('PUT', `/v1/wishlists/${c}/lists/${a}`, { token: admin, body: { name: 'GAMMA' } })
    expect(sameName.status).toBe(200)
    expect((await t.call('PUT', `/v1/wishlists/${c}/lists/default`, { token: admin, body: { name: 'Favourites' } })).status).toBe(200)
    // "My Wishlist" is free once the default list is renamed.
    expect((await createList(c, 'My Wishlist')).status).toBe(201)
    expect((await t.call('PUT', `/v1/wishlists/${c}/lists/default`, { token: admin, body: { name: 'gamma' } })).status).toBe(409)
    const names = (await lists(c)).body.data.wishlists.map((l: { name: string }) => l.name)
    expect(names).toEqual(['Favourites', 'GAMMA', 'Beta', 'My Wishlist'])
    const unknown = await t.call('PUT', `/v1/wishlists/${c}/lists/wl_nope`, { token: admin, body: { name: 'Zed' } })
    expect(unknown.status).toBe(404)
    expect((await t.call('PUT', `/v1/wishlists/${c}/lists/${a}`, { token: admin, body: { name: ' ' } })).status).toBe(400)
  })

  it('deletes a list with its items (analytics removes, no webhooks); the default list is protected', async () => {
    const c = newCustomer()
    const a = (await createList(c, 'Temp')).body.data.wishlist.wishlistId
    await add(c, '1', a)
    await add(c, '2', a)
    await add(c, '3')
    const before = await t.storage.db.selectFrom('outbox').select('event').where('shop_id', '=', shop.id).execute()
    const del = await t.call('DELETE', `/v1/wishlists/${c}/lists/${a}`, { token: admin })
    expect(del.body).toEqual({ ok: true, data: { deleted: true } })
    const after = await t.storage.db.selectFrom('outbox').select('event').where('shop_id', '=', shop.id).execute()
    expect(after.length).toBe(before.length)
    const removes = await (
      await loggedFacts(t.storage.db, shop.id)
    )
      .select('product_id')
      .where('owner_id', '=', c)
      .where('type', '=', 'remove')
      .execute()
    expect(removes.map((r) => r.product_id).sort()).toEqual(['1', '2'])
    const owner = await t.storage.db
      .selectFrom('wishlist_owners')
      .select('item_count')
      .where('shop_id', '=', shop.id)
      .where('owner_id', '=', c)
      .executeTakeFirst()
    expect(owner?.item_count).toBe(1)
    expect((await t.call('GET', `/v1/wishlists/${c}?wishlist_id=${a}`, { token: admin })).status).toBe(404)
    expect((await t.call('DELETE', `/v1/wishlists/${c}/lists/${a}`, { token: admin })).status).toBe(404)
    const protectedDefault = await t.call('DELETE', `/v1/wishlists/${c}/lists/default`, { token: admin })
    expect(protectedDefault.status).toBe(400)
    expect(protectedDefault.body.error.code).toBe('DEFAULT_LIST_PROTECTED')
  })

  it('takes wishlist_id on every item endpoint and 404s an unknown list', async () => {
    const c = newCustomer()
    const a = (await createList(c, 'Side')).body.data.wishlist.wishlistId
    expect((await add(c, '1', a)).body.data.count).toBe(1)
    expect((await t.call('GET', `/v1/wishlists/${c}?wishlist_id=${a}`, { token: admin })).body.data.total).toBe(1)
    expect((await t.call('GET', `/v1/wishlists/${c}?wishlist_id=default`, { token: admin })).body.data.total).toBe(0)
    expect(
      (await t.call('POST', `/v1/wishlists/${c}/items/bulk-delete?wishlist_id=default`, { token: admin, body: { product_ids: ['1'] } }))
        .body.data.removed_count,
    ).toBe(0)
    expect((await t.call('DELETE', `/v1/wishlists/${c}/items/1?wishlist_id=${a}`, { token: admin })).body.data).toEqual({
      removed: true,
      count: 0,
    })
    for (const [method, url] of [
      ['GET', `/v1/wishlists/${c}?wishlist_id=wl_unknown`],
      ['DELETE', `/v1/wishlists/${c}/items/1?wishlist_id=wl_unknown`],
    ] as const) {
      const res = await t.call(method, url, { token: admin })
      expect(res.status, url).toBe(404)
      expect(res.body.error.code).toBe('NOT_FOUND')
    }
    expect((await add(c, '1', 'wl_unknown')).status).toBe(404)
    // Another owner's list id is unknown to this owner.
    expect((await add(newCustomer(), '1', a)).status).toBe(404)
  })
})

describe('move', () => {
  const move = (c: string, body: Record<string, unknown>) => t.call('POST', `/v1/wishlists/${c}/items/move`, { token: admin, body })

  it('moves an item keeping addedAt, variant, handle and metadata; emits and records nothing', async () => {
    const c = newCustomer()
    const a = (await createList(c, 'Dest')).body.data.wishlist.wishlistId
    const added = await t.call('POST', `/v1/wishlists/${c}/items`, {
      token: admin,
      body: { product_id: '5', variant_id: '50', handle: 'five', metadata: { k: 'v' } },
    })
    const events = async () => (await t.storage.db.selectFrom('outbox').select('id').where('shop_id', '=', shop.id).execute()).length
    const facts = async () => (await (await loggedFacts(t.storage.db, shop.id)).select('id').execute()).length
    const [e0, f0] = [await events(), await facts()]
    const res = await move(c, { product_id: '5', from: 'default', to: a })
    expect(res.body).toEqual({ ok: true, data: { moved: true } })
    const dest = await t.call('GET', `/v1/wishlists/${c}?wishlist_id=${a}`, { token: admin })
    expect(dest.body.data.items).toEqual([added.body.data.item])
    expect((await t.call('GET', `/v1/wishlists/${c}`, { token: admin })).body.data.total).toBe(0)
    expect([await events(), await facts()]).toEqual([e0, f0])
  })

  it('just removes the source item when the destination holds the product', async () => {
    const c = newCustomer()
    const a = (await createList(c, 'Dest')).body.data.wishlist.wishlistId
    await add(c, '6')
    await add(c, '6', a)
    expect((await move(c, { product_id: '6', from: 'default', to: a })).status).toBe(200)
    const all = (await lists(c)).body.data.wishlists.map((l: { itemCount: number }) => l.itemCount)
    expect(all).toEqual([0, 1])
    const owner = await t.storage.db
      .selectFrom('wishlist_owners')
      .select('item_count')
      .where('shop_id', '=', shop.id)
      .where('owner_id', '=', c)
      .executeTakeFirst()
    expect(owner?.item_count).toBe(1)
  })

  it('answers ITEM_NOT_IN_LIST, SAME_LIST and 404 for an unknown list', async () => {
    const c = newCustomer()
    const a = (await createList(c, 'Dest')).body.data.wishlist.wishlistId
    await add(c, '7')
    const missing = await move(c, { product_id: '8', from: 'default', to: a })
    expect(missing.status).toBe(400)
    expect(missing.body.error.code).toBe('ITEM_NOT_IN_LIST')
    const same = await move(c, { product_id: '7', from: a, to: a })
    expect(same.status).toBe(400)
    expect(same.body.error.code).toBe('SAME_LIST')
    expect((await move(c, { product_id: '7', from: 'default', to: 'wl_nope' })).status).toBe(404)
    expect((await move(c, { product_id: '7', from: 'default' })).status).toBe(400)
  })
})

describe('multi-wishlist off, or plan below growth', () => {
  it('shows the default list alone, accepts wishlist_id=default, and refuses the rest with FEATURE_DISABLED', async () => {
    const s = await t.createShop('growth', { multi_wishlist_enabled: true })
    const token = await s.adminToken()
    const hidden = (await createList('1', 'Hidden', token)).body.data.wishlist.wishlistId
    await add('1', '1', hidden, token)
    await t.call('PATCH', '/v1/admin/settings', { token, body: { multi_wishlist_enabled: false } })

    const all = await lists('1', token)
    expect(all.body.data.wishlists.map((l: { wishlistId: string }) => l.wishlistId)).toEqual(['default'])
    expect((await add('1', '2', 'default', token)).status).toBe(201)
    expect((await t.call('GET', '/v1/wishlists/1?wishlist_id=default', { token })).body.data.total).toBe(1)
    const refusals = [
      await t.call('GET', `/v1/wishlists/1?wishlist_id=${hidden}`, { token }),
      await add('1', '3', hidden, token),
      await createList('1', 'Another', token),
      await t.call('PUT', `/v1/wishlists/1/lists/${hidden}`, { token, body: { name: 'x' } }),
      await t.call('PUT', '/v1/wishlists/1/lists/default', { token, body: { name: 'x' } }),
      await t.call('DELETE', `/v1/wishlists/1/lists/${hidden}`, { token }),
      await t.call('POST', '/v1/wishlists/1/items/move', { token, body: { product_id: '1', from: hidden, to: 'default' } }),
    ]
    for (const r of refusals) {
      expect(r.status).toBe(403)
      expect(r.body.error.code).toBe('FEATURE_DISABLED')
    }
    // Lists made while it was on come back when it is on again.
    await t.call('PATCH', '/v1/admin/settings', { token, body: { multi_wishlist_enabled: true } })
    const back = await lists('1', token)
    expect(back.body.data.wishlists.map((l: { wishlistId: string; itemCount: number }) => [l.wishlistId, l.itemCount])).toEqual([
      ['default', 1],
      [hidden, 1],
    ])
  })

  it('answers PLAN_UPGRADE_REQUIRED below growth, even with the setting on', async () => {
    const s = await t.createShop('starter', { multi_wishlist_enabled: true })
    const token = await s.adminToken()
    const res = await createList('1', 'Nope', token)
    expect(res.status).toBe(403)
    expect(res.body.error).toMatchObject({ code: 'PLAN_UPGRADE_REQUIRED', details: { required_plan: 'growth', current_plan: 'starter' } })
    expect((await t.call('GET', '/v1/wishlists/1?wishlist_id=wl_x', { token })).body.error.code).toBe('PLAN_UPGRADE_REQUIRED')
    expect((await lists('1', token)).body.data.wishlists).toHaveLength(1)
    expect((await add('1', '1', 'default', token)).status).toBe(201)
  })

  it('lets guests manage their own lists', async () => {
    const guest = shop.guest('g_list_guest_1')
    const created = await t.call('POST', '/v1/wishlists/me/lists', { headers: guest, body: { name: 'Mine' } })
    expect(created.status).toBe(201)
    const all = await t.call('GET', '/v1/wishlists/g_list_guest_1/lists', { headers: guest })
    expect(all.body.data.wishlists).toHaveLength(2)
  })
})
