/**
 * Backups and moving up, end to end (docs/operations.md, "Backups and moving up"): a shop
 * populated through the API with every kind of data answers every read the same after
 * `wishlist backup` + `wishlist restore`, after `wishlist move` from SQLite to PostgreSQL,
 * and after the move back to SQLite; its API key, storefront key, share links and webhook
 * secret keep working. And the refusals: a non-empty target, a move interrupted half-way
 * (then `--force`), a corrupt backup, a foreign file, a newer schema, a database in use,
 * each exit 1 with both databases as they were.
 *
 * It always uses both backends (a SQLite file and a PostgreSQL schema), so it runs in the
 * postgres project only (vitest.config.ts).
 */
import { copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPlainSqlite } from '../../src/db/sqlite-file.js'
import { DatabaseInUseError, holdExclusively } from '../../src/db/server-lock.js'
import { checksumDatabase } from '../../src/db/transfer.js'
import { createWebhookWorker } from '../../src/modules/webhooks/webhook-worker.js'
import { startServer } from '../../src/server.js'
import { applySteps } from '../helpers/analytics.js'
import { createTestApp, testConfig, type TestApp } from '../helpers/app.js'
import { main } from '../../src/cli/main.js'
import { runCli } from '../helpers/cli.js'
import { freshDatabase, type TestDatabase } from '../helpers/db.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { sendShopifyWebhook, SHOPIFY_ENV } from '../helpers/shopify.js'

const DAY = 86_400_000
const dir = mkdtempSync(join(tmpdir(), 'wishlist-data-safety-'))
const sqliteDb = (name: string): TestDatabase => {
  const file = join(dir, name)
  return { target: { kind: 'sqlite', file }, url: `sqlite:${file}`, drop: async () => {} }
}
const original = sqliteDb('shop.db')
const backupFile = join(dir, 'backups', 'shop-1.db')
const movedBack = sqliteDb('moved-back.db')
let postgres: TestDatabase
let receiver: Receiver

/** What the test knows of the shop: its credentials and the ids its reads need. */
interface Known {
  domain: string
  keyId: string
  secret: string
  storefrontKey: string
  namedList: string
  shareTokens: string[]
  hookId: string
  hookSecret: string
  deadHookId: string
  reviewProducts: string[]
  orderId: string
  privacyRequestId: string
}
let known: Known
let before: Record<string, unknown>

const appOn = (database: TestDatabase) => createTestApp({ database, env: { ...SHOPIFY_ENV } })

async function tokenOf(t: TestApp, customerId?: string): Promise<string> {
  const res = await t.call('POST', '/v1/auth/token', {
    body: { api_key: known.keyId, api_secret: known.secret, ...(customerId ? { customer_id: customerId } : {}) },
  })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data.token as string
}

/**
 * Fields that say when the read itself happened (an export's generatedAt) or that the reads
 * themselves move (the key's last use, stamped by every token exchange): left out of the
 * comparison.
 */
const VOLATILE = new Set(['lastUsedAt', 'last_used_at', 'generatedAt'])
const stable = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(stable)
    : value && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([k]) => !VOLATILE.has(k))
            .map(([k, v]) => [k, stable(v)]),
        )
      : value

