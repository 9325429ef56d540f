/**
 * `npm run verify:multi-instance -w apps/server`: three real instances of the server
 * (`startServer()`, each with its embedded webhook worker) on one PostgreSQL database and
 * one Redis, on this machine, and four checks:
 *
 * 1. rate limits are shared: with a budget of 30 per minute per IP, two token exchanges
 *    and 45 guest GETs round-robin over the instances give exactly 28 × 200 and 17 × 429;
 * 2. webhooks are sent once: 60 item additions spread over the instances give 60
 *    deliveries with 60 distinct webhook-ids at a local receiver (three workers polling);
 * 3. token revocation reaches every instance within the credential cache TTL (5 s): an
 *    admin token used on all three, its key revoked through instance 1, each instance
 *    polled until it answers 401;
 * 4. page caches follow each other: 60 rounds of an add through one instance, each read at
 *    once through the two others (whose pages were cached just before): no first read may
 *    be stale; reports the longest time until the page was right;
 * 5. analytics facts are applied once while three background appliers run: 240 adds and
 *    120 removes, 12 at a time over the instances, then the overview through each
 *    instance and the tables: every fact logged once, none left pending, totals exact.
 *
 * Env: BENCH_PG_URL (server; a scratch database bench_multi_<pid> is created and dropped),
 * REDIS_URL (default redis://127.0.0.1:6379; keys under a per-run prefix). Prints a JSON
 * report and exits 1 when a check fails.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { openStorage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { createShopsService } from '../src/modules/shops/shops.service.js'
import { buildServer } from './http/build.js'

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const pgUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const JWT_SECRET = 'multi-instance-secret-multi-instance-0123'
const dbName = `bench_multi_${process.pid}`
const dbUrl = (() => {
  const u = new URL(pgUrl)
  u.pathname = `/${dbName}`
  return u.toString()
})()

/** Runs one statement on its own connection to `url`; the rows it returns. */
async function sqlOn(url: string, query: string): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(query)).rows
  } finally {
    await c.end()
  }
}

interface Instance {
  url: string
  proc: ChildProcess
}

async function startInstance(n: number): Promise<Instance> {
  const proc = spawn(process.execPath, [join(serverDir, 'bench/http/service-server.mjs')], {
    cwd: serverDir,
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      JWT_SECRET,
      REDIS_URL: redisUrl,
      RATE_LIMIT_REDIS_PREFIX: `multi-${process.pid}:rl:`,
      RATE_LIMIT_STOREFRONT_PER_MIN: '30',
      RATE_LIMIT_ADMIN_PER_MIN: '100000',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  })
  const url = await new Promise<string>((ok, fail) => {
    proc.once('message', (m: { listening: string }) => ok(m.listening))
    proc.once('exit', (code) => fail(new Error(`instance ${n} exited with ${code}`)))
  })
  return { url, proc }
}

