import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Kysely } from 'kysely'
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js'
import { enqueueWebhookEvents } from '../../src/modules/events/outbox.js'
import { createWebhookWorker, type WebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { startServer } from '../../src/server.js'
import { createTestApp, type TestApp, testConfig } from '../helpers/app.js'
import { BACKEND, freshDatabase, type TestDatabase } from '../helpers/db.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

const FAST = { WEBHOOK_POLL_INTERVAL_MS: '20', WEBHOOK_RETRY_SCHEDULE: '0.1,0.1' }

let dir: string
let database: TestDatabase
let receiver: Receiver

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wh-worker-'))
  // One database that several app instances and processes open in turn.
  database = await freshDatabase({ sqliteFile: join(dir, 'shared.db') })
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

async function setup(t: TestApp) {
  const shop = await t.createShop('free')
  const admin = await shop.adminToken()
  const res = await t.call('POST', '/v1/webhooks', { token: admin, body: { url: `${receiver.url}/hook`, events: ['wishlist.shared'] } })
  expect(res.status).toBe(201)
  return { shop, admin, webhookId: res.body.data.webhookId as string }
}

/** A test app and a worker that runs only when the test calls `runOnce()`; both closed afterwards. */
async function withWorker(test: (t: TestApp, worker: WebhookWorker) => Promise<void>): Promise<void> {
  const t = await createTestApp()
  const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks })
  try {
    await test(t, worker)
  } finally {
    await worker.stop()
    await t.close()
  }
}

