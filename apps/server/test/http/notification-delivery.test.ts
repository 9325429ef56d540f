/**
 * Delivering notifications (docs/notifications.md, "Delivery") against the local Klaviyo
 * emulator: a queued notification becomes Klaviyo's event for the shopper's profile; a 429's
 * Retry-After delays it by exactly that; an outage keeps it pending until Klaviyo answers
 * again; a refused key holds the shop's messages until the key is replaced; two shops share
 * the worker; an opt-out after the notification was queued skips it; erasing a customer
 * deletes their notifications and asks Klaviyo to delete the profile (again after a failure);
 * a worker killed mid-send leaves a lease that expires, and Klaviyo keeps one event; two
 * workers on one key send one at a time (its send lease), within its limits, and the other
 * takes over when the sender stops.
 * On SQLite (a file, shared with a child process) and PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { NotificationSignal } from '../../src/modules/notifications/channel.js'
import {
  type NotificationWorker,
  type NotificationWorkerOptions,
  SKIP_OPTED_OUT,
} from '../../src/modules/notifications/notification-worker.js'
import { optOutUrl } from '../../src/modules/notifications/opt-out.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { startServer } from '../../src/server.js'
import { createTestApp, type TestApp, type TestShop, testConfig } from '../helpers/app.js'
import { deliveryOf, queueNotification } from '../helpers/notification-rows.js'
import { testNotificationWorker } from '../helpers/notification-worker.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'
import { type KlaviyoEmulator, startKlaviyoEmulator } from '../helpers/klaviyo-emulator.js'

const KEY = 'pk_1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e'
const OTHER_KEY = 'pk_9f8e7d6c5b4a39281706f5e4d3c2b1a09f'
const NEW_KEY = 'pk_aa11bb22cc33dd44ee55ff66aa77bb88cc'
/** The server process's own: its worker keeps the key's send lease for a minute after it stops (Klaviyo's windows). */
const SERVER_KEY = 'pk_5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'
const TOKEN_KEY = randomBytes(32).toString('hex')