/** Every read a merchant, a shopper or a shared-link visitor makes of the shop: status and body. */
async function readEverything(t: TestApp): Promise<Record<string, unknown>> {
  const admin = await tokenOf(t)
  const ann = await tokenOf(t, '1001')
  const sf = { 'x-storefront-key': known.storefrontKey }
  const guest = { ...sf, 'x-guest-id': 'g_move_guest_01' }
  const reads: [string, string, { token?: string; headers?: Record<string, string> }][] = [
    ['ann default list', '/v1/wishlists/1001', { token: ann }],
    ['ann named list', `/v1/wishlists/1001?wishlist_id=${known.namedList}`, { token: ann }],
    ['ann lists', '/v1/wishlists/1001/lists', { token: ann }],
    ['bob (admin)', '/v1/wishlists/1002', { token: admin }],
    ['guest list', '/v1/wishlists/g_move_guest_01', { headers: guest }],
    ...known.shareTokens.map((tok, i): [string, string, object] => [`shared ${i}`, `/v1/wishlists/shared/${tok}`, {}]),
    ['overview 7d', '/v1/analytics/overview?period=7d', { token: admin }],
    ['overview 30d', '/v1/analytics/overview?period=30d', { token: admin }],
    ['overview all', '/v1/analytics/overview?period=all', { token: admin }],
    ['daily 30d', '/v1/analytics/daily?period=30d', { token: admin }],
    ['top products', '/v1/analytics/top-products?limit=10', { token: admin }],
    ['product 501', '/v1/analytics/product/501', { token: admin }],
    ...known.reviewProducts.flatMap((p): [string, string, object][] => [
      [`summary ${p}`, `/api/v1/products/${p}/reviews/summary`, { headers: sf }],
      [`reviews ${p}`, `/api/v1/products/${p}/reviews`, { headers: sf }],
    ]),
    ['moderation queue', '/api/v1/admin/reviews', { token: admin }],
    ['invitations', `/v1/admin/review-invitations?order_id=${known.orderId}`, { token: admin }],
    ['customer export', '/v1/admin/customers/1001/export', { token: admin }],
    ['privacy requests', '/v1/admin/privacy-requests', { token: admin }],
    ['privacy export', `/v1/admin/privacy-requests/${known.privacyRequestId}/export`, { token: admin }],
    ['webhooks', '/v1/webhooks', { token: admin }],
    ['deliveries', `/v1/webhooks/${known.hookId}/deliveries`, { token: admin }],
    ['failing deliveries', `/v1/webhooks/${known.deadHookId}/deliveries`, { token: admin }],
    ['shop', '/v1/admin/shop', { token: admin }],
    ['api keys', '/v1/admin/api-keys', { token: admin }],
  ]
  const out: Record<string, unknown> = {}
  for (const [name, url, opts] of reads) {
    const res = await t.call('GET', url, opts)
    expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(200)
    out[name] = stable(res.body)
  }
  const csv = await t.inject({ method: 'GET', url: '/v1/admin/export/wishlists.csv', headers: { authorization: `Bearer ${admin}` } })
  expect(csv.statusCode).toBe(200)
  out['wishlists.csv'] = csv.body
  return out
}

/** The shop's credentials and secrets at work: writes through each, a signed webhook delivery. */
async function credentialsWork(t: TestApp, productId: string): Promise<void> {
  // The API key (token exchange) and a customer token write.
  const ann = await tokenOf(t, '1001')
  expect((await t.call('POST', '/v1/wishlists/1001/items', { token: ann, body: { product_id: productId } })).status).toBe(201)
  // The storefront key (guest mode).
  const guest = { 'x-storefront-key': known.storefrontKey, 'x-guest-id': 'g_move_guest_02' }
  expect((await t.call('POST', '/v1/wishlists/g_move_guest_02/items', { headers: guest, body: { product_id: productId } })).status).toBe(
    201,
  )
  // The share tokens.
  for (const tok of known.shareTokens) expect((await t.call('GET', `/v1/wishlists/shared/${tok}`)).status).toBe(200)
  // The webhook secret: the add above reaches the receiver signed with the secret shown at creation.
  const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks })
  try {
    const mine = (r: { body: string }) => r.body.includes(`"${productId}"`) && r.body.includes('wishlist.item.added')
    const deadline = Date.now() + 10_000
    while (!receiver.received.some(mine)) {
      await worker.runOnce()
      if (Date.now() > deadline) throw new Error(`no delivery for product ${productId}`)
      await receiver.waitFor(receiver.received.length + 1, () => true, 50).catch(() => undefined)
    }
    const hit = receiver.received.find(mine)!
    expect(new Webhook(known.hookSecret).verify(hit.body, hit.headers as Record<string, string>)).toMatchObject({
      event: 'wishlist.item.added',
    })
  } finally {
    await worker.stop()
  }
}

