/**
 * Database fault: PostgreSQL stopped and started again under a stream of writes, on a
 * private throwaway cluster (never the shared server). Requests during the outage get
 * 503 UNAVAILABLE with Retry-After, none hangs, the service recovers by itself, and every
 * add that was acknowledged with a 2xx is in the database.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../../src/server.js'
import { testConfig } from '../helpers/app.js'
import { type PgCluster, startPgCluster } from '../helpers/pg-cluster.js'

// A request that takes longer than this counts as hung (the pool's connect timeout is 5 s
// and statement_timeout 15 s; a healthy answer comes in milliseconds).
const HUNG_MS = 20_000

let cluster: PgCluster
let server: RunningServer
let token: string
const CUSTOMER = '4242'

interface Outcome {
  productId: string
  status: number | 'hung' | 'network-error'
  code?: string
  retryAfter?: string | null
  at: number
}

beforeAll(async () => {
  cluster = await startPgCluster()
  server = await startServer({
    ...testConfig({ LOG_LEVEL: 'silent', WEBHOOK_WORKER: 'off', DATABASE_URL: cluster.url }),
    port: 0,
  })
  const shop = await server.app.services.shops.create({ domain: `outage-${Date.now()}.myshopify.com`, plan: 'scale' })
  const res = await fetch(`${server.address}/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: shop.apiKey.keyId, api_secret: shop.apiKey.secret }),
  })
  token = ((await res.json()) as { data: { token: string } }).data.token
}, 120_000)

afterAll(async () => {
  await server?.close()
  await cluster?.destroy()
})

async function add(productId: string): Promise<Outcome> {
  const at = Date.now()
  try {
    const res = await fetch(`${server.address}/v1/wishlists/${CUSTOMER}/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ product_id: productId }),
      signal: AbortSignal.timeout(HUNG_MS),
    })
    const body = (await res.json()) as { error?: { code: string } }
    return {
      productId,
      status: res.status,
      ...(body.error ? { code: body.error.code } : {}),
      retryAfter: res.headers.get('retry-after'),
      at,
    }
  } catch (err) {
    return { productId, status: err instanceof Error && err.name === 'TimeoutError' ? 'hung' : 'network-error', at }
  }
}

/** Writers that add distinct products back to back until stopped. */
function writers(concurrency: number, firstProductId: number) {
  const outcomes: Outcome[] = []
  const waiters: (() => void)[] = []
  let next = firstProductId
  let running = true
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) {
      outcomes.push(await add(String(next++)))
      for (const w of waiters.splice(0)) w()
    }
  })
  return {
    outcomes,
    /** Resolves once `check()` holds, looked at after each outcome (the timeout is a real timer). */
    until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs)
        const wake = () => {
          if (!check()) return void waiters.push(wake)
          clearTimeout(timer)
          resolve()
        }
        wake()
      })
    },
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}

async function storedProducts(): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: cluster.url })
  await client.connect()
  try {
    const { rows } = await client.query<{ product_id: string }>('select product_id from wishlist_items')
    return new Set(rows.map((r) => r.product_id))
  } finally {
    await client.end()
  }
}

describe('PostgreSQL stopped and restarted under a stream of adds', { timeout: 240_000 }, () => {
  it.each(['fast', 'immediate'] as const)(
    '(%s shutdown) answers 503 with Retry-After meanwhile, recovers alone and loses no acknowledged add',
    async (mode) => {
      const load = writers(6, mode === 'fast' ? 100_000 : 200_000)
      const ok = () => load.outcomes.filter((o) => o.status === 200 || o.status === 201).length
      try {
        const before = ok()
        await load.until(() => ok() >= before + 30, 'adds before the outage')
        const stoppedAt = Date.now()
        await cluster.stop(mode)
        const down = load.outcomes.length
        await load.until(() => load.outcomes.slice(down).filter((o) => o.status === 503).length >= 10, '503 answers during the outage')
        await cluster.start()
        const restartedAt = Date.now()
        // Recovery without restarting the service: adds succeed again.
        await load.until(
          () => load.outcomes.filter((o) => o.at > restartedAt && (o.status === 201 || o.status === 200)).length >= 30,
          'adds after the restart',
        )
        await load.stop()

        const during = load.outcomes.filter((o) => o.at >= stoppedAt && o.at < restartedAt)
        const unavailable = load.outcomes.filter((o) => o.status === 503)
        expect(unavailable.length).toBeGreaterThanOrEqual(10)
        // Every failure is the documented 503, never a 500, a hung request or a dropped connection.
        const others = load.outcomes.filter((o) => o.status !== 201 && o.status !== 503)
        expect(others).toEqual([])
        for (const o of unavailable) expect({ code: o.code, retryAfter: o.retryAfter }).toEqual({ code: 'UNAVAILABLE', retryAfter: '5' })
        expect(during.length).toBeGreaterThan(0)

        // Every acknowledged add is in the database.
        const stored = await storedProducts()
        const acknowledged = load.outcomes.filter((o) => o.status === 201).map((o) => o.productId)
        expect(acknowledged.filter((p) => !stored.has(p))).toEqual([])
        // And the owner's item count agrees with the rows (no half-written add).
        const list = await fetch(`${server.address}/v1/wishlists/${CUSTOMER}?limit=1`, { headers: { authorization: `Bearer ${token}` } })
        expect(((await list.json()) as { data: { total: number } }).data.total).toBe(stored.size)
        console.info(
          `[db-outage ${mode}] ${load.outcomes.length} adds: ${acknowledged.length} acknowledged (all stored), ${unavailable.length} answered 503; ${stored.size} rows`,
        )
      } finally {
        await load.stop()
      }
    },
  )
})
