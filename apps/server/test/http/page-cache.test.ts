/**
 * The GET-page cache (modules/wishlists/page-cache.ts): pages are served from memory between
 * writes, and every kind of write, through any path (API, events intake, erase, another
 * app instance, a plain SQL statement from another connection), shows on the next read.
 * Each test warms the cache first, so a missed invalidation fails it.
 */
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { createTestApp, type TestApp, type TestShop } from '../helpers/app.js'
import { BACKEND, freshDatabase, type TestDatabase } from '../helpers/db.js'

let database: TestDatabase
let t: TestApp
let other: TestApp
let shop: TestShop
let admin: string
let customer = 30_000
const newCustomer = () => String(++customer)
/** A loopback public URL: /metrics answers (the cache's hit and miss counts) without a token. */
const LOOPBACK = { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }

beforeAll(async () => {
  // A file on SQLite so a second app and a plain connection can share the database.
  database =
    BACKEND === 'sqlite' ? await freshDatabase({ sqliteFile: `/tmp/page-cache-${process.pid}-${Date.now()}.db` }) : await freshDatabase()
  t = await createTestApp({ database, env: LOOPBACK })
  // Another instance that writes (its own cache off: it never opens a change feed, so `t`
  // stays the one instance it counts and keeps its no-lookup shortcut; serving instances
  // that count each other are tested in their own database below).
  other = await createTestApp({ database, env: { PAGE_CACHE_MB: '0' } })
  shop = await t.createShop('scale', { multi_wishlist_enabled: true })
  admin = await shop.adminToken()
})
afterAll(async () => {
  await other.close()
  await t.close()
  await database.drop()
  if (database.target.kind === 'sqlite')
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${database.target.file}${suffix}`, { force: true })
})

const page = async (c: string, query = '', app = t) => {
  const res = await app.call('GET', `/v1/wishlists/${c}${query}`, { token: admin })
  return res
}
const ids = async (c: string, query = '', app = t) =>
  (await page(c, query, app)).body.data.items.map((i: { productId: string }) => i.productId)
const add = (c: string, body: Record<string, unknown>, query = '', app = t) =>
  app.call('POST', `/v1/wishlists/${c}/items${query}`, { token: admin, body })

/**
 * SQLite sees another connection's commit in the next event-loop turn (PRAGMA data_version,
 * read once per turn): over HTTP, on the first request read after the commit (tested below
 * over a socket); an injected request can run in the turn that read the version, so one turn
 * passes first, and then the first read must be right. A PostgreSQL instance sees another's
 * once the commit's notification arrives, so it is polled for (at most `withinMs`).
 */
async function seen<T>(read: () => Promise<T>, expected: T, withinMs = 2_000): Promise<void> {
  if (BACKEND === 'sqlite') {
    await new Promise((r) => setImmediate(r))
    expect(await read()).toEqual(expected)
    return
  }
  const deadline = Date.now() + withinMs
  let last = await read()
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 5))
    last = await read()
  }
  expect(last).toEqual(expected)
}

/** bench/http/delay-proxy.ts in a child process: `upstream`'s host and port, every chunk held `delayMs` each way. */
async function delayProxy(upstream: URL, delayMs: number): Promise<{ port: number; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/http/delay-proxy.ts'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, UPSTREAM_HOST: upstream.hostname, UPSTREAM_PORT: upstream.port || '5432', DELAY_MS: String(delayMs) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const { port } = await new Promise<{ port: number }>((ok, fail) => {
    proc.once('message', (m) => ok(m as { port: number }))
    proc.once('exit', (code) => fail(new Error(`the delay proxy exited with ${code}`)))
  })
  const stop = () =>
    new Promise<void>((done) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return done()
      proc.once('exit', () => done())
      proc.kill('SIGTERM')
    })
  return { port, stop }
}

/** Waits, one event-loop turn at a time (I/O runs between them), until `check()` holds. */
async function turnsUntil(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1_000_000; i++) {
    if (check()) return
    await new Promise((r) => setImmediate(r))
  }
  throw new Error(`never saw ${what}`)
}

const schemaOf = () => (database.target.kind === 'postgres' ? database.target.schema : undefined)
/** The change feed's application_name (db/connect.ts): per schema, or plain in a database of its own (through PgBouncer, test/helpers/db.ts). */
const feedName = () => (schemaOf() ? `wishlist change feed ${schemaOf()}` : 'wishlist change feed')

async function cacheCounts(app = t): Promise<{ hit: number; miss: number }> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  const count = (result: string) =>
    Number(new RegExp(`^wishlist_page_cache_lookups_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
  return { hit: count('hit'), miss: count('miss') }
}

describe('GET page cache', () => {
  it('serves repeated reads from the cache, byte for byte the same as a built page', async () => {
    const c = newCustomer()
    await add(c, { product_id: '1', handle: 'one', metadata: { size: 'M', note: 'é"\\' } })
    const first = await page(c)
    const before = await cacheCounts()
    const second = await page(c)
    const third = await page(c, '?limit=20&offset=0')
    const after = await cacheCounts()
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(second.body).toEqual(first.body)
    expect(third.body).toEqual(first.body)
    // The second read hit; the third has other query values (limit=20 is the default, but the key is by value).
    expect(after.hit - before.hit).toBeGreaterThanOrEqual(1)
    expect(first.body.data.items[0]).toEqual({
      productId: '1',
      variantId: null,
      handle: 'one',
      metadata: { size: 'M', note: 'é"\\' },
      addedAt: expect.any(String),
      quantity: 1,
      priority: 'normal',
      note: null,
      purchasedAt: null,
    })
  })

  it('answers a burst of concurrent reads after a write with one lookup, every answer right', async () => {
    const c = newCustomer()
    await add(c, { product_id: '91' })
    expect(await ids(c)).toEqual(['91'])
    await add(c, { product_id: '92' })
    const before = await cacheCounts()
    const burst = await Promise.all(Array.from({ length: 20 }, () => ids(c)))
    const after = await cacheCounts()
    for (const answer of burst) expect(answer).toEqual(['92', '91'])
    // One reader resolves the page; the others share it (PostgreSQL: the add's own commit
    // notification may land during the burst and start one more).
    expect(after.miss - before.miss).toBeGreaterThanOrEqual(1)
    expect(after.miss - before.miss).toBeLessThanOrEqual(2)
  })

  it('shows adds, updates, removes and bulk deletes on the next read', async () => {
    const c = newCustomer()
    await add(c, { product_id: '1' })
    expect(await ids(c)).toEqual(['1'])
    await add(c, { product_id: '2' })
    expect(await ids(c)).toEqual(['2', '1'])
    await add(c, { product_id: '2', metadata: { gift: true } })
    expect((await page(c)).body.data.items[0].metadata).toEqual({ gift: true })
    await t.call('DELETE', `/v1/wishlists/${c}/items/1`, { token: admin })
    expect(await ids(c)).toEqual(['2'])
    await t.call('POST', `/v1/wishlists/${c}/items/bulk-delete`, { token: admin, body: { product_ids: ['2'] } })
    expect((await page(c)).body.data).toEqual({ items: [], count: 0, total: 0, has_more: false })
  })

  it('shows list renames, moves and deletes (a deleted list answers 404, not its cached page)', async () => {
    const c = newCustomer()
    const list = (await t.call('POST', `/v1/wishlists/${c}/lists`, { token: admin, body: { name: 'Gifts' } })).body.data.wishlist
      .wishlistId as string
    await add(c, { product_id: '7' })
    expect(await ids(c, `?wishlist_id=${list}`)).toEqual([])
    expect(await ids(c)).toEqual(['7'])
    await t.call('POST', `/v1/wishlists/${c}/items/move`, { token: admin, body: { product_id: '7', from: 'default', to: list } })
    expect(await ids(c)).toEqual([])
    expect(await ids(c, `?wishlist_id=${list}`)).toEqual(['7'])
    await t.call('DELETE', `/v1/wishlists/${c}/lists/${list}`, { token: admin })
    expect((await page(c, `?wishlist_id=${list}`)).status).toBe(404)
  })

  it('shows a new default variant from the events intake on items stored without a variant', async () => {
    const c = newCustomer()
    await add(c, { product_id: '8801' })
    await add(c, { product_id: '8802', variant_id: '5' })
    const variants = async () =>
      (await page(c)).body.data.items.map((i: { productId: string; variantId: string | null }) => [i.productId, i.variantId])
    expect(await variants()).toEqual([
      ['8802', '5'],
      ['8801', null],
    ])
    const product = (variantId: string) => ({
      type: 'product.updated',
      product_id: '8801',
      variants: [{ variant_id: variantId, price: '1.00', inventory_quantity: 3 }],
    })
    expect((await t.call('POST', '/v1/events', { token: admin, body: { events: [product('100')] } })).status).toBe(200)
    expect(await variants()).toEqual([
      ['8802', '5'],
      ['8801', '100'],
    ])
    expect((await t.call('POST', '/v1/events', { token: admin, body: { events: [product('200')] } })).status).toBe(200)
    expect(await variants()).toEqual([
      ['8802', '5'],
      ['8801', '200'],
    ])
  })

  it('shows a guest merge on both sides, and an erase followed by new adds', async () => {
    const c = newCustomer()
    const guest = `guest-cache-${c}`
    expect((await t.call('POST', `/v1/wishlists/${guest}/items`, { headers: shop.guest(guest), body: { product_id: '31' } })).status).toBe(
      201,
    )
    const guestIds = async () => (await t.call('GET', `/v1/wishlists/${guest}`, { headers: shop.guest(guest) })).body.data.items.length
    expect(await guestIds()).toBe(1)
    expect(await ids(c)).toEqual([])
    const token = await shop.customerToken(c)
    expect((await t.call('POST', '/v1/wishlists/me/merge', { token, body: { guest_id: guest } })).status).toBe(200)
    expect(await ids(c)).toEqual(['31'])

    expect((await t.call('DELETE', `/v1/admin/customers/${c}`, { token: admin })).status).toBe(200)
    expect(await ids(c)).toEqual([])
    await add(c, { product_id: '32' })
    expect(await ids(c)).toEqual(['32'])
  })

  it('shows writes made through another app instance on the same database (PostgreSQL: once notified)', async () => {
    const c = newCustomer()
    await add(c, { product_id: '41' })
    expect(await ids(c)).toEqual(['41'])
    expect(await ids(c, '', other)).toEqual(['41'])
    await add(c, { product_id: '42' }, '', other)
    await seen(() => ids(c), ['42', '41'])
    await other.call('DELETE', `/v1/wishlists/${c}/items/41`, { token: admin })
    await seen(() => ids(c), ['42'])
  })

  it('shows a plain SQL change from another connection (a script, the CLI)', async () => {
    const c = newCustomer()
    await add(c, { product_id: '51', handle: 'before' })
    expect((await page(c)).body.data.items[0].handle).toBe('before')
    const direct: Storage = openStorage(t.database.target)
    try {
      await sql`update wishlist_items set handle = 'after' where shop_id = ${shop.id} and owner_id = ${c}`.execute(direct.db)
    } finally {
      await direct.destroy()
    }
    await seen(async () => (await page(c)).body.data.items[0].handle, 'after')
  })

  it("over HTTP, a request sent after another connection's commit sees it (SQLite: the first one)", async () => {
    const c = newCustomer()
    await add(c, { product_id: '56', handle: 'before' })
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const handle = async () => {
      const res = await fetch(`${base}/v1/wishlists/${c}`, { headers: { authorization: `Bearer ${admin}` } })
      expect(res.status).toBe(200)
      return ((await res.json()) as { data: { items: { handle: string }[] } }).data.items[0]?.handle
    }
    expect(await handle()).toBe('before')
    expect(await handle()).toBe('before')
    const direct: Storage = openStorage(t.database.target)
    try {
      await sql`update wishlist_items set handle = 'after' where shop_id = ${shop.id} and owner_id = ${c}`.execute(direct.db)
    } finally {
      await direct.destroy()
    }
    if (BACKEND === 'sqlite') expect(await handle()).toBe('after')
    else await seen(handle, 'after')
  })

  it.runIf(BACKEND === 'postgres')('trusts nothing confirmed before its notification connection was lost, and reconnects', async () => {
    const c = newCustomer()
    // The stamp is `epoch:notifications:writes` (db/connect.ts, changeFeed).
    const notifications = () => Number(t.storage.changeStamp?.()?.split(':')[1] ?? -1)
    await turnsUntil(() => t.storage.changeStamp?.() !== undefined, 'the feed')
    const before = notifications()
    await add(c, { product_id: '81' })
    // This read files the page under a stamp that nothing moves (once the add's own
    // notification is in) until the feed is cut.
    await turnsUntil(() => notifications() > before, "the add's notification")
    expect(await ids(c)).toEqual(['81'])
    // This instance listens on this schema (or this database, through PgBouncer: test/helpers/db.ts).
    const feedPids = async () =>
      (
        await sql<{
          pid: number
        }>`select pid from pg_stat_activity where application_name = ${feedName()} and datname = current_database()`.execute(t.storage.db)
      ).rows.map((r) => r.pid)
    const feeds = await feedPids()
    expect(feeds).toHaveLength(1)
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where pid in (${sql.join(feeds)})`.execute(t.storage.db)
    await seen(async () => (await feedPids()).filter((pid) => feeds.includes(pid)).length, 0, 5_000)
    // Written while nobody listens: no notification will ever tell about it (the feed
    // reconnects after 500 ms).
    await sql`update wishlist_items set handle = 'during-gap' where shop_id = ${shop.id} and owner_id = ${c}`.execute(other.storage.db)
    // Back: a new feed connection (after 500 ms).
    await seen(async () => (await feedPids()).filter((pid) => !feeds.includes(pid)).length, 1, 5_000)
    // Once it listens and has counted no other instance, its stamp is defined again, in a new epoch.
    await turnsUntil(() => t.storage.changeStamp?.() !== undefined, 'the feed back')
    expect((await page(c)).body.data.items[0].handle).toBe('during-gap')
  })

  it("serves a shared list with its owner's changes, and a revoked link answers 404 (another instance's revocation: PostgreSQL once notified)", async () => {
    const c = newCustomer()
    await add(c, { product_id: '71' })
    const link = await t.call('GET', `/v1/wishlists/${c}/share`, { token: admin })
    const path = new URL(link.body.data.share_url as string).pathname
    const shared = async () => (await t.call('GET', path)).body
    const before = await cacheCounts()
    expect((await shared()).data).toMatchObject({ name: 'My Wishlist', count: 1 })
    expect((await shared()).data.items.map((i: { productId: string }) => i.productId)).toEqual(['71'])
    expect((await cacheCounts()).hit - before.hit).toBeGreaterThanOrEqual(1)
    await add(c, { product_id: '72' }, '', other)
    await seen(async () => (await shared()).data.items.map((i: { productId: string }) => i.productId), ['72', '71'])
    expect((await t.call('PUT', `/v1/wishlists/${c}/lists/default`, { token: admin, body: { name: 'Birthday' } })).status).toBe(200)
    expect((await shared()).data.name).toBe('Birthday')
    // The link itself is kept with the change stamp too: a revocation through another
    // instance moves it (PostgreSQL: share_links notifies), one through this instance at once.
    await other.call('DELETE', `/v1/wishlists/${c}/share`, { token: admin })
    await seen(async () => (await t.call('GET', path)).status, 404)
    const again = await t.call('GET', `/v1/wishlists/${c}/share`, { token: admin })
    const againPath = new URL(again.body.data.share_url as string).pathname
    expect((await t.call('GET', againPath)).status).toBe(200)
    expect((await t.call('GET', againPath)).status).toBe(200)
    await t.call('DELETE', `/v1/wishlists/${c}/share`, { token: admin })
    expect((await t.call('GET', againPath)).status).toBe(404)
    // A revocation that touches share_links alone (a script's statement) is seen too.
    const third = new URL((await t.call('GET', `/v1/wishlists/${c}/share`, { token: admin })).body.data.share_url as string).pathname
    expect((await t.call('GET', third)).status).toBe(200)
    const direct: Storage = openStorage(t.database.target)
    try {
      await sql`update share_links set revoked_at = ${Date.now()} where token = ${third.split('/').pop() as string}`.execute(direct.db)
    } finally {
      await direct.destroy()
    }
    await seen(async () => (await t.call('GET', third)).status, 404)
  })

  it('works with the cache turned off (PAGE_CACHE_MB=0)', async () => {
    const off = await createTestApp({ database: t.database, env: { PAGE_CACHE_MB: '0' } })
    try {
      const c = newCustomer()
      await add(c, { product_id: '61' }, '', off)
      expect(await ids(c, '', off)).toEqual(['61'])
      await add(c, { product_id: '62' }, '', off)
      expect(await ids(c, '', off)).toEqual(['62', '61'])
    } finally {
      await off.close()
    }
  })
})

/**
 * Serving instances on one database count each other's change feeds (db/connect.ts): a
 * notification reaches each instance's listener on its own schedule, so while there is more
 * than one, every cached read checks the owner's version (the body still from the cache).
 */
describe.runIf(BACKEND === 'postgres')('several serving instances on one database', () => {
  let db: TestDatabase
  let a: TestApp
  let token: string
  beforeAll(async () => {
    db = await freshDatabase()
    a = await createTestApp({ database: db, env: LOOPBACK })
    token = await (await a.createShop('scale')).adminToken()
    await a.storage.join?.()
  })
  afterAll(async () => {
    await a.close()
    await db.drop()
  })
  const itemsOn = async (app: TestApp, c: string) =>
    ((await app.call('GET', `/v1/wishlists/${c}`, { token })).body.data.items as { productId: string }[]).map((i) => i.productId)

  it('an instance that joins is acknowledged before it serves: both check versions from then on, and the one left alone trusts its stamp again', async () => {
    expect(a.storage.changeStamp?.()).toBeDefined()
    const b = await createTestApp({ database: db, env: LOOPBACK })
    try {
      await b.storage.join?.()
      // Acknowledged, not merely counted at the next round (FEED_COUNT_MS): at once.
      expect(a.storage.changeStamp?.()).toBeUndefined()
      expect(b.storage.changeStamp?.()).toBeUndefined()
      // Still served from the cache, after a version check.
      await b.call('POST', '/v1/wishlists/7001/items', { token, body: { product_id: '1' } })
      expect(await itemsOn(a, '7001')).toEqual(['1'])
      const before = await cacheCounts(a)
      expect(await itemsOn(a, '7001')).toEqual(['1'])
      const after = await cacheCounts(a)
      expect(after.hit - before.hit).toBe(1)
      expect(after.miss - before.miss).toBe(0)
    } finally {
      await b.close()
    }
    // Alone again once its next count no longer finds the other feed.
    await vi.waitFor(() => expect(a.storage.changeStamp?.()).toBeDefined(), { timeout: 5_000, interval: 10 })
  })

  it("shows a write through one instance on the other's very next read, even with that one's notifications 50 ms late", async () => {
    if (db.target.kind !== 'postgres') return
    // b's LISTEN connection reaches PostgreSQL through a proxy that holds every chunk 50 ms:
    // every notification arrives well after the client's next read.
    const upstream = new URL(db.target.directUrl ?? db.target.url)
    const proxy = await delayProxy(upstream, 50)
    const slowFeed = new URL(upstream)
    slowFeed.hostname = '127.0.0.1'
    slowFeed.port = String(proxy.port)
    const b = await createTestApp({ database: { ...db, target: { ...db.target, directUrl: slowFeed.toString() } } })
    try {
      await b.storage.join?.()
      const c = '7002'
      for (let round = 0; round < 10; round++) {
        for (const app of [a, b]) await itemsOn(app, c)
        const [writer, reader] = round % 2 === 0 ? [a, b] : [b, a]
        expect((await writer.call('POST', `/v1/wishlists/${c}/items`, { token, body: { product_id: String(100 + round) } })).status).toBe(
          201,
        )
        expect((await itemsOn(reader, c))[0]).toBe(String(100 + round))
      }
    } finally {
      await b.close()
      await proxy.stop()
    }
  })
})