/** Populates one shop through the API with every kind of data the service keeps. */
async function populate(t: TestApp): Promise<void> {
  const shop = await t.createShop('scale', { multi_wishlist_enabled: true, reviews_auto_approve: true })
  const admin = await shop.adminToken()
  const sf = { 'x-storefront-key': shop.storefrontKey }
  const ok = <R extends { status: number; body: unknown }>(res: R, status = 200): R => {
    expect(res.status, JSON.stringify(res.body)).toBe(status)
    return res
  }

  // Webhooks: one to a live receiver, one to an address that refuses (failed attempts, pending retries).
  const hook = ok(
    await t.call('POST', '/v1/webhooks', {
      token: admin,
      body: { url: `${receiver.url}/hook`, events: ['wishlist.item.added', 'wishlist.shared', 'review.requested'] },
    }),
    201,
  )
  const dead = ok(
    await t.call('POST', '/v1/webhooks', { token: admin, body: { url: 'http://127.0.0.1:9/refused', events: ['wishlist.shared'] } }),
    201,
  )

  // Customers' items with metadata in the default list and a named list; a guest's list.
  const ann = await shop.customerToken('1001')
  for (const [p, meta] of [
    ['501', { size: 'M', note: 'Ünïcode ✓' }],
    ['502', null],
    ['503', { gift: true, qty: 2 }],
  ] as const) {
    ok(
      await t.call('POST', '/v1/wishlists/1001/items', {
        token: ann,
        body: { product_id: p, variant_id: `${p}1`, ...(meta ? { metadata: meta } : {}) },
      }),
      201,
    )
  }
  const list = ok(await t.call('POST', '/v1/wishlists/1001/lists', { token: ann, body: { name: 'Birthday 🎂' } }), 201)
  const namedList = list.body && (list.body as { data: { wishlist: { wishlistId: string } } }).data.wishlist.wishlistId
  ok(
    await t.call('POST', `/v1/wishlists/1001/items?wishlist_id=${namedList}`, {
      token: ann,
      body: { product_id: '504', metadata: { colour: 'red' } },
    }),
    201,
  )
  ok(await t.call('POST', '/v1/wishlists/1002/items', { token: admin, body: { product_id: '501' } }), 201)
  const guest = { ...sf, 'x-guest-id': 'g_move_guest_01' }
  for (const p of ['502', '505'])
    ok(await t.call('POST', '/v1/wishlists/g_move_guest_01/items', { headers: guest, body: { product_id: p } }), 201)

  // Share links, of the default and the named list.
  const shareTokens: string[] = []
  for (const q of ['', `?wishlist_id=${namedList}`]) {
    const res = ok(await t.call('GET', `/v1/wishlists/1001/share${q}`, { token: ann }))
    shareTokens.push(
      String((res.body as { data: { share_url: string } }).data.share_url)
        .split('/')
        .pop()!,
    )
  }

  // Platform events: a catalog update, an order (purchases, review invitations), cart adds over past days.
  const events = (list: unknown[]) => t.call('POST', '/v1/events', { token: admin, body: { events: list } })
  ok(
    await events([
      {
        type: 'product.updated',
        product_id: '501',
        handle: 'wool-hat',
        variants: [{ variant_id: '5011', price: '19.90', inventory_quantity: 4 }],
      },
    ]),
  )
  ok(
    await events([
      {
        type: 'order.created',
        order_id: '7001',
        customer_id: '1001',
        email: 'ann@example.com',
        line_items: [{ product_id: '501' }, { product_id: '506' }],
      },
    ]),
  )
  const now = Date.now()
  ok(
    await events(
      [1, 2, 3].map((d) => ({
        type: 'cart.item_added',
        customer_id: '1001',
        product_id: '501',
        occurred_at: new Date(now - d * DAY).toISOString(),
      })),
    ),
  )
  // Wishlist activity on earlier days, as the wishlist module writes it (the API stamps now).
  for (let d = 9; d >= 4; d--) {
    await applySteps(t.storage.db, shop.id, [
      { type: 'add', owner: { type: 'customer', id: `20${d}` }, productId: '507', at: now - d * DAY },
      { type: 'add', owner: { type: 'customer', id: `20${d}` }, productId: '508', at: now - d * DAY + 1000 },
      ...(d % 2
        ? [{ type: 'remove' as const, owner: { type: 'customer' as const, id: `20${d}` }, productId: '508', at: now - d * DAY + 2000 }]
        : []),
    ])
  }

  // Reviews: plain, with photos, through an invitation; a reply, helpful votes, one rejected.
  const invitations = ok(await t.call('GET', '/v1/admin/review-invitations?order_id=7001', { token: admin }))
  const invitation = (invitations.body as { data: { invitations: { token: string; productId: string }[] } }).data.invitations.find(
    (i) => i.productId === '506',
  )!
  const review = (body: Record<string, unknown>) =>
    t.call('POST', '/api/v1/reviews', { headers: sf, body: { customerName: 'Reviewer', rating: 4, body: 'Warm and soft.', ...body } })
  const r1 = ok(
    await review({
      productId: '501',
      customerEmail: 'r1@example.com',
      title: 'Lovely',
      rating: 5,
      photos: ['https://img.example.com/a.jpg'],
    }),
    201,
  )
  const r2 = ok(await review({ productId: '501', customerEmail: 'r2@example.com', rating: 2, body: 'Too small.' }), 201)
  ok(await review({ productId: '506', customerEmail: 'ann@example.com', invitation: invitation.token }), 201)
  const r4 = ok(await review({ productId: '506', customerEmail: 'spam@example.com', rating: 1, body: 'Buy cheap watches' }), 201)
  const id = (r: { body: unknown }) => (r.body as { id: number }).id
  ok(await t.call('PUT', `/api/v1/reviews/${id(r1)}/reply`, { token: admin, body: { body: 'Thank you!' } }))
  for (const v of ['v1', 'v2'])
    ok(await t.call('PUT', `/api/v1/reviews/${id(r1)}/helpful`, { headers: { ...sf, 'x-guest-id': `g_voter_${v}` } }))
  ok(await t.call('PUT', `/api/v1/reviews/${id(r2)}/helpful`, { headers: { ...sf, 'x-guest-id': 'g_voter_v1' } }))
  ok(await t.call('POST', `/api/v1/reviews/${id(r4)}/reject`, { token: admin }))

  // Shopify: an order (a webhook receipt) and a customer data request (a privacy request).
  const shopify = async (topic: string, payload: unknown, eventId: string) => {
    const res = await sendShopifyWebhook(t, payload, { topic, shop: shop.domain, eventId })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
  }
  await shopify(
    'orders/create',
    { id: 7002, email: 'bob@example.com', customer: { id: 1002 }, line_items: [{ product_id: 509, variant_id: 5091 }] },
    'evt-order-7002',
  )
  await shopify(
    'customers/data_request',
    { shop_domain: shop.domain, customer: { id: 1001, email: 'ann@example.com' }, data_request: { id: 42 } },
    'evt-dr-42',
  )
  const requests = ok(await t.call('GET', '/v1/admin/privacy-requests', { token: admin }))
  const privacyRequestId = (requests.body as { data: { privacyRequests: { id: string }[] } }).data.privacyRequests[0]!.id

  // Deliveries: the live endpoint's delivered, the refusing one's failed once and waiting to retry.
  const worker = createWebhookWorker({ storage: t.storage, webhooks: t.config.webhooks })
  try {
    const deadline = Date.now() + 15_000
    for (;;) {
      await worker.runOnce()
      const pending = await t.storage.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('shop_id', '=', shop.id)
        .where('webhook_id', '=', hook.body.data.webhookId)
        .where('status', '=', 'pending')
        .execute()
      const queued = await t.storage.db.selectFrom('outbox').select('id').where('shop_id', '=', shop.id).execute()
      const unattempted = await t.storage.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('shop_id', '=', shop.id)
        .where('attempts', '=', 0)
        .execute()
      if (pending.length === 0 && queued.length === 0 && unattempted.length === 0) break
      if (Date.now() > deadline) throw new Error('webhook deliveries did not settle')
      await receiver.waitFor(receiver.received.length + 1, () => true, 50).catch(() => undefined)
    }
  } finally {
    await worker.stop()
  }

  known = {
    domain: shop.domain,
    keyId: shop.keyId,
    secret: shop.secret,
    storefrontKey: shop.storefrontKey,
    namedList,
    shareTokens,
    hookId: hook.body.data.webhookId,
    hookSecret: hook.body.data.secret,
    deadHookId: dead.body.data.webhookId,
    reviewProducts: ['501', '506'],
    orderId: '7001',
    privacyRequestId,
  }
}

