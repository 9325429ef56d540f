/**
 * The read replica (DATABASE_REPLICA_URL, docs/operations.md, "Read replica") against a real
 * streaming replica: a private primary and a `pg_basebackup -R` standby of it
 * (test/helpers/pg-replication.ts), never the shared server. The standby logs every statement,
 * so which server answered a read is read from its log, not guessed from timing.
 * PostgreSQL only: SQLite has no replica.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestShop, testConfig } from '../helpers/app.js'
import { BACKEND } from '../helpers/db.js'
import { type ReplicatedPair, startReplicatedPair } from '../helpers/pg-replication.js'
import { startPgBouncer } from '../helpers/pgbouncer.js'

const MAX_LAG_MS = 200

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('DATABASE_REPLICA_URL and REPLICA_MAX_LAG_MS', () => {
  const pgUrl = 'postgres://postgres@127.0.0.1:5432/test'
  it('takes a PostgreSQL replica of a PostgreSQL database, with a lag limit of 2000 ms unless set', () => {
    expect(testConfig({ DATABASE_URL: pgUrl, DATABASE_REPLICA_URL: 'postgresql://r.internal/test' }).database).toMatchObject({
      replicaUrl: 'postgresql://r.internal/test',
      replicaMaxLagMs: 2000,
    })
    expect(
      testConfig({ DATABASE_URL: pgUrl, DATABASE_REPLICA_URL: 'postgres://r.internal/test', REPLICA_MAX_LAG_MS: '0' }).database,
    ).toMatchObject({ replicaMaxLagMs: 0 })
    expect(testConfig({ DATABASE_URL: pgUrl }).database).not.toHaveProperty('replicaUrl')
  })

  it('refuses a replica of SQLite, a replica that is not PostgreSQL, and a lag limit that is not a whole number ≥ 0', () => {
    expect(() => testConfig({ DATABASE_URL: 'sqlite::memory:', DATABASE_REPLICA_URL: 'postgres://r.internal/test' })).toThrow(
      /DATABASE_REPLICA_URL applies to PostgreSQL only/,
    )
    expect(() => testConfig({ DATABASE_URL: pgUrl, DATABASE_REPLICA_URL: 'sqlite:replica.db' })).toThrow(
      /DATABASE_REPLICA_URL must start with postgres/,
    )
    for (const bad of ['-1', '1.5', 'soon'])
      expect(() => testConfig({ DATABASE_URL: pgUrl, REPLICA_MAX_LAG_MS: bad })).toThrow(/REPLICA_MAX_LAG_MS/)
  })
})

describe.skipIf(BACKEND !== 'postgres')('read replica (PostgreSQL only: a streaming standby of a private cluster)', () => {
  let pair: ReplicatedPair
  let t: TestApp
  let shop: TestShop
  let admin: string
  let shareToken: string
  const customerId = '501'
  let customer: string
  const product = '7001'

  /** The standby's log from `from` on: the statements it ran (log_statement = all). */
  const standbyLog = () => pair.standby.log()
  const replicaStatements = (from: number) =>
    standbyLog()
      .slice(from)
      .split('\n')
      .filter((line) => /LOG: {2}(statement|execute)/.test(line))
  /**
   * `read` again until the standby's log shows that it ran there (`marker`): on a busy machine
   * the replica may pass the 200 ms limit for a moment, and the read then rightly goes to the primary.
   */
  const onReplica = <T>(marker: RegExp, read: () => Promise<T>): Promise<T> =>
    until(`a read on the replica (${marker})`, async () => {
      const from = standbyLog().length
      const value = await read()
      return marker.test(replicaStatements(from).join('\n')) ? value : undefined
    })
  /** The state the service reports (its /metrics gauges). */
  async function gauges(app: TestApp = t): Promise<{ up: number; serving: number }> {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
    return { up: value('wishlist_replica_up'), serving: value('wishlist_replica_serving') }
  }
  const serving = (want: 0 | 1, app: TestApp = t) =>
    until(`replica serving=${want}`, async () => ((await gauges(app)).serving === want ? true : undefined))
  const sharedItems = async () => {
    const res = await t.call('GET', `/v1/wishlists/shared/${shareToken}`)
    expect(res.status).toBe(200)
    return (res.body.data.items as { productId: string }[]).map((i) => i.productId).sort()
  }
  const addItem = async (productId: string) =>
    expect((await t.call('POST', `/v1/wishlists/${customerId}/items`, { token: customer, body: { product_id: productId } })).status).toBe(
      201,
    )

  beforeAll(async () => {
    pair = await startReplicatedPair({ synchronous: false })
    // Every statement the standby runs goes to its log (ALTER SYSTEM writes a file: allowed on a standby).
    await pair.standby.query(`alter system set log_statement = 'all'`)
    await pair.standby.query('select pg_reload_conf()')
    t = await createTestApp({
      env: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' },
      database: {
        target: { kind: 'postgres', url: pair.primary.url(), replicaUrl: pair.standby.url(), replicaMaxLagMs: MAX_LAG_MS },
        url: pair.primary.url(),
        drop: async () => {},
      },
    })
    shop = await t.createShop('growth', { reviews_auto_approve: true })
    admin = await shop.adminToken()
    customer = await shop.customerToken(customerId)
    await addItem('1')
    shareToken = (await t.call('GET', `/v1/wishlists/${customerId}/share`, { token: customer })).body.data.token
    const review = await t.call('POST', '/api/v1/reviews', {
      headers: { 'x-storefront-key': shop.storefrontKey },
      body: { productId: product, customerEmail: 'a@example.com', customerName: 'Alice', rating: 4, title: 'Good', body: 'Fine.' },
    })
    expect(review.status).toBe(201)
  }, 120_000)

  afterAll(async () => {
    await t?.close()
    await pair?.destroy()
  })

  it('serves shared lists, review lists and summaries from the replica while it keeps up', async () => {
    await serving(1)
    const storefront = { headers: { 'x-storefront-key': shop.storefrontKey } }
    // What the primary holds, answered by the replica (replicated by now, or soon: the replica may lag).
    const shared = () => until('the replicated list', async () => ((await sharedItems()).join() === '1' ? true : undefined))
    // The link and the owner's version (the body may come from the page cache, built by either server).
    await onReplica(/share_links[\s\S]*wishlist_owners/, shared)
    const summary = await onReplica(/review_aggregates/, () => t.call('GET', `/api/v1/products/${product}/reviews/summary`, storefront))
    expect(summary.status).toBe(200)
    expect(summary.body.reviewCount).toBe(1)
    const reviews = await onReplica(/from "reviews"/, () => t.call('GET', `/api/v1/products/${product}/reviews`, storefront))
    expect(reviews.status).toBe(200)
    expect(reviews.body.total).toBe(1)
  })

  it("never sends a customer's own reads or a writing request's reads to the replica", async () => {
    await serving(1)
    await pair.standby.query('select pg_wal_replay_pause()')
    try {
      const from = standbyLog().length
      await addItem('2')
      // At once, within the lag limit: the primary's answer.
      const own = await t.call('GET', `/v1/wishlists/${customerId}`, { token: customer })
      expect(own.status).toBe(200)
      expect(JSON.stringify(own.body)).toContain('"2"')
      const ran = replicaStatements(from).join('\n')
      expect(ran).not.toMatch(/wishlist_items|wishlist_owners|share_links/)
    } finally {
      await pair.standby.query('select pg_wal_replay_resume()')
    }
  })

  it('answers analytics and exports from the replica only once it holds everything the primary has', async () => {
    await serving(1)
    const overview = async () => (await t.call('GET', '/v1/analytics/overview?period=7d', { token: admin })).body.data.totalWishlistedItems
    // Replaying: an analytics read goes to the replica once it has replayed the applied facts.
    const from = standbyLog().length
    const now = await until('analytics from the replica', async () => {
      const n = await overview()
      return replicaStatements(from).some((l) => l.includes('analytics_daily')) ? n : undefined
    })
    expect(now).toBe(2)
    // Paused: the fact of this add is applied on the primary, which the replica has not replayed: read there.
    await pair.standby.query('select pg_wal_replay_pause()')
    try {
      await addItem('3')
      const paused = standbyLog().length
      expect(await overview()).toBe(3)
      expect(replicaStatements(paused).join('\n')).not.toContain('analytics_daily')
    } finally {
      await pair.standby.query('select pg_wal_replay_resume()')
    }
    await serving(1)
    const csv = await onReplica(/wishlist_items/, () => t.call('GET', '/v1/admin/export/wishlists.csv', { token: admin }))
    expect(csv.status).toBe(200)
    expect(
      String(csv.body)
        .split('\n')
        .filter((l) => l.startsWith(`${customerId},`)),
    ).toHaveLength(3)
  })

  it('reads from the primary once replay falls behind REPLICA_MAX_LAG_MS, and from the replica again after', async () => {
    await serving(1)
    await until('the shared list replicated', async () => ((await sharedItems()).join() === '1,2,3' ? true : undefined))
    await pair.standby.query('select pg_wal_replay_pause()')
    try {
      await addItem('4')
      // Stale (the replica's answer) at most until the lag passes the limit; then the primary's.
      await until('the shared list with the new item', async () => ((await sharedItems()).includes('4') ? true : undefined))
      expect(await gauges()).toEqual({ up: 1, serving: 0 })
      expect((await t.call('GET', '/readyz')).body.data.replica).toBe('behind')
    } finally {
      await pair.standby.query('select pg_wal_replay_resume()')
    }
    await serving(1)
    // The link and the owner's version from the replica (the body itself may come from the page cache).
    expect(await onReplica(/share_links[\s\S]*wishlist_owners/, sharedItems)).toEqual(['1', '2', '3', '4'])
    await until('/readyz naming the replica serving', async () =>
      (await t.call('GET', '/readyz')).body.data.replica === 'serving' ? true : undefined,
    )
  })

  it('behind a transaction pooler, the replica is used as the primary is: no named prepared statements', async () => {
    const bouncers = [await startPgBouncer({ port: pair.primary.port }), await startPgBouncer({ port: pair.standby.port })]
    const [primary, replica] = bouncers.map((b) => b.url('postgres')) as [string, string]
    const pooled = await createTestApp({
      env: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' },
      database: {
        target: {
          kind: 'postgres',
          url: primary,
          poolMode: 'transaction',
          directUrl: pair.primary.url(),
          replicaUrl: replica,
          replicaMaxLagMs: MAX_LAG_MS,
        },
        url: pair.primary.url(),
        drop: async () => {},
      },
    })
    try {
      await serving(1, pooled)
      const from = standbyLog().length
      const res = await onReplica(/share_links/, () => pooled.call('GET', `/v1/wishlists/shared/${shareToken}`))
      expect(res.status).toBe(200)
      expect(res.body.data.items).toHaveLength(4)
      expect(replicaStatements(from).filter((l) => /execute (?!<unnamed>)/.test(l))).toEqual([])
      // The replica's pool went through its PgBouncer.
      expect((await bouncers[1]!.admin('SHOW STATS')).some((r) => r.database === 'postgres' && Number(r.total_query_count) > 0)).toBe(true)
    } finally {
      await pooled.close()
      for (const b of bouncers) await b.stop()
    }
  })

  it('reads from the primary while the replica is down, and stays ready', async () => {
    await pair.standby.stop('immediate')
    await until('the replica down', async () => ((await gauges()).up === 0 ? true : undefined))
    expect((await gauges()).serving).toBe(0)
    await addItem('5')
    expect(await sharedItems()).toEqual(['1', '2', '3', '4', '5'])
    const summary = await t.call('GET', `/api/v1/products/${product}/reviews/summary`, {
      headers: { 'x-storefront-key': shop.storefrontKey },
    })
    expect(summary.status).toBe(200)
    expect(summary.body.reviewCount).toBe(1)
    expect((await t.call('GET', '/v1/analytics/overview?period=7d', { token: admin })).status).toBe(200)
    const ready = await t.call('GET', '/readyz')
    expect(ready.status).toBe(200)
    expect(ready.body.data.replica).toBe('down')
  })
})