describe('the embedded worker', () => {
  it('runs inside the server process: an item added over HTTP reaches the receiver', async () => {
    receiver.received.length = 0
    const server = await startServer({ ...testConfig({ ...FAST, LOG_LEVEL: 'silent' }), database: database.target, port: 0 })
    try {
      expect(server.worker).toBeDefined()
      const shop = await server.app.services.shops.create({ domain: `embedded-${Date.now()}.myshopify.com`, plan: 'scale' })
      const http = async (method: string, path: string, body: unknown, token?: string) => {
        const res = await fetch(`${server.address}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
        })
        return { status: res.status, body: (await res.json()) as { data: Record<string, string> } }
      }
      const token = (await http('POST', '/v1/auth/token', { api_key: shop.apiKey.keyId, api_secret: shop.apiKey.secret })).body.data.token
      expect((await http('POST', '/v1/webhooks', { url: `${receiver.url}/hook`, events: ['wishlist.item.added'] }, token)).status).toBe(201)
      expect((await http('POST', '/v1/wishlists/77/items', { product_id: '123' }, token)).status).toBe(201)
      const [hit] = await receiver.waitFor(1)
      expect(JSON.parse(hit!.body)).toMatchObject({ event: 'wishlist.item.added', data: { customerId: '77', productId: '123' } })
    } finally {
      await server.close()
    }
  })

  it('delivers an event left undelivered by a stopped process after a restart', async () => {
    receiver.received.length = 0
    // First process: no worker runs; the event stays in the outbox when it stops.
    const first = await createTestApp({ database, env: FAST })
    const { shop, admin, webhookId } = await setup(first)
    await first.storage.db
      .transaction()
      .execute((trx) => enqueueWebhookEvents(trx, shop.id, [{ event: 'wishlist.shared', data: { customerId: '5' } }]))
    await first.close()
    expect(receiver.received).toHaveLength(0)

    const second = await createTestApp({ database, env: FAST, worker: true })
    try {
      const [hit] = await receiver.waitFor(1)
      expect(JSON.parse(hit!.body)).toMatchObject({ event: 'wishlist.shared', shopDomain: shop.domain, data: { customerId: '5' } })
      // The receiver sees the request a moment before the worker records the outcome;
      // stop() resolves once the attempts in flight are recorded.
      await second.worker!.stop()
      const deliveries = async () =>
        (await second.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries
      expect(await deliveries()).toMatchObject([{ status: 'succeeded', attempts: 1 }])
    } finally {
      await second.close()
    }
  })

  it('retries an attempt that was in flight when its worker process was killed', async () => {
    receiver.received.length = 0
    const t = await createTestApp({ database, env: FAST })
    const { shop, admin, webhookId } = await setup(t)
    // The receiver holds the first request open: the attempt is in flight.
    receiver.respond = (r, res) => {
      if (receiver.received.indexOf(r) === 0) return
      res.writeHead(200).end()
    }
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/worker-process.ts'], {
      env: { ...process.env, ...FAST, DATABASE_URL: database.url, WORKER_LEASE_MS: '1500' },
      stdio: 'ignore',
    })
    try {
      await t.storage.db
        .transaction()
        .execute((trx) => enqueueWebhookEvents(trx, shop.id, [{ event: 'wishlist.shared', data: { customerId: '6' } }]))
      const [inFlight] = await receiver.waitFor(1, undefined, 20_000)
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))

      const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks })
      try {
        // The dead worker's lease still holds: nothing is sent twice meanwhile.
        await worker.runOnce()
        expect(receiver.received).toHaveLength(1)
        worker.start()
        const hits = await receiver.waitFor(2, undefined, 10_000)
        expect(hits[1]!.headers['webhook-id']).toBe(inFlight!.headers['webhook-id'])
        expect(hits[1]!.body).toBe(inFlight!.body)
      } finally {
        await worker.stop()
      }
      const log = (await t.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries
      expect(log).toMatchObject([{ status: 'succeeded', attempts: 1, lastStatusCode: 200 }])
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
      receiver.respond = (_r, res) => {
        res.writeHead(200).end()
      }
      await t.close()
    }
  })
})

// On PostgreSQL the claim is FOR UPDATE SKIP LOCKED; on SQLite (two connections to one
// file) a single UPDATE statement. Either way no delivery is attempted twice.
describe(`several workers on ${BACKEND}`, () => {
  it('never attempt the same delivery twice', async () => {
    receiver.received.length = 0
    const t = await createTestApp({ database, env: FAST })
    const { shop } = await setup(t)
    const N = 300
    await t.storage.db.transaction().execute((trx) =>
      enqueueWebhookEvents(
        trx,
        shop.id,
        Array.from({ length: N }, (_, i) => ({ event: 'wishlist.shared' as const, data: { customerId: String(i) } })),
      ),
    )
    // Two workers with their own connection pools, as two processes would have.
    const other = await createTestApp({ database, env: FAST })
    const a = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks, workerId: 'a', batchSize: 10 })
    const b = createWebhookWorker({ storage: other.storage, webhooks: other.config.webhooks, workerId: 'b', batchSize: 10 })
    try {
      a.start()
      b.start()
      const hits = await receiver.waitFor(N, undefined, 30_000)
      // Once both have stopped (their attempts in flight settled), nothing more can arrive.
      await Promise.all([a.stop(), b.stop()])
      const ids = receiver.received.map((r) => r.headers['webhook-id'])
      expect(ids).toHaveLength(N)
      expect(new Set(ids).size).toBe(N)
      expect(new Set(hits.map((h) => JSON.parse(h.body).data.customerId)).size).toBe(N)
      // Both really worked: the attempts log names both workers.
      const byWorker = await t.storage.db.selectFrom('webhook_attempts').select(['worker_id']).where('shop_id', '=', shop.id).execute()
      expect(byWorker).toHaveLength(N)
      expect(new Set(byWorker.map((r) => r.worker_id))).toEqual(new Set(['a', 'b']))
    } finally {
      await a.stop()
      await b.stop()
      await other.close()
      await t.close()
    }
  })
})

describe('the outbox', () => {
  it('keeps an event only until the worker has fanned it out: then the delivery holds its body', () =>
    withWorker(async (t, worker) => {
      const outbox = (shopId: string) => t.storage.db.selectFrom('outbox').select('event').where('shop_id', '=', shopId).execute()
      receiver.received.length = 0
      const { shop, webhookId } = await setup(t)
      await t.storage.db.transaction().execute((trx) =>
        enqueueWebhookEvents(trx, shop.id, [
          { event: 'wishlist.shared', data: { customerId: '5', wishlistId: 'default' } },
          // Nobody subscribed: never written.
          { event: 'wishlist.item.added', data: { customerId: '5', productId: '9' } },
        ]),
      )
      expect((await outbox(shop.id)).map((r) => r.event)).toEqual(['wishlist.shared'])
      expect(await worker.runOnce()).toEqual({ dispatched: 1, attempted: 1 })
      expect(await outbox(shop.id)).toEqual([])
      const deliveries = await t.storage.db
        .selectFrom('webhook_deliveries')
        .select(['webhook_id', 'event', 'body'])
        .where('shop_id', '=', shop.id)
        .execute()
      expect(deliveries).toHaveLength(1)
      expect(deliveries[0]).toMatchObject({ webhook_id: webhookId, event: 'wishlist.shared' })
      const [hit] = await receiver.waitFor(1)
      expect(hit!.body).toBe(deliveries[0]!.body)
      expect(JSON.parse(hit!.body)).toMatchObject({ event: 'wishlist.shared', data: { customerId: '5', wishlistId: 'default' } })
    }))

  it('holds only events an active endpoint of the shop takes when they happen', () =>
    withWorker(async (t) => {
      const shop = await t.createShop('scale')
      const admin = await shop.adminToken()
      const outbox = async () =>
        (await t.storage.db.selectFrom('outbox').select('event').where('shop_id', '=', shop.id).execute()).map((r) => r.event)
      const add = (productId: string) => t.call('POST', '/v1/wishlists/5/items', { token: admin, body: { product_id: productId } })
      const remove = (productId: string) => t.call('DELETE', `/v1/wishlists/5/items/${productId}`, { token: admin })
      // No webhook at all: the change is made, and nothing waits in the outbox.
      expect((await add('1')).status).toBe(201)
      expect(await outbox()).toEqual([])
      // A webhook for removes only: adds stay unwritten, removes are written.
      const created = await t.call('POST', '/v1/webhooks', {
        token: admin,
        body: { url: `${receiver.url}/hook`, events: ['wishlist.item.removed'] },
      })
      expect(created.status).toBe(201)
      expect((await add('2')).status).toBe(201)
      expect((await remove('1')).status).toBe(200)
      expect(await outbox()).toEqual(['wishlist.item.removed'])
      // A disabled webhook (its receiver answered 410 Gone) takes nothing new.
      await t.storage.db
        .updateTable('webhook_endpoints')
        .set({ disabled_at: Date.now(), disabled_reason: 'gone' })
        .where('shop_id', '=', shop.id)
        .execute()
      expect((await remove('2')).status).toBe(200)
      expect(await outbox()).toEqual(['wishlist.item.removed'])
    }))
})

describe('upgrading from a version that marked outbox rows dispatched', () => {
  it('migration 0008 removes the marked rows and keeps those still to dispatch', () =>
    withWorker(async (t, worker) => {
      receiver.received.length = 0
      const { shop } = await setup(t)
      const row = (id: string, dispatched: number) => ({
        shop_id: shop.id,
        id,
        event: 'wishlist.shared',
        payload: JSON.stringify({ customerId: id }),
        occurred_at: Date.now(),
        created_at: Date.now(),
        dispatched,
      })
      // What an earlier version left: one event fanned out and kept (marked 1), one not yet.
      await t.storage.db
        .insertInto('outbox')
        .values([row('msg_old', 1), row('msg_new', 0)])
        .execute()
      // The database as that version left it: 0008 to 0015 not yet run (the later ones, which
      // cannot run twice, are put back as applied once those have run again).
      const LAST = '0015_shopify_receipt_retention'
      const migrations = t.storage.db as unknown as Kysely<{ kysely_migration: { name: string; timestamp: string } }>
      const later = await migrations.selectFrom('kysely_migration').selectAll().where('name', '>', LAST).execute()
      await migrations.deleteFrom('kysely_migration').where('name', '>=', '0008_outbox_retention').execute()
      await t.storage.db.schema.dropIndex('webhook_deliveries_settled').execute()
      await t.storage.db.schema.dropTable('outbox_fan_outs').execute()
      expect(await migrateTo(t.storage, LAST)).toEqual([
        '0008_outbox_retention',
        '0009_webhook_delivery_retention',
        '0010_shop_first_keys',
        '0011_queued_fan_out',
        '0012_list_name_keys',
        '0013_review_invitations',
        '0014_shopify_app',
        LAST,
      ])
      // Kysely orders applied migrations by their time: these come after the ones just run.
      const after = new Date(Date.now() + 1000).toISOString()
      if (later.length > 0)
        await migrations
          .insertInto('kysely_migration')
          .values(later.map((r) => ({ ...r, timestamp: after })))
          .execute()
      expect(await migrateToLatest(t.storage)).toEqual([])
      expect(await t.storage.db.selectFrom('outbox').select('id').where('shop_id', '=', shop.id).execute()).toEqual([{ id: 'msg_new' }])
      expect(await worker.runOnce()).toEqual({ dispatched: 1, attempted: 1 })
      const [hit] = await receiver.waitFor(1)
      expect(JSON.parse(hit!.body)).toMatchObject({ event: 'wishlist.shared', data: { customerId: 'msg_new' } })
    }))
})

describe('the deliveries log', () => {
  const DAY = 86_400_000
  /** Three deliveries to `setup`'s webhook: two succeed, one fails its first attempt and waits for a retry. */
  async function settledAndPending(t: TestApp, worker: WebhookWorker) {
    receiver.received.length = 0
    const { shop, admin, webhookId } = await setup(t)
    const respond = receiver.respond
    receiver.respond = (r, res) => {
      res.writeHead(JSON.parse(r.body).data.customerId === 'retry' ? 500 : 200).end()
    }
    try {
      await t.storage.db.transaction().execute((trx) =>
        enqueueWebhookEvents(
          trx,
          shop.id,
          ['old', 'recent', 'retry'].map((customerId) => ({ event: 'wishlist.shared', data: { customerId, wishlistId: 'default' } })),
        ),
      )
      expect(await worker.runOnce()).toEqual({ dispatched: 3, attempted: 3 })
    } finally {
      receiver.respond = respond
    }
    const rows = await t.storage.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'body', 'status'])
      .where('shop_id', '=', shop.id)
      .execute()
    const byCustomer = new Map(rows.map((r) => [(JSON.parse(r.body) as { data: { customerId: string } }).data.customerId, r]))
    expect([...byCustomer].map(([c, r]) => [c, r.status]).sort()).toEqual([
      ['old', 'succeeded'],
      ['recent', 'succeeded'],
      ['retry', 'pending'],
    ])
    const age = (customerId: string, at: number) =>
      t.storage.db
        .updateTable('webhook_deliveries')
        .set({ updated_at: at, created_at: at })
        .where('shop_id', '=', shop.id)
        .where('id', '=', byCustomer.get(customerId)!.id)
        .execute()
    const log = async () =>
      ((await t.call('GET', `/v1/webhooks/${webhookId}/deliveries`, { token: admin })).body.data.deliveries as { id: string }[])
        .map((d) => d.id)
        .sort()
    const attempts = async () =>
      (await t.storage.db.selectFrom('webhook_attempts').select('delivery_id').where('shop_id', '=', shop.id).execute())
        .map((a) => a.delivery_id)
        .sort()
    const id = (customerId: string) => byCustomer.get(customerId)!.id
    return { age, log, attempts, id }
  }

  it('keeps a settled delivery for WEBHOOK_DELIVERY_RETENTION_DAYS, then deletes it with its attempts; pending ones stay however old', () =>
    withWorker(async (t, worker) => {
      const { age, log, attempts, id } = await settledAndPending(t, worker)
      const now = Date.now()
      await age('old', now - 31 * DAY)
      await age('recent', now - 29 * DAY)
      await age('retry', now - 400 * DAY)
      expect(await attempts()).toEqual([id('old'), id('recent'), id('retry')].sort())
      expect(await worker.purgeSettled(now)).toEqual({ purged: 1, more: false })
      expect(await log()).toEqual([id('recent'), id('retry')].sort())
      expect(await attempts()).toEqual([id('recent'), id('retry')].sort())
      // Nothing left past the retention: the next run deletes nothing.
      expect(await worker.purgeSettled(now)).toEqual({ purged: 0, more: false })
      // Two days later the recent one has had its 30 days too.
      expect(await worker.purgeSettled(now + 2 * DAY)).toEqual({ purged: 1, more: false })
      expect(await log()).toEqual([id('retry')])
    }))

  it('keeps every delivery with a retention of 0 days', async () => {
    const t = await createTestApp()
    const worker = createWebhookWorker({ storage: t.storage, webhooks: { ...t.config.webhooks, retentionDays: 0 } })
    try {
      const { age, log, id } = await settledAndPending(t, worker)
      await age('old', Date.now() - 3000 * DAY)
      expect(await worker.purgeSettled()).toEqual({ purged: 0, more: false })
      expect(await log()).toContain(id('old'))
    } finally {
      await worker.stop()
      await t.close()
    }
  })

  it('is trimmed by the running worker on its first pass', () =>
    withWorker(async (t, worker) => {
      const { age, log, id } = await settledAndPending(t, worker)
      await age('old', Date.now() - 31 * DAY)
      worker.start()
      await worker.stop() // resolves after the pass in progress: the first, which purges
      expect(await log()).toEqual([id('recent'), id('retry')].sort())
    }))
})

describe('an idle worker', () => {
  it('writes nothing: passes with no outbox rows and no due deliveries leave the change stamp (the page cache shortcut) unmoved', () =>
    withWorker(async (t, worker) => {
      const stamp = async () => {
        // PostgreSQL's stamp is defined once the LISTEN connection is up (an event-loop turn
        // at a time: I/O runs between them).
        for (let i = 0; i < 1_000_000 && t.storage.changeStamp?.() === undefined; i++) await new Promise((r) => setImmediate(r))
        return t.storage.changeStamp?.()
      }
      const { shop } = await setup(t)
      await worker.runOnce() // nothing yet: only reads
      const before = await stamp()
      expect(before).toBeDefined()
      for (let i = 0; i < 3; i++) expect(await worker.runOnce()).toEqual({ dispatched: 0, attempted: 0 })
      expect(await stamp()).toBe(before)
      // A pass with work writes, and the stamp moves.
      await t.storage.db
        .transaction()
        .execute((trx) => enqueueWebhookEvents(trx, shop.id, [{ event: 'wishlist.shared', data: { customerId: '1' } }]))
      const busy = await stamp()
      expect(await worker.runOnce()).toMatchObject({ dispatched: 1, attempted: 1 })
      expect(await stamp()).not.toBe(busy)
    }))
})