async function readsOn(database: TestDatabase): Promise<Record<string, unknown>> {
  const t = await appOn(database)
  try {
    return await readEverything(t)
  } finally {
    await t.close()
  }
}

const cli = (database: TestDatabase, ...args: string[]) => runCli(database, ...args)

beforeAll(async () => {
  // `wishlist backup` makes no folder: the backups' one exists first.
  mkdirSync(join(dir, 'backups'), { mode: 0o700 })
  receiver = await startReceiver()
  postgres = await freshDatabase({ backend: 'postgres' })
  const t = await appOn(original)
  try {
    await populate(t)
    before = await readEverything(t)
  } finally {
    await t.close()
  }
})
afterAll(async () => {
  await receiver?.close()
  await postgres?.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe('backup and restore', () => {
  it('backs up the live database (a server running on it) into one checked file and prints its summary', async () => {
    const server = await startServer({
      ...testConfig({
        ...SHOPIFY_ENV,
        DATABASE_URL: original.url,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        WEBHOOK_WORKER: 'off',
      }),
    })
    try {
      const res = await cli(original, 'backup', '--to', backupFile)
      expect(res.stderr).toBe('')
      expect(res.code).toBe(0)
      const summary = JSON.parse(res.stdout)
      expect(summary).toEqual({
        file: backupFile,
        bytes: expect.any(Number),
        tables: expect.any(Object),
        schemaVersion: expect.stringMatching(/^\d{4}_/),
      })
      expect(summary.tables).toMatchObject({
        shops: 1,
        wishlist_items: expect.any(Number),
        reviews: 4,
        review_votes: 3,
        privacy_requests: 1,
        shopify_webhook_receipts: 4,
      })
      // Every table of the schema is counted, the same as in the live database.
      expect(summary.tables).toEqual(
        Object.fromEntries(Object.entries(await checksumDatabase(original.target)).map(([k, v]) => [k, v.rows])),
      )
    } finally {
      await server.close()
    }
  })

  it('refuses to restore while a server holds the database, and starts no server while a restore holds it', async () => {
    const server = await startServer({
      ...testConfig({ DATABASE_URL: original.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WEBHOOK_WORKER: 'off' }),
    })
    const sums = await checksumDatabase(original.target)
    try {
      const res = await cli(original, 'restore', '--from', backupFile)
      expect(res.code).toBe(1)
      expect(res.stderr).toMatch(
        /^wishlist: .*shop\.db is in use: a running server holds its lock .*shop\.db\.lock; stop the server \(or its container\), then run wishlist restore again\n$/,
      )
      const move = await cli(original, 'move', '--to', movedBack.url)
      expect(move.code).toBe(1)
      expect(move.stderr).toMatch(/a running server holds its lock/)
    } finally {
      await server.close()
    }
    expect(await checksumDatabase(original.target)).toEqual(sums)
    const held = holdExclusively((original.target as { file: string }).file, 'test')
    try {
      await expect(startServer(testConfig({ DATABASE_URL: original.url, PORT: '0', LOG_LEVEL: 'silent' }))).rejects.toThrow(
        DatabaseInUseError,
      )
    } finally {
      held.release()
    }
  })

  it('refuses a corrupt file, a foreign file and a newer schema, leaving the database as it was', async () => {
    const sums = await checksumDatabase(original.target)
    // Pages 2 to 4 overwritten: what a torn copy or a bad disk leaves.
    const corrupt = join(dir, 'corrupt.db')
    copyFileSync(backupFile, corrupt)
    const fd = openSync(corrupt, 'r+')
    writeSync(fd, Buffer.alloc(3 * 4096, 0x5a), 0, 3 * 4096, 4096)
    closeSync(fd)
    const notSqlite = join(dir, 'notes.txt')
    writeFileSync(notSqlite, 'not a database at all\n'.repeat(500))
    const foreign = join(dir, 'foreign.db')
    const f = openPlainSqlite(foreign)
    f.exec("create table customers (id integer primary key, name text); insert into customers (name) values ('x')")
    f.close()
    const newer = join(dir, 'newer.db')
    copyFileSync(backupFile, newer)
    const n = openPlainSqlite(newer)
    n.exec(`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01T00:00:00.000Z')`)
    n.close()

    const cases: [string, RegExp][] = [
      [corrupt, /corrupt\.db is corrupt .*; restore another backup\n$/],
      [notSqlite, /notes\.txt is corrupt or not a SQLite database .*; restore another backup\n$/],
      [foreign, /foreign\.db is not a wishlist database .*; give --from a file wishlist backup wrote\n$/],
      [
        newer,
        /newer\.db has schema 9999_from_the_future, newer than this version of wishlist \(\d{4}_\w+\); upgrade wishlist, then restore\n$/,
      ],
      [join(dir, 'missing.db'), /there is no backup at .*missing\.db/],
    ]
    for (const [file, message] of cases) {
      const res = await cli(original, 'restore', '--from', file)
      expect(res.code, file).toBe(1)
      expect(res.stderr.split('\n').length, res.stderr).toBe(2) // one line
      expect(res.stderr).toMatch(message)
    }
    expect(await checksumDatabase(original.target)).toEqual(sums)
  })

  it('restores the backup over a database written since: every read as at the backup, the credentials working', async () => {
    const t = await appOn(original)
    try {
      // A write after the backup, which the restore takes back.
      const ann = await tokenOf(t, '1001')
      expect((await t.call('POST', '/v1/wishlists/1001/items', { token: ann, body: { product_id: '599' } })).status).toBe(201)
      expect(await readEverything(t)).not.toEqual(before)
    } finally {
      await t.close()
    }
    const res = await cli(original, 'restore', '--from', backupFile)
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ file: (original.target as { file: string }).file, from: backupFile, migrated: [] })
    expect(await readsOn(original)).toEqual(before)
  })
})

