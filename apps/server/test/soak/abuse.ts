/**
 * Bounded measurements of two attacks on a real `wishlist serve` process with its webhook
 * worker, at full size (run by `npm run test:faults` after the soak; a minute or two):
 *
 * 1. Fan-out flood: 1,000 holders of a product, one webhook taking back-in-stock and
 *    price-drop, then ONE `POST /v1/events` of 10 `product.updated` of that product with
 *    1,000 variants each. Measured: the request's time, the server's peak RSS until every
 *    delivery has arrived, and the p99 of another shop's GETs meanwhile.
 * 2. Dead endpoints: a shop with 12 endpoints that never answer and 1,200 due deliveries;
 *    measured: how long another shop's deliveries take from the write to the receiver.
 *
 * The server is the installed command (`bin/wishlist.js`, compiled: `npm run test:faults` builds
 * it first). Fails (exit 1) above: request 2 s, RSS 300 MB, other shop's p99 100 ms, victim's delay
 * one poll interval (1 s) plus 1 s for its own attempt.
 *   SOAK_DATABASE_URL=postgres://… node --import tsx test/soak/abuse.ts   # on PostgreSQL
 */
import type { ServerResponse } from 'node:http'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { startReceiver } from '../helpers/receiver.js'
import { createShopWithCli, exitAfter, startServerProcess } from '../helpers/server-process.js'

const HOLDERS = 1_000
const VARIANTS = 1_000
const UPDATES = 10
const DEAD_ENDPOINTS = 12
const DEAD_EVENTS = 100 // × 12 endpoints = 1,200 due deliveries
const LIMITS = { requestMs: 2_000, rssMb: 300, otherP99Ms: 100, victimDelayMs: 2_000 }

const dir = mkdtempSync(join(tmpdir(), 'wishlist-abuse-'))
const databaseUrl = process.env.SOAK_DATABASE_URL ?? `sqlite:${join(dir, 'abuse.db')}`

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}
const round = (n: number) => Math.round(n * 10) / 10