let dir: string
let database: TestDatabase
let klaviyo: KlaviyoEmulator
let t: TestApp
const workers: NotificationWorker[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notify-worker-'))
  // A file on SQLite: the crash test's child process opens it too.
  database = await freshDatabase({ sqliteFile: join(dir, 'notify.db') })
  klaviyo = await startKlaviyoEmulator({ keys: { [KEY]: 'ACCT_A', [OTHER_KEY]: 'ACCT_B', [NEW_KEY]: 'ACCT_A', [SERVER_KEY]: 'ACCT_C' } })
  t = await createTestApp({ database, env: { KLAVIYO_BASE_URL: klaviyo.url, SHOPIFY_TOKEN_KEY: TOKEN_KEY } })
})
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()))
})
afterAll(async () => {
  await t?.close()
  await klaviyo?.close()
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * Small windows, a short timeout and no clock allowance, so a send lease lasts seconds (two
 * tails of 200 ms + 2 × 2 s) and a stopped worker's keys are another's 200 ms after its last answer.
 */
const QUICK_LEASES = {
  eventWindows: [{ limit: 350, ms: 200 }],
  deletionWindows: [{ limit: 3, ms: 200 }],
  requestTimeoutMs: 2_000,
  clockSkewMs: 0,
} satisfies Partial<NotificationWorkerOptions>

const worker = (opts: Partial<NotificationWorkerOptions> = {}): NotificationWorker =>
  testNotificationWorker(t, workers, { retryBaseMs: 100, retryCapMs: 400, ...QUICK_LEASES, ...opts })

async function shopWithKlaviyo(key = KEY): Promise<TestShop> {
  const shop = await t.createShop('scale')
  const res = await t.call('PUT', '/v1/admin/channels/klaviyo', { token: await shop.adminToken(), body: { private_key: key } })
  expect(res.status).toBe(200)
  return shop
}

/** A queued notification with its pending Klaviyo delivery, and the owner's contact. */
const queue = (shopId: string, customerId: string, opts: { signal?: NotificationSignal; productId?: string } = {}) =>
  queueNotification(t.storage.db, shopId, customerId, opts)

const delivery = (shopId: string, notificationId: string) => deliveryOf(t.storage.db, shopId, notificationId)

const eventsOf = (notificationId: string) =>
  klaviyo
    .of('POST', '/api/events')
    .filter((r) => (r.body as { data?: { attributes?: { unique_id?: string } } })?.data?.attributes?.unique_id === notificationId)

const waitFor = <T>(fn: () => Promise<T> | T, timeout = 10_000) => vi.waitFor(fn, { timeout, interval: 10 })

describe('sending to Klaviyo', () => {
  it("delivers a queued notification as the signal's event on the shopper's profile, with the opt-out link", async () => {
    const shop = await shopWithKlaviyo()
    const id = await queue(shop.id, '7001')
    worker().start()
    await waitFor(async () => expect(await delivery(shop.id, id)).toMatchObject({ state: 'sent', attempts: 1, last_error: null }))
    const [event] = eventsOf(id)
    expect(event).toMatchObject({ status: 202, problems: [], key: KEY })
    const attributes = (event!.body as { data: { attributes: Record<string, unknown> } }).data.attributes
    expect(attributes).toMatchObject({
      unique_id: id,
      metric: { data: { type: 'metric', attributes: { name: 'Wishlist Back In Stock' } } },
      profile: { data: { type: 'profile', attributes: { email: 'c7001@example.com', external_id: '7001' } } },
      properties: {
        Signal: 'back_in_stock',
        ProductID: '8123456789012',
        VariantID: '45012345678901',
        ProductName: 'Canvas tote',
        Price: '29.90',
        Currency: 'EUR',
        InventoryQuantity: 12,
        OptOutURL: optOutUrl(t.config, shop.id, { type: 'customer', id: '7001' }),
      },
      value: 29.9,
    })
    expect((await delivery(shop.id, id))!.sent_at).toBeGreaterThanOrEqual(event!.at)
  })

  it("waits exactly the Retry-After of Klaviyo's 429 before the next try", async () => {
    const shop = await shopWithKlaviyo()
    const before = klaviyo.of('POST', '/api/events').length
    klaviyo.failNext(1, 429, 2)
    const id = await queue(shop.id, '7002')
    worker().start()
    await waitFor(() => expect(klaviyo.of('POST', '/api/events').length).toBeGreaterThan(before))
    // Refused before its body was read: the one request of this test so far.
    const throttled = klaviyo.of('POST', '/api/events')[before]
    expect(throttled).toMatchObject({ status: 429, answerHeaders: { 'retry-after': '2' } })
    await waitFor(async () => expect(await delivery(shop.id, id)).toMatchObject({ state: 'pending', attempts: 1 }))
    const pending = (await delivery(shop.id, id))!
    // Due again 2 s after the answer (the answer came a moment after the request arrived).
    expect(pending.next_attempt_at - throttled!.at).toBeGreaterThanOrEqual(2000)
    expect(pending.next_attempt_at - throttled!.at).toBeLessThan(2500)
    expect(pending.last_error).toMatch(/HTTP 429/)
    await waitFor(async () => expect(await delivery(shop.id, id)).toMatchObject({ state: 'sent', attempts: 2 }))
    const [retried] = eventsOf(id)
    expect(retried!.at).toBeGreaterThanOrEqual(pending.next_attempt_at)
    expect(retried!.at - pending.next_attempt_at).toBeLessThan(500)
  })

  it('keeps the messages pending through an outage and delivers them once Klaviyo answers again', async () => {
    const shop = await shopWithKlaviyo()
    await klaviyo.goDown()
    const ids = [await queue(shop.id, '7003'), await queue(shop.id, '7004'), await queue(shop.id, '7005')]
    try {
      worker().start()
      // Tried, refused at the connection, pending again with the reason; never failed.
      await waitFor(async () => {
        const first = await delivery(shop.id, ids[0]!)
        expect(first!.attempts).toBeGreaterThanOrEqual(2)
        expect(first!.last_error).toMatch(/klaviyo unreachable/)
      })
      for (const id of ids) expect((await delivery(shop.id, id))!.state).toBe('pending')
    } finally {
      await klaviyo.comeBack()
    }
    await waitFor(async () => {
      for (const id of ids) expect((await delivery(shop.id, id))!.state).toBe('sent')
    })
    for (const id of ids) expect(eventsOf(id).filter((r) => r.status === 202)).toHaveLength(1)
  })

  it("holds the shop's messages while Klaviyo refuses its key, and sends them once the key is replaced", async () => {
    const revoked = `pk_revoked${randomBytes(12).toString('hex')}`
    klaviyo.addKey(revoked)
    const shop = await shopWithKlaviyo(revoked)
    const admin = await shop.adminToken()
    klaviyo.removeKey(revoked)
    const ids = [await queue(shop.id, '7006'), await queue(shop.id, '7007')]
    const w = worker()
    w.start()
    await waitFor(async () => {
      const res = await t.call('GET', '/v1/admin/channels', { token: admin })
      expect(res.body.data.channels[0]).toMatchObject({ channel: 'klaviyo', connected: true, lastCheck: { state: 'invalid' } })
      expect(res.body.data.channels[0].lastCheck.error).toMatch(/HTTP 401/)
    })
    // Paused: tried no more than the attempts already in flight when the refusal came, and both stay pending.
    const tried = klaviyo.of('POST', '/api/events').filter((r) => r.key === revoked).length
    expect(tried).toBeLessThanOrEqual(2)
    await w.runOnce()
    await new Promise((r) => setTimeout(r, 200))
    expect(klaviyo.of('POST', '/api/events').filter((r) => r.key === revoked)).toHaveLength(tried)
    for (const id of ids) expect((await delivery(shop.id, id))!.state).toBe('pending')

    const res = await t.call('PUT', '/v1/admin/channels/klaviyo', { token: admin, body: { private_key: NEW_KEY } })
    expect(res.status).toBe(200)
    await waitFor(async () => {
      for (const id of ids) expect((await delivery(shop.id, id))!.state).toBe('sent')
    })
    for (const id of ids)
      expect(
        eventsOf(id)
          .filter((r) => r.status === 202)
          .map((r) => r.key),
      ).toEqual([NEW_KEY])
  })

  it("shares the worker between shops: a small shop's messages are not held behind a large backlog", async () => {
    const big = await shopWithKlaviyo()
    const small = await shopWithKlaviyo(OTHER_KEY)
    const bigIds: string[] = []
    for (let i = 0; i < 40; i++) bigIds.push(await queue(big.id, `81${String(i).padStart(3, '0')}`))
    const smallIds: string[] = []
    for (let i = 0; i < 5; i++) smallIds.push(await queue(small.id, `82${String(i).padStart(3, '0')}`))
    const before = klaviyo.of('POST', '/api/events').length
    // Klaviyo answers in 30 ms, so attempts overlap and the slots are what the shops share.
    klaviyo.setLatency(30)
    worker({ batchSize: 4, maxInFlight: 4 }).start()
    await waitFor(async () => {
      const sent = await t.storage.db
        .selectFrom('notification_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('shop_id', 'in', [big.id, small.id])
        .where('state', '=', 'sent')
        .executeTakeFirstOrThrow()
      expect(Number(sent.n)).toBe(45)
    })
    klaviyo.setLatency(0)
    const order = klaviyo
      .of('POST', '/api/events')
      .slice(before)
      .map((r) => r.key)
    // The small shop's five went out among the first of the big shop's forty, not after them.
    const lastSmall = order.lastIndexOf(OTHER_KEY)
    expect(order.filter((k) => k === OTHER_KEY)).toHaveLength(5)
    expect(order.slice(0, lastSmall + 1).filter((k) => k === KEY).length).toBeLessThanOrEqual(15)
  })

  it('skips a message whose shopper opted out after it was queued: nothing reaches Klaviyo', async () => {
    const shop = await shopWithKlaviyo()
    const id = await queue(shop.id, '7010')
    await t.storage.db
      .insertInto('notification_opt_outs')
      .values({ shop_id: shop.id, owner_type: 'customer', owner_id: '7010', opted_out_at: Date.now() })
      .execute()
    await worker().runOnce()
    expect(await delivery(shop.id, id)).toMatchObject({ state: 'skipped', last_error: SKIP_OPTED_OUT, sent_at: null })
    expect(eventsOf(id)).toHaveLength(0)
  })
})

describe('the server process', () => {
  it('runs the notification worker: a back-in-stock reaches Klaviyo from the product event on (NOTIFICATION_WORKER=off: no worker)', async () => {
    const env = { WEBHOOK_POLL_INTERVAL_MS: '20', LOG_LEVEL: 'silent', KLAVIYO_BASE_URL: klaviyo.url, SHOPIFY_TOKEN_KEY: TOKEN_KEY }
    const off = await startServer({ ...testConfig({ ...env, NOTIFICATION_WORKER: 'off' }), database: database.target, port: 0 })
    expect(off.notificationWorker).toBeUndefined()
    await off.close()
    const server = await startServer({ ...testConfig(env), database: database.target, port: 0 })
    try {
      expect(server.notificationWorker).toBeDefined()
      const { shop, apiKey } = await server.app.services.shops.create({ domain: `embedded-n-${Date.now()}.myshopify.com`, plan: 'scale' })
      const http = async (method: string, path: string, body: unknown, token?: string) => {
        const res = await fetch(`${server.address}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
        })
        expect(res.status, `${method} ${path}`).toBeLessThan(300)
        return (await res.json()) as { data: Record<string, string> }
      }
      const token = (await http('POST', '/v1/auth/token', { api_key: apiKey.keyId, api_secret: apiKey.secret })).data.token
      const product = (inventory: number) => ({
        type: 'product.updated',
        product_id: '9300000000001',
        handle: 'linen-shirt',
        title: 'Linen shirt',
        variants: [{ variant_id: '93000000000011', price: '20.00', inventory_quantity: inventory }],
      })
      await http('POST', '/v1/events', { events: [product(0)] }, token)
      await http('PUT', '/v1/admin/customers/7050/contact', { email: 'ana@example.com' }, token)
      await http('POST', '/v1/wishlists/7050/items', { product_id: '9300000000001' }, token)
      await http('PUT', '/v1/admin/channels/klaviyo', { private_key: SERVER_KEY }, token)
      await http('POST', '/v1/events', { events: [product(10)] }, token)
      await waitFor(() =>
        expect(klaviyo.events(SERVER_KEY).filter((e) => e.externalId === '7050' && e.metric === 'Wishlist Back In Stock')).toMatchObject([
          { email: 'ana@example.com' },
        ]),
      )
      await waitFor(async () =>
        expect(
          await server.storage.db.selectFrom('notification_deliveries').select('state').where('shop_id', '=', shop.id).executeTakeFirst(),
        ).toEqual({ state: 'sent' }),
      )
    } finally {
      await server.close()
    }
  })

  it('NOTIFICATION_RETENTION_DAYS: 0 keeps them, at least 31 otherwise (the longest cooldown reads 30 days back)', () => {
    const base = { JWT_SECRET: 'x'.repeat(40), DATABASE_URL: 'sqlite::memory:' }
    expect(loadConfig(base).notifications).toMatchObject({ retentionDays: 90, workerEnabled: true })
    expect(loadConfig({ ...base, NOTIFICATION_RETENTION_DAYS: '0' }).notifications.retentionDays).toBe(0)
    expect(loadConfig({ ...base, NOTIFICATION_RETENTION_DAYS: '31' }).notifications.retentionDays).toBe(31)
    expect(() => loadConfig({ ...base, NOTIFICATION_RETENTION_DAYS: '30' })).toThrow(ConfigError)
    expect(loadConfig({ ...base, NOTIFICATION_WORKER: 'off' }).notifications.workerEnabled).toBe(false)
  })
})

describe('retention', () => {
  it('deletes notifications settled before NOTIFICATION_RETENTION_DAYS with their deliveries, never a pending one', async () => {
    const shop = await shopWithKlaviyo()
    const old = Date.now() - 91 * 86_400_000
    const settled = await queueNotification(t.storage.db, shop.id, '7040', { at: old })
    const pending = await queueNotification(t.storage.db, shop.id, '7041', { at: old })
    const recent = await queueNotification(t.storage.db, shop.id, '7042')
    await t.storage.db
      .updateTable('notification_deliveries')
      .set({ state: 'sent', sent_at: old })
      .where('shop_id', '=', shop.id)
      .where('notification_id', 'in', [settled, recent])
      .execute()
    const w = worker()
    expect(await w.purgeSettled()).toEqual({ purged: 1, more: false })
    const ids = (await t.storage.db.selectFrom('notifications').select('id').where('shop_id', '=', shop.id).execute()).map((r) => r.id)
    expect(ids.sort()).toEqual([pending, recent].sort())
    expect(await delivery(shop.id, settled)).toBeUndefined()
    expect(await delivery(shop.id, pending)).toMatchObject({ state: 'pending' })
    expect(await worker({ retentionDays: 0 }).purgeSettled(Date.now() + 1000 * 86_400_000)).toEqual({ purged: 0, more: false })
  })
})

describe('erasing a customer', () => {
  it('deletes their notifications and contact, keeps the opt-out, and asks Klaviyo to delete the profile (again after a failure)', async () => {
    const shop = await shopWithKlaviyo()
    const admin = await shop.adminToken()
    // One message sent (Klaviyo has the profile by its external id), one still pending.
    const sentId = await queue(shop.id, '7020')
    const w = worker()
    await w.runOnce()
    expect((await delivery(shop.id, sentId))!.state).toBe('sent')
    const pendingId = await queue(shop.id, '7020', { productId: '8123456789099' })
    await t.storage.db
      .insertInto('notification_opt_outs')
      .values({ shop_id: shop.id, owner_type: 'customer', owner_id: '7020', opted_out_at: Date.now() })
      .execute()

    const res = await t.call('DELETE', '/v1/admin/customers/7020', { token: admin })
    expect(res.status).toBe(200)
    const left = async (table: 'notification_contacts' | 'notifications' | 'notification_opt_outs') =>
      t.storage.db.selectFrom(table).select('shop_id').where('shop_id', '=', shop.id).where('owner_id', '=', '7020').execute()
    expect(await left('notification_contacts')).toHaveLength(0)
    expect(await left('notifications')).toHaveLength(0)
    expect(await left('notification_opt_outs')).toHaveLength(1)
    for (const id of [sentId, pendingId]) expect(await delivery(shop.id, id)).toBeUndefined()
    const queued = await t.storage.db.selectFrom('notification_erasures').selectAll().where('shop_id', '=', shop.id).execute()
    expect(queued).toMatchObject([{ channel: 'klaviyo', email: 'c7020@example.com', external_id: '7020', attempts: 0 }])

    // Klaviyo fails the first request: the deletion is tried again.
    const jobsBefore = klaviyo.of('POST', '/api/data-privacy-deletion-jobs').length
    klaviyo.failNext(1, 503)
    w.start()
    await waitFor(async () =>
      expect(await t.storage.db.selectFrom('notification_erasures').select('id').where('shop_id', '=', shop.id).execute()).toHaveLength(0),
    )
    const jobs = klaviyo.of('POST', '/api/data-privacy-deletion-jobs').slice(jobsBefore)
    expect(jobs[0]).toMatchObject({ status: 503 })
    const taken = jobs.filter((r) => r.status === 202)
    expect(taken.every((r) => r.problems.length === 0 && r.key === KEY)).toBe(true)
    const profiles = taken.map(
      (r) =>
        (r.body as { data: { attributes: { profile: { data: { id?: string; attributes: { email?: string } } } } } }).data.attributes.profile
          .data,
    )
    // By e-mail, and by the Klaviyo id of the profile whose external id is the customer's.
    expect(profiles.some((p) => p.attributes.email === 'c7020@example.com')).toBe(true)
    expect(profiles.some((p) => typeof p.id === 'string')).toBe(true)
    expect(klaviyo.of('GET', '/api/profiles').at(-1)!.query.get('filter')).toBe('equals(external_id,"7020")')
  })
})

describe('a worker killed mid-send', () => {
  it('leaves its lease to expire; the message is sent again then, and Klaviyo keeps one event', async () => {
    const shop = await shopWithKlaviyo()
    const release = klaviyo.hold()
    let child: ChildProcess | undefined
    try {
      child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/notification-worker-process.ts'], {
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          KLAVIYO_BASE_URL: klaviyo.url,
          SHOPIFY_TOKEN_KEY: TOKEN_KEY,
          WORKER_LEASE_MS: '1500',
        },
        stdio: 'ignore',
      })
      const before = klaviyo.of('POST', '/api/events').length
      const id = await queue(shop.id, '7030')
      // The child's request reached Klaviyo, which holds it unanswered.
      await waitFor(() => expect(klaviyo.of('POST', '/api/events')).toHaveLength(before + 1), 20_000)
      child.kill('SIGKILL')
      await new Promise((r) => child!.once('exit', r))
      release() // Klaviyo takes the dead process's request: it has the event
      await waitFor(() => expect(eventsOf(id)).toMatchObject([{ status: 202 }]))
      const leased = (await delivery(shop.id, id))!
      expect(leased).toMatchObject({ state: 'pending', lease_owner: expect.stringMatching(/^child:/) })

      const w = worker()
      // The dead worker's lease still holds: nothing is sent twice meanwhile.
      await w.runOnce()
      expect(eventsOf(id)).toHaveLength(1)
      w.start()
      // Once the delivery's lease and then the dead worker's send lease of the key (8.4 s at most) have expired.
      await waitFor(async () => expect(await delivery(shop.id, id)).toMatchObject({ state: 'sent', attempts: 1 }), 20_000)
      const [first, again] = eventsOf(id)
      expect(again!.at).toBeGreaterThanOrEqual(leased.lease_until!)
      expect(again!.body).toEqual(first!.body)
      // Klaviyo keeps the first event of a profile, metric and unique id: one event.
      expect(klaviyo.events(KEY).filter((e) => e.uniqueId === id)).toHaveLength(1)
    } finally {
      release()
      if (child && child.exitCode === null) child.kill('SIGKILL')
    }
  }, 60_000)
})

describe('two workers on one Klaviyo key', () => {
  it('send one at a time: no window of the key gets more than its limit, each message goes once, and the other takes over when the sender stops', async () => {
    const key = `pk_lease${randomBytes(12).toString('hex')}`
    klaviyo.addKey(key)
    const shop = await shopWithKlaviyo(key)
    const windows = [
      { limit: 4, ms: 150 },
      { limit: 10, ms: 600 },
    ]
    const ids: string[] = []
    for (let i = 0; i < 40; i++) ids.push(await queue(shop.id, `84${String(i).padStart(3, '0')}`))
    const requests = () => klaviyo.of('POST', '/api/events').filter((r) => r.key === key)
    // Klaviyo answers in 20 ms: requests overlap, which the windows' counts allow for.
    klaviyo.setLatency(20)
    try {
      const a = worker({ workerId: 'lease-a', eventWindows: windows, batchSize: 8 })
      const b = worker({ workerId: 'lease-b', eventWindows: windows, batchSize: 8 })
      a.start()
      b.start()
      // A backlog of four of the longer windows: a dozen sent, the rest still to go.
      await waitFor(() => expect(requests().length).toBeGreaterThanOrEqual(12))
      const leaseOf = async () =>
        (
          await t.storage.db.selectFrom('notification_send_leases').select('holder').where('holder', 'in', ['lease-a', 'lease-b']).execute()
        ).map((l) => l.holder)
      const [sending] = await leaseOf()
      expect(sending).toMatch(/^lease-[ab]$/)
      const [sender, other] = sending === a.id ? [a, b] : [b, a]

      await sender.stop()
      const bySender = requests().length
      expect(bySender).toBeLessThan(40)
      await waitFor(async () => {
        const sent = await t.storage.db
          .selectFrom('notification_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('shop_id', '=', shop.id)
          .where('state', '=', 'sent')
          .executeTakeFirstOrThrow()
        expect(Number(sent.n)).toBe(40)
      }, 20_000)
      expect(await leaseOf()).toEqual([other.id])

      // Each message once, each taken at once (no 429, no second try).
      const all = requests()
      expect(all).toHaveLength(40)
      expect(all.every((r) => r.status === 202)).toBe(true)
      for (const id of ids) expect(eventsOf(id)).toHaveLength(1)
      // Wherever Klaviyo's windows fall, none received more than its limit.
      const times = all.map((r) => r.at).sort((x, y) => x - y)
      for (const w of windows)
        for (let i = 0; i < times.length; i++) {
          const inWindow = times.filter((at) => at >= times[i]! && at < times[i]! + w.ms).length
          expect(inWindow, `requests in the ${w.ms} ms from ${times[i]! - times[0]!} ms`).toBeLessThanOrEqual(w.limit)
        }
      // The other started once the sender's last answer had left the longest window.
      expect(times[bySender]! - times[bySender - 1]!).toBeGreaterThanOrEqual(600)
    } finally {
      klaviyo.setLatency(0)
    }
  })
})
