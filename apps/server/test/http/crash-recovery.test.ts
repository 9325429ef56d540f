/**
 * Crash: the server process is SIGKILLed in the middle of a burst of adds while its
 * embedded worker is delivering webhooks. After a restart on the same database no
 * acknowledged add is missing, no add is half-written (each owner's item_count equals its
 * rows, each item has its outbox event), and every event reaches the receiver at least once.
 * Runs on a SQLite file and on PostgreSQL (DB=…).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openStorage, type Storage } from '../../src/db/connect.js'
import { createTestApp } from '../helpers/app.js'
import { BACKEND, freshDatabase, type TestDatabase } from '../helpers/db.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startServerProcess } from '../helpers/server-process.js'

const dir = mkdtempSync(join(tmpdir(), 'wishlist-crash-'))
let database: TestDatabase
let receiver: Receiver
let token: string
let shopId: string

const CUSTOMERS = ['101', '102', '103', '104']

beforeAll(async () => {
  database = await freshDatabase({ sqliteFile: join(dir, 'crash.db') })
  receiver = await startReceiver()
  const setup = await createTestApp({ database })
  try {
    const shop = await setup.createShop('scale')
    shopId = shop.id
    token = await shop.adminToken()
    const hook = await setup.call('POST', '/v1/webhooks', { token, body: { url: `${receiver.url}/hook`, events: ['wishlist.item.added'] } })
    expect(hook.status).toBe(201)
  } finally {
    await setup.close()
  }
})
afterAll(async () => {
  await receiver.close()
  await database.drop()
  rmSync(dir, { recursive: true, force: true })
})

function startServer() {
  return startServerProcess({
    DATABASE_URL: database.url,
    RATE_LIMIT_ADMIN_PER_MIN: '1000000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '20',
    WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
    WEBHOOK_TIMEOUT_MS: '2000',
    // A claim of the killed process expires after this; then the restarted worker retries.
    WEBHOOK_LEASE_MS: '3000',
  })
}

async function add(url: string, customerId: string, productId: string): Promise<number> {
  try {
    const res = await fetch(`${url}/v1/wishlists/${customerId}/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ product_id: productId }),
    })
    await res.arrayBuffer()
    return res.status
  } catch {
    return 0 // the connection died with the process: not acknowledged
  }
}

async function integrity(storage: Storage) {
  const owners = await storage.db.selectFrom('wishlist_owners').select(['owner_id', 'item_count']).where('shop_id', '=', shopId).execute()
  const items = await storage.db.selectFrom('wishlist_items').select(['owner_id', 'product_id']).where('shop_id', '=', shopId).execute()
  // An event is an outbox row until the worker fans it out, then a delivery per endpoint (one
  // here). One statement, so an event the running worker moves is seen in exactly one place.
  type Added = { customerId: string; productId: string }
  const docs = await storage.db
    .selectFrom('outbox')
    .select([sql.lit('outbox').as('kind'), 'payload as doc'])
    .where('shop_id', '=', shopId)
    .where('event', '=', 'wishlist.item.added')
    .unionAll(
      storage.db
        .selectFrom('webhook_deliveries')
        .select([sql.lit('delivery').as('kind'), 'body as doc'])
        .where('shop_id', '=', shopId)
        .where('event', '=', 'wishlist.item.added'),
    )
    .execute()
  const events = docs.map((d) => (d.kind === 'outbox' ? (JSON.parse(d.doc) as Added) : (JSON.parse(d.doc) as { data: Added }).data))
  return {
    owners: Object.fromEntries(owners.map((o) => [o.owner_id, o.item_count])),
    rows: Object.fromEntries(owners.map((o) => [o.owner_id, items.filter((i) => i.owner_id === o.owner_id).length])),
    items: new Set(items.map((i) => `${i.owner_id}/${i.product_id}`)),
    events: events.map((d) => `${d.customerId}/${d.productId}`),
  }
}

describe(`SIGKILL during a burst of adds and webhook deliveries (${BACKEND})`, { timeout: 120_000 }, () => {
  it('loses no acknowledged add, leaves nothing half-written and delivers every event after the restart', async () => {
    const first = await startServer()
    const acknowledged: string[] = []
    let next = 1
    let killed = false
    // Every fifth delivery is held unanswered until the kill, so some are in flight then.
    let n = 0
    receiver.respond = (_r, res) => {
      if (!killed && ++n % 5 === 0) return
      res.writeHead(200).end('ok')
    }
    let enoughAcknowledged!: () => void
    const acknowledgedEnough = new Promise<void>((resolve) => (enoughAcknowledged = resolve))
    const writers = CUSTOMERS.map(async (customerId) => {
      while (!killed) {
        // At most 100 adds ahead of the deliveries: an add (one round trip on PostgreSQL) far
        // outruns the deliveries, and the kill should find both mid-flight, not a backlog of
        // a thousand events.
        if (acknowledged.length - receiver.received.length > 100) {
          await receiver.waitFor(receiver.received.length + 1, undefined, 2_000).catch(() => {})
          continue
        }
        const productId = String(next++)
        const status = await add(first.url, customerId, productId)
        if (status === 201 && acknowledged.push(`${customerId}/${productId}`) === 120) enoughAcknowledged()
        else if (status !== 201 && !killed) expect(status).toBe(201)
      }
    })
    // Kill once adds are acknowledged and some deliveries have arrived: both are mid-flight.
    await Promise.all([acknowledgedEnough, receiver.waitFor(20, undefined, 60_000)])
    first.child.kill('SIGKILL')
    killed = true
    expect(await first.exited).toBe(null)
    await Promise.all(writers)
    const deliveredBeforeKill = receiver.received.length

    const second = await startServer()
    const storage = openStorage(database.target)
    try {
      const after = await integrity(storage)
      expect(acknowledged.filter((k) => !after.items.has(k))).toEqual([])
      expect(after.owners).toEqual(after.rows)
      // Each stored item has exactly one event (pending or fanned out), and no event lacks its item.
      expect([...after.events].sort()).toEqual([...after.items].sort())

      // Every event is delivered at least once (claims of the killed worker expire and are retried).
      const delivered = () =>
        new Set(
          receiver.received
            .map((r) => JSON.parse(r.body) as { data: { customerId: string; productId: string } })
            .map((b) => `${b.data.customerId}/${b.data.productId}`),
        )
      await receiver.until(() => [...after.items].every((k) => delivered().has(k)), 'every stored item delivered', 60_000)
      expect([...after.items].filter((k) => !delivered().has(k))).toEqual([])
      const duplicates = receiver.received.length - delivered().size
      console.info(
        `[crash ${BACKEND}] ${acknowledged.length} adds acknowledged before SIGKILL, ${after.items.size} stored; ` +
          `${deliveredBeforeKill} deliveries before the kill, ${receiver.received.length} in all (${duplicates} redelivered)`,
      )

      // The restarted service serves the same data.
      const list = await fetch(`${second.url}/v1/wishlists/${CUSTOMERS[0]}?limit=1`, { headers: { authorization: `Bearer ${token}` } })
      expect(((await list.json()) as { data: { total: number } }).data.total).toBe(after.rows[CUSTOMERS[0] as string])
    } finally {
      await storage.destroy()
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    }
  })
})