async function main(): Promise<number> {
  const shops = {
    flooder: await createShopWithCli(databaseUrl),
    other: await createShopWithCli(databaseUrl),
    rival: await createShopWithCli(databaseUrl),
    victim: await createShopWithCli(databaseUrl),
  }
  const server = await startServerProcess(
    {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'error',
      RATE_LIMIT_ADMIN_PER_MIN: '1000000',
      RATE_LIMIT_STOREFRONT_PER_MIN: '1000000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_INSECURE: 'true',
    },
    { compiled: true },
  )
  const pid = server.child.pid as number
  const pool = new Pool(server.url, { connections: 16 })
  const receiver = await startReceiver()
  const held: ServerResponse[] = []
  receiver.respond = (req, res) => {
    if (req.path.startsWith('/dead')) held.push(res)
    else res.writeHead(200).end()
  }
  const failures: string[] = []
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON, read field by field below
    async function call(method: 'GET' | 'POST', path: string, token: string | undefined, body?: unknown): Promise<any> {
      const res = await pool.request({
        path,
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const text = await res.body.text()
      if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode} ${text.slice(0, 200)}`)
      return JSON.parse(text)
    }
    const tokens: Record<keyof typeof shops, string> = {} as never
    for (const [name, s] of Object.entries(shops)) {
      tokens[name as keyof typeof shops] = (
        await call('POST', '/v1/auth/token', undefined, { api_key: s.apiKey.keyId, api_secret: s.apiKey.secret })
      ).data.token
    }
    const inParallel = async (n: number, one: (i: number) => Promise<unknown>, width = 16) => {
      let next = 0
      await Promise.all(
        Array.from({ length: width }, async () => {
          while (next < n) await one(next++)
        }),
      )
    }
    const update = (price: number, stock: number) => ({
      type: 'product.updated',
      product_id: '1',
      variants: Array.from({ length: VARIANTS }, (_, v) => ({
        variant_id: String(1_000_000 + v),
        price: price.toFixed(2),
        inventory_quantity: stock,
      })),
    })

    // ---- 1. fan-out flood ----
    await inParallel(HOLDERS, (i) => call('POST', `/v1/wishlists/${1_000_000_000 + i}/items`, tokens.flooder, { product_id: '1' }))
    await inParallel(200, (i) => call('POST', `/v1/wishlists/${2_000 + (i % 50)}/items`, tokens.other, { product_id: String(10 + i) }))
    await call('POST', '/v1/webhooks', tokens.flooder, {
      url: `${receiver.url}/flood`,
      events: ['wishlist.product.back_in_stock', 'wishlist.product.price_dropped'],
    })
    await call('POST', '/v1/events', tokens.flooder, { events: [update(100, 0)] }) // the baseline
    const flood = { events: Array.from({ length: UPDATES }, (_, i) => update(99 - i, i % 2 === 0 ? 5 : 0)) }
    const floodBytes = Buffer.byteLength(JSON.stringify(flood))

    let reading = true
    const rssBefore = rssMb(pid)
    let peakRss = rssBefore
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(pid))), 50)
    const during: number[] = []
    let inWindow = false
    const baseline: number[] = []
    const readers = Array.from({ length: 2 }, async (_, r) => {
      for (let i = 0; reading; i++) {
        const started = performance.now()
        await call('GET', `/v1/wishlists/${2_000 + ((r * 13 + i) % 50)}?limit=50`, tokens.other)
        ;(inWindow ? during : baseline).push(performance.now() - started)
      }
    })
    await new Promise((r) => setTimeout(r, 2_000))
    inWindow = true
    const floodStarted = performance.now()
    await call('POST', '/v1/events', tokens.flooder, flood)
    const requestMs = performance.now() - floodStarted
    // Every coalesced signal: 1,000 price drops and 1,000 back-in-stock, one delivery each.
    const expected = 2 * VARIANTS
    await receiver.waitFor(expected, (x) => x.path === '/flood', 120_000)
    const drainedMs = performance.now() - floodStarted
    reading = false
    await Promise.all(readers)
    clearInterval(sampler)
    const largestBody = receiver.received.reduce((a, x) => Math.max(a, Buffer.byteLength(x.body)), 0)
    const fanOut = {
      database: databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres',
      requestBytes: floodBytes,
      requestMs: Math.round(requestMs),
      deliveries: receiver.received.filter((x) => x.path === '/flood').length,
      allDeliveredAfterMs: Math.round(drainedMs),
      largestBodyBytes: largestBody,
      rssBeforeMb: round(rssBefore),
      peakRssMb: round(peakRss),
      otherShopGet: {
        baselineP99Ms: round(percentile(baseline, 99)),
        duringP50Ms: round(percentile(during, 50)),
        duringP99Ms: round(percentile(during, 99)),
        duringMaxMs: round(during.reduce((a, b) => Math.max(a, b), 0)),
        requests: during.length,
      },
    }
    console.log(JSON.stringify({ fanOut }, null, 2))
    if (requestMs > LIMITS.requestMs) failures.push(`flood request took ${fanOut.requestMs} ms`)
    if (peakRss > LIMITS.rssMb) failures.push(`server RSS reached ${fanOut.peakRssMb} MB`)
    if (fanOut.otherShopGet.duringP99Ms > LIMITS.otherP99Ms && fanOut.database === 'sqlite')
      failures.push(`other shop's GET p99 ${fanOut.otherShopGet.duringP99Ms} ms`)

    // ---- 2. dead endpoints ----
    for (let i = 0; i < DEAD_ENDPOINTS; i++)
      await call('POST', '/v1/webhooks', tokens.rival, { url: `${receiver.url}/dead-${i}`, events: ['wishlist.item.added'] })
    await call('POST', '/v1/webhooks', tokens.victim, { url: `${receiver.url}/victim`, events: ['wishlist.item.added'] })
    await inParallel(DEAD_EVENTS, (i) => call('POST', `/v1/wishlists/${3_000 + i}/items`, tokens.rival, { product_id: '5' }))
    await receiver.waitFor(20, (x) => x.path.startsWith('/dead'), 30_000) // the rival's attempts hang
    const delays: number[] = []
    for (let i = 0; i < 5; i++) {
      const written = Date.now()
      await call('POST', `/v1/wishlists/${4_000 + i}/items`, tokens.victim, { product_id: '6' })
      const [hit] = (await receiver.waitFor(i + 1, (x) => x.path === '/victim', 60_000)).slice(i)
      delays.push(hit!.at - written)
    }
    const fairness = {
      deadEndpoints: DEAD_ENDPOINTS,
      dueDeliveries: DEAD_ENDPOINTS * DEAD_EVENTS,
      rivalAttemptsHanging: held.filter((res) => !res.writableEnded).length,
      victimDelayMs: { samples: delays, max: Math.max(...delays) },
    }
    console.log(JSON.stringify({ fairness }, null, 2))
    if (fairness.victimDelayMs.max > LIMITS.victimDelayMs) failures.push(`victim's delivery waited ${fairness.victimDelayMs.max} ms`)
  } finally {
    for (const res of held) if (!res.writableEnded) res.destroy()
    server.child.kill('SIGTERM')
    await server.exited
    await pool.close()
    await receiver.close()
  }
  if (failures.length) console.error(`ABUSE MEASUREMENT FAILED:\n- ${failures.join('\n- ')}`)
  else console.log("abuse measurement passed: bounded request, memory and other shops' latency")
  return failures.length ? 1 : 0
}

await exitAfter(main, dir)