async function http(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers ?? {}) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as { data?: Record<string, unknown> }) }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function main(): Promise<number> {
  buildServer()
  await sqlOn(pgUrl, `create database ${dbName}`)
  const instances: Instance[] = []
  const received: string[] = []
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received.push(String(req.headers['webhook-id']))
      res.writeHead(204).end()
    })
  })
  try {
    const storage = openStorage(loadConfig({ DATABASE_URL: dbUrl, JWT_SECRET }).database)
    await migrateToLatest(storage)
    const { shop, apiKey } = await createShopsService({ db: storage.db, cacheTtlMs: 0 }).create({
      domain: `multi-${process.pid}.example.com`,
      plan: 'scale',
    })
    await storage.destroy()

    for (let n = 1; n <= 3; n++) instances.push(await startInstance(n))
    const at = (i: number) => instances[i % 3]!.url
    const token = async (keyId: string, secret: string, customerId?: string) => {
      const r = await http(`${at(0)}/v1/auth/token`, {
        method: 'POST',
        body: { api_key: keyId, api_secret: secret, ...(customerId ? { customer_id: customerId } : {}) },
      })
      if (r.status !== 200) throw new Error(`token: ${r.status}`)
      return `Bearer ${(r.body?.data as { token: string }).token}`
    }
    const adminAuth = { authorization: await token(apiKey.keyId, apiKey.secret) }

    // A second admin key and its token, for check 3 (minted now: the token exchange counts
    // against the IP budget that check 1 exhausts).
    const key = await http(`${at(0)}/v1/admin/api-keys`, {
      method: 'POST',
      headers: adminAuth,
      body: { name: 'revoke-me', scope: 'admin' },
    })
    const created = key.body?.data as { keyId: string; secret: string }
    const doomed = { authorization: await token(created.keyId, created.secret) }

    // 1. Shared rate limit: 30 per minute per IP over all instances; the two token
    // exchanges above used two units, so 45 guest GETs give 28 × 200 and 17 × 429.
    const statuses: Record<number, number> = {}
    for (let i = 0; i < 45; i++) {
      const r = await http(`${at(i)}/v1/wishlists/me`, {
        headers: { 'x-storefront-key': shop.storefrontKey, 'x-guest-id': 'multi-guest-0001' },
      })
      statuses[r.status] = (statuses[r.status] ?? 0) + 1
    }
    const rateLimitOk = statuses[200] === 28 && statuses[429] === 17

    // 2. Webhooks sent once by three workers.
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    const hook = await http(`${at(0)}/v1/webhooks`, {
      method: 'POST',
      headers: adminAuth,
      body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['wishlist.item.added'] },
    })
    if (hook.status !== 201 && hook.status !== 200) throw new Error(`webhook create: ${hook.status} ${JSON.stringify(hook.body)}`)
    for (let i = 0; i < 60; i++) {
      const r = await http(`${at(i)}/v1/wishlists/${4_000_000 + (i % 6)}/items`, {
        method: 'POST',
        headers: adminAuth,
        body: { product_id: String(500 + i) },
      })
      if (r.status !== 201) throw new Error(`add item: ${r.status} ${JSON.stringify(r.body)}`)
    }
    const deadline = Date.now() + 20_000
    while (received.length < 60 && Date.now() < deadline) await sleep(50)
    await sleep(1500) // duplicates, if any, would arrive now
    const deliveries = received.length
    const distinct = new Set(received).size
    const webhooksOk = deliveries === 60 && distinct === 60

    // 3. Revocation seen by every instance within the cache TTL.
    for (let i = 0; i < 3; i++)
      if ((await http(`${at(i)}/v1/admin/shop`, { headers: doomed })).status !== 200) throw new Error('fresh token refused')
    const revokedAt = Date.now()
    const del = await http(`${at(0)}/v1/admin/api-keys/${created.keyId}`, { method: 'DELETE', headers: adminAuth })
    if (del.status !== 200) throw new Error(`revoke: ${del.status}`)
    const seenAfterMs: number[] = []
    for (let i = 0; i < 3; i++) {
      while ((await http(`${at(i)}/v1/admin/shop`, { headers: doomed })).status === 200) {
        if (Date.now() - revokedAt > 15_000) break
        await sleep(100)
      }
      seenAfterMs.push(Date.now() - revokedAt)
    }
    const revocationOk = seenAfterMs.every((ms) => ms <= 5_000 + 500)

    // 4. Page caches: an add through one instance, then reads through the other two at
    // once. The page of each instance was cached beforehand; with three instances serving,
    // each checks the owner's version on every cached read (db/connect.ts, changeFeed), so
    // the first answer must already be right. Every read counts: the first answer of each,
    // and how long until the page was right.
    const pageOf = async (i: number, customer: string) => {
      const r = await http(`${at(i)}/v1/wishlists/${customer}?limit=100`, { headers: adminAuth })
      return ((r.body?.data as { items: { productId: string }[] }).items ?? []).map((x) => x.productId)
    }
    const pageCustomer = '4100000'
    let staleFirstReads = 0
    let reads = 0
    const lagMs: number[] = []
    for (let round = 0; round < 60; round++) {
      for (let i = 0; i < 3; i++) await pageOf(i, pageCustomer) // warm: every instance caches the current page
      const writer = round % 3
      const productId = String(7000 + round)
      const added = await http(`${at(writer)}/v1/wishlists/${pageCustomer}/items`, {
        method: 'POST',
        headers: adminAuth,
        body: { product_id: productId },
      })
      if (added.status !== 201) throw new Error(`page add: ${added.status}`)
      const wroteAt = performance.now()
      for (const reader of [writer + 1, writer + 2]) {
        reads++
        let first = true
        while (!(await pageOf(reader, pageCustomer)).includes(productId)) {
          if (first) staleFirstReads++
          first = false
          if (performance.now() - wroteAt > 5_000) break
        }
        lagMs.push(performance.now() - wroteAt)
      }
    }
    const maxLagMs = Math.round(Math.max(...lagMs) * 10) / 10
    const pagesOk = staleFirstReads === 0 && maxLagMs < 1_000

    // 5. Analytics: three appliers (one per instance, every 200 ms) and the reads' own
    // catch-up apply the facts of concurrent writes once each.
    const burst = async (jobs: (() => Promise<{ status: number }>)[], expected: number) => {
      for (let i = 0; i < jobs.length; i += 12) {
        for (const r of await Promise.all(jobs.slice(i, i + 12).map((job) => job())))
          if (r.status !== expected) throw new Error(`analytics burst: ${r.status}`)
      }
    }
    const pairs = Array.from({ length: 240 }, (_, i) => ({
      customer: String(4_200_000 + (i % 30)),
      product: String(9000 + Math.floor(i / 30)),
    }))
    await burst(
      pairs.map(
        (p, i) => () =>
          http(`${at(i)}/v1/wishlists/${p.customer}/items`, { method: 'POST', headers: adminAuth, body: { product_id: p.product } }),
      ),
      201,
    )
    await burst(
      pairs
        .filter((_, i) => i % 2 === 0)
        .map((p, i) => () => http(`${at(i + 1)}/v1/wishlists/${p.customer}/items/${p.product}`, { method: 'DELETE', headers: adminAuth })),
      200,
    )
    await sleep(300) // the background appliers race the reads below
    const overviews = await Promise.all(
      [0, 1, 2].map(
        async (i) =>
          (await http(`${at(i)}/v1/analytics/overview?period=7d`, { headers: adminAuth })).body?.data as { totalWishlistedItems: number },
      ),
    )
    const count = async (query: string) => Number((await sqlOn(dbUrl, query))[0]?.n)
    // Adds: 60 (check 2) + 60 (check 4) + 240; removes: 120.
    const analytics = {
      overviewTotals: overviews.map((o) => o.totalWishlistedItems),
      loggedFacts: await count('select count(*) as n from analytics_events'),
      pendingFacts: await count('select count(*) as n from analytics_inbox'),
      dailyAdds: await count('select sum(adds) as n from analytics_daily'),
      dailyRemoves: await count('select sum(removes) as n from analytics_daily'),
      holdersOf9000: await count(`select holders as n from analytics_product_holders where product_id = '9000'`),
    }
    const analyticsOk =
      analytics.overviewTotals.every((n) => n === 240) &&
      analytics.loggedFacts === 480 &&
      analytics.pendingFacts === 0 &&
      analytics.dailyAdds === 360 &&
      analytics.dailyRemoves === 120 &&
      analytics.holdersOf9000 === 15

    const report = {
      instances: instances.map((i) => i.url),
      rateLimit: { budgetPerMin: 30, tokenExchanges: 2, guestRequests: 45, statuses, ok: rateLimitOk },
      webhooks: { events: 60, deliveries, distinctIds: distinct, workers: 3, ok: webhooksOk },
      revocation: { cacheTtlMs: 5_000, seenAfterMs, ok: revocationOk },
      pageCache: { rounds: 60, readsOnOtherInstances: reads, staleFirstReads, maxMsUntilRight: maxLagMs, ok: pagesOk },
      analytics: { ...analytics, ok: analyticsOk },
    }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return rateLimitOk && webhooksOk && revocationOk && pagesOk && analyticsOk ? 0 : 1
  } finally {
    for (const i of instances) i.proc.kill('SIGTERM')
    await Promise.all(instances.map((i) => new Promise((r) => (i.proc.exitCode !== null ? r(null) : i.proc.once('exit', r)))))
    receiver.close()
    await sqlOn(pgUrl, `drop database if exists ${dbName} with (force)`)
  }
}

process.exitCode = await main()