describe('move: SQLite → PostgreSQL → SQLite', () => {
  let sourceSums: Awaited<ReturnType<typeof checksumDatabase>>

  it('moves everything to PostgreSQL, verified table by table, and the shop answers the same there', async () => {
    sourceSums = await checksumDatabase(original.target)
    const res = await cli(original, 'move', '--to', postgres.url)
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    const report = JSON.parse(res.stdout) as { tables: Record<string, { rows: number; checksum: string }>; seconds: number }
    expect(report.seconds).toBeGreaterThan(0)
    expect(report.tables).toEqual(sourceSums)
    expect(report.tables.analytics_daily!.rows).toBeGreaterThan(5) // several days
    expect(await checksumDatabase(postgres.target)).toEqual(sourceSums)
    expect(await readsOn(postgres)).toEqual(before)
  })

  it('refuses a target that is not empty and writes nothing', async () => {
    const pgSums = await checksumDatabase(postgres.target)
    const res = await cli(original, 'move', '--to', postgres.url)
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(
      /^wishlist: the target PostgreSQL .* is not empty \(.*hold rows\); move into an empty database, or add --force to empty it first .*\n$/,
    )
    expect(await checksumDatabase(postgres.target)).toEqual(pgSums)
    expect(await checksumDatabase(original.target)).toEqual(sourceSums)
  })

  it('moves back to SQLite: interrupted half-way, refused without --force, then completed with it', async () => {
    let tablesDone = 0
    // A first attempt dies after a few tables (the process killed, the disk full…).
    let stderr = ''
    const crash = main(['move', '--to', movedBack.url], {
      stdout: { write: () => true },
      stderr: { write: (s: string) => (stderr += s) },
      env: { ...process.env, DATABASE_URL: postgres.url },
      afterTableMoved: () => {
        if (++tablesDone === 3) throw new Error('interrupted')
      },
    })
    expect(
      await crash.then(
        (code) => `exit ${code}: ${stderr}`,
        (err: Error) => err.message,
      ),
    ).toBe('interrupted')

    const refused = await cli(postgres, 'move', '--to', movedBack.url)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/is not empty .*add --force to empty it first/)

    // The reads on PostgreSQL stamped the API key's last use: the source is now PostgreSQL as it is.
    const pgSums = await checksumDatabase(postgres.target)
    const res = await cli(postgres, 'move', '--to', movedBack.url, '--force')
    expect(res.stderr).toBe('')
    expect(res.code).toBe(0)
    expect(JSON.parse(res.stdout).tables).toEqual(pgSums)
    expect(await checksumDatabase(movedBack.target)).toEqual(pgSums)
    expect(await readsOn(movedBack)).toEqual(before)
  })

  it('keeps the API key, storefront key, share links and webhook secret working on both backends', async () => {
    for (const [database, product] of [
      [postgres, '901'],
      [movedBack, '902'],
    ] as const) {
      const t = await appOn(database)
      try {
        await credentialsWork(t, product)
      } finally {
        await t.close()
      }
    }
  })

  it('refuses a move from a database with a newer schema, and to the same database', async () => {
    const newer = sqliteDb('newer-source.db')
    copyFileSync(backupFile, (newer.target as { file: string }).file)
    const n = openPlainSqlite((newer.target as { file: string }).file)
    n.exec(`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01T00:00:00.000Z')`)
    n.close()
    const target = sqliteDb('never-written.db')
    const res = await cli(newer, 'move', '--to', target.url)
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(
      /^wishlist: the source sqlite:.*newer-source\.db has schema 9999_from_the_future, newer than this version of wishlist .*; upgrade wishlist, then run the command again\n$/,
    )
    const same = await cli(original, 'move', '--to', original.url)
    expect(same.code).toBe(1)
    expect(same.stderr).toMatch(/same database/)
  })
})

