/**
 * Bounded soak (`npm run test:faults`): a real `wishlist serve` process, its capacity
 * measured for a few seconds with a closed loop, then mixed traffic at half that rate for
 * SOAK_SECONDS (default 180). Fails (exit 1) on any error response or network error, or
 * when the server's RSS in the last minute exceeds the first minute's by more than 20 %.
 * Prints p50/p99 latency, throughput and the RSS figures.
 *
 *   SOAK_SECONDS=300 npm run test:faults          # the 5-minute variant
 *   SOAK_DATABASE_URL=postgres://… npm run test:faults   # on PostgreSQL (a fresh schema's URL)
 *   SOAK_RATE=1300 npm run test:faults            # a fixed rate instead of half the capacity (to compare builds)
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { createShopWithCli, exitAfter, startServerProcess } from '../helpers/server-process.js'

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 180)
const CAPACITY_SECONDS = Number(process.env.SOAK_CAPACITY_SECONDS ?? 15)
const CONCURRENCY = 32
const RSS_LIMIT_RATIO = 1.2

const dir = mkdtempSync(join(tmpdir(), 'wishlist-soak-'))
const databaseUrl = process.env.SOAK_DATABASE_URL ?? `sqlite:${join(dir, 'soak.db')}`

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) : 0
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((x, y) => x - y),
    50,
  )

async function main(): Promise<number> {
  const created = await createShopWithCli(databaseUrl)
  const server = await startServerProcess(
    {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'error',
      RATE_LIMIT_ADMIN_PER_MIN: '1000000',
      RATE_LIMIT_STOREFRONT_PER_MIN: '1000000',
      // One load client with a pool of 64 connections from one address: as many as the per-client
      // cap allows, which a new connection racing the close of an old one would pass.
      MAX_CONNECTIONS_PER_CLIENT: '1000',
      WEBHOOK_WORKER: 'off',
    },
    { compiled: true },
  )
  const pid = server.child.pid as number
  const pool = new Pool(server.url, { connections: CONCURRENCY * 2 })
  const token = await (async () => {
    const res = await pool.request({
      path: '/v1/auth/token',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: created.apiKey.keyId, api_secret: created.apiKey.secret }),
    })
    return ((await res.body.json()) as { data: { token: string } }).data.token
  })()
  const admin = { authorization: `Bearer ${token}` }
  const storefront = { 'x-storefront-key': created.storefrontKey }
  const rand = (n: number) => Math.floor(Math.random() * n)

  // The mix: reads dominate, as on a storefront.
  function nextRequest(): {
    method: 'GET' | 'POST' | 'DELETE'
    path: string
    headers: Record<string, string>
    body?: string
    ok: number[]
  } {
    const customer = String(1000 + rand(200))
    const product = String(1 + rand(500))
    const r = Math.random()
    if (r < 0.35) return { method: 'GET', path: `/v1/wishlists/${customer}?limit=50`, headers: admin, ok: [200] }
    if (r < 0.6)
      return {
        method: 'POST',
        path: `/v1/wishlists/${customer}/items`,
        headers: admin,
        body: JSON.stringify({ product_id: product, handle: `p-${product}` }),
        ok: [200, 201],
      }
    if (r < 0.7) return { method: 'DELETE', path: `/v1/wishlists/${customer}/items/${product}`, headers: admin, ok: [200] }
    if (r < 0.8) return { method: 'GET', path: `/api/v1/products/${product}/reviews`, headers: storefront, ok: [200] }
    if (r < 0.9) {
      const guest = `guest-soak-${rand(100)}`
      return {
        method: 'POST',
        path: `/v1/wishlists/${guest}/items`,
        headers: { ...storefront, 'x-guest-id': guest },
        body: JSON.stringify({ product_id: product }),
        ok: [200, 201],
      }
    }
    return { method: 'GET', path: '/v1/analytics/overview', headers: admin, ok: [200] }
  }

  const latencies: number[] = []
  const errors: string[] = []
  async function one(): Promise<void> {
    const req = nextRequest()
    const started = performance.now()
    try {
      const res = await pool.request({
        path: req.path,
        method: req.method,
        headers: req.body ? { ...req.headers, 'content-type': 'application/json' } : req.headers,
        ...(req.body ? { body: req.body } : {}),
      })
      await res.body.text()
      latencies.push(performance.now() - started)
      if (!req.ok.includes(res.statusCode)) errors.push(`${req.method} ${req.path} → ${res.statusCode}`)
    } catch (err) {
      errors.push(`${req.method} ${req.path} → ${(err as Error).message}`)
    }
  }

  // 1. Capacity: a closed loop of CONCURRENCY clients.
  let done = 0
  const capacityEnd = Date.now() + CAPACITY_SECONDS * 1000
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < capacityEnd) {
        await one()
        done++
      }
    }),
  )
  const capacity = done / CAPACITY_SECONDS
  const rate = Number(process.env.SOAK_RATE ?? Math.max(1, Math.round(capacity / 2)))
  latencies.length = 0
  console.log(
    `capacity ≈ ${capacity.toFixed(0)} req/s (closed loop, ${CONCURRENCY} clients, ${CAPACITY_SECONDS} s); soak at ${rate} req/s for ${SOAK_SECONDS} s`,
  )

  // 2. Open loop at half the capacity, RSS sampled every 5 s.
  const samples: { at: number; rssKb: number }[] = []
  const started = Date.now()
  const inflight = new Set<Promise<void>>()
  let sent = 0
  const sampler = setInterval(() => samples.push({ at: (Date.now() - started) / 1000, rssKb: rssKb(pid) }), 5_000)
  samples.push({ at: 0, rssKb: rssKb(pid) })
  while (Date.now() - started < SOAK_SECONDS * 1000) {
    const due = Math.floor(((Date.now() - started) / 1000) * rate)
    while (sent < due) {
      sent++
      const p = one().finally(() => inflight.delete(p))
      inflight.add(p)
    }
    await new Promise((r) => setTimeout(r, 5))
  }
  await Promise.all(inflight)
  clearInterval(sampler)
  samples.push({ at: (Date.now() - started) / 1000, rssKb: rssKb(pid) })

  server.child.kill('SIGTERM')
  const exitCode = await server.exited
  await pool.close()

  const sorted = [...latencies].sort((x, y) => x - y)
  const firstMinute = samples.filter((s) => s.at <= 60).map((s) => s.rssKb)
  const lastMinute = samples.filter((s) => s.at >= SOAK_SECONDS - 60).map((s) => s.rssKb)
  const report = {
    database: databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres',
    capacityPerSec: Math.round(capacity),
    ratePerSec: rate,
    seconds: SOAK_SECONDS,
    requests: latencies.length + errors.length,
    errors: errors.length,
    errorRate: errors.length / Math.max(1, latencies.length + errors.length),
    latencyMs: { p50: +percentile(sorted, 50).toFixed(2), p99: +percentile(sorted, 99).toFixed(2), max: +(sorted.at(-1) ?? 0).toFixed(2) },
    rssMb: {
      firstMinuteMedian: +(median(firstMinute) / 1024).toFixed(1),
      lastMinuteMedian: +(median(lastMinute) / 1024).toFixed(1),
      samples: samples.map((s) => Math.round(s.rssKb / 1024)),
    },
    exitCode,
  }
  console.log(JSON.stringify(report, null, 2))
  const failures: string[] = []
  if (errors.length > 0) failures.push(`${errors.length} errors, e.g. ${errors.slice(0, 5).join('; ')}`)
  if (median(lastMinute) > median(firstMinute) * RSS_LIMIT_RATIO)
    failures.push(`RSS grew from ${report.rssMb.firstMinuteMedian} MB to ${report.rssMb.lastMinuteMedian} MB`)
  if (exitCode !== 0) failures.push(`server exited with ${exitCode} after SIGTERM`)
  if (failures.length) console.error(`SOAK FAILED:\n- ${failures.join('\n- ')}`)
  else console.log('soak passed: no errors, memory flat, clean exit')
  return failures.length ? 1 : 0
}

await exitAfter(main, dir)