describe('move: tables and columns no code lists', () => {
  it('moves a table and a column added after this code was written, each type in its own form on each backend', async () => {
    // What a later migration might add, declared per backend as a migration would.
    const source = sqliteDb('later-schema.db')
    expect((await cli(source, 'migrate')).code).toBe(0)
    const s = openPlainSqlite((source.target as { file: string }).file)
    s.exec(`alter table wishlist_items add column gift_note text;
      create table later_things (shop_id text not null, id integer not null, flag boolean, doc json, raw blob, price real, amount numeric(10, 2), seen_at timestamptz, note text, primary key (shop_id, id));
      insert into later_things values ('shop_1', 1, 1, '{"b":1,"a":[true,null]}', x'00ff10', 1.5, 19.9, 1764000000123, 'Ünï'),
        ('shop_1', 2, 0, null, null, null, null, null, null), ('shop_1', 10, 1, '[]', x'', -0.25, 0, 0, '');
      insert into shops (id, domain, plan, storefront_key, multi_wishlist_enabled, reviews_auto_approve, share_link_ttl_days, remove_on_purchase, created_at, updated_at)
        values ('shop_1', 'later.myshopify.com', 'free', 'sfk_later', 0, 0, 30, 0, 1, 1);
      insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, added_at, gift_note) values ('shop_1', 'customer', '1', 'default', '5', 1, 'for Ann');`)
    s.close()
    const target = await freshDatabase({ backend: 'postgres' })
    try {
      expect((await cli(target, 'migrate')).code).toBe(0)
      const pg = await import('pg')
      const c = new pg.default.Client({ connectionString: target.url })
      await c.connect()
      await c.query(`alter table wishlist_items add column gift_note text;
        create table later_things (shop_id text not null, id bigint not null, flag boolean, doc jsonb, raw bytea, price double precision, amount numeric(10, 2), seen_at timestamptz, note text, primary key (shop_id, id))`)
      try {
        const res = await cli(source, 'move', '--to', target.url)
        expect(res.stderr).toBe('')
        expect(res.code).toBe(0)
        expect(JSON.parse(res.stdout).tables.later_things.rows).toBe(3)
        const { rows } = await c.query(
          `select id::int as id, flag, doc, encode(raw, 'hex') as raw, price, amount::text as amount, (extract(epoch from seen_at) * 1000)::bigint::text as seen_ms, note from later_things order by id`,
        )
        expect(rows).toEqual([
          {
            id: 1,
            flag: true,
            doc: { a: [true, null], b: 1 },
            raw: '00ff10',
            price: 1.5,
            amount: '19.90',
            seen_ms: '1764000000123',
            note: 'Ünï',
          },
          { id: 2, flag: false, doc: null, raw: null, price: null, amount: null, seen_ms: null, note: null },
          { id: 10, flag: true, doc: [], raw: '', price: -0.25, amount: '0.00', seen_ms: '0', note: '' },
        ])
        expect((await c.query(`select gift_note from wishlist_items`)).rows).toEqual([{ gift_note: 'for Ann' }])
      } finally {
        await c.end()
      }
      // And back: the same rows, checksums equal across the two backends.
      const back = sqliteDb('later-schema-back.db')
      expect((await cli(back, 'migrate')).code).toBe(0)
      const b = openPlainSqlite((back.target as { file: string }).file)
      b.exec(`alter table wishlist_items add column gift_note text;
        create table later_things (shop_id text not null, id integer not null, flag boolean, doc json, raw blob, price real, amount numeric(10, 2), seen_at timestamptz, note text, primary key (shop_id, id))`)
      b.close()
      const res = await cli(target, 'move', '--to', back.url)
      expect(res.stderr).toBe('')
      expect(res.code).toBe(0)
      expect(await checksumDatabase(back.target)).toEqual(await checksumDatabase(source.target))
    } finally {
      await target.drop()
    }
  })
})

describe('backup on PostgreSQL', () => {
  it("refuses, naming the platform's own tools", async () => {
    const res = await cli(postgres, 'backup', '--to', join(dir, 'pg.db'))
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/^wishlist: .*pg_dump.*base backup.*\n$/)
    const restore = await cli(postgres, 'restore', '--from', backupFile)
    expect(restore.code).toBe(1)
    expect(restore.stderr).toMatch(/pg_restore/)
  })
})
