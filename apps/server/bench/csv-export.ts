/**
 * Bench: the shop's CSV export streams with constant memory (docs/api.md, "Privacy and export").
 *
 *   npx tsx bench/csv-export.ts                 # SQLite, 10 thousand then 1 million items
 *   npx tsx bench/csv-export.ts postgres        # PostgreSQL (BENCH_DATABASE_URL or the local test database)
 *   npx tsx bench/csv-export.ts sqlite 200000   # another large size
 *
 * For each size: fills one shop with bulk INSERT … SELECT (a recursive CTE on SQLite,
 * generate_series on PostgreSQL), starts `wishlist serve` in a child process, downloads
 * the CSV over loopback HTTP, counts its records, and reads the server's peak RSS
 * (VmHWM in /proc/<pid>/status) against its RSS just before the download.
 * Loopback only; the temporary SQLite file or PostgreSQL schema is removed afterwards.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { createServices } from '../src/app.js'
import { loadConfig, parseDatabaseUrl } from '../src/config.js'
import { openStorage, type Storage } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'

const backend = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite'
const large = Number(process.argv[3] ?? 1_000_000)
const SIZES = [10_000, large]
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ITEMS_PER_CUSTOMER = 400
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123'

interface Target {
  url: string
  cleanup(): Promise<void>
}

async function newTarget(): Promise<Target> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wishlist-bench-'))
    return { url: `sqlite:${join(dir, 'bench.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const schema = `bench_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const sep = PG_URL.includes('?') ? '&' : '?'
  return {
    url: `${PG_URL}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async cleanup() {
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      await c.query(`drop schema if exists ${schema} cascade`)
      await c.end()
    },
  }
}

/** One shop with `n` items: 400 per customer, every tenth handle needing RFC 4180 quotes. */
async function fill(storage: Storage, shopId: string, n: number): Promise<void> {
  const at = Date.now() - n
  if (storage.backend === 'sqlite') {
    await sql`
      with recursive seq(i) as (select 0 union all select i + 1 from seq where i < ${n - 1})
      insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
      select ${shopId}, 'customer', cast(100000 + i / ${ITEMS_PER_CUSTOMER} as text), 'default', cast(i % ${ITEMS_PER_CUSTOMER} + 1 as text),
             case when i % 3 = 0 then cast(i as text) end,
             case when i % 10 = 0 then 'handle, "quoted" ' || i else 'handle-' || i end, null, ${at} + i
      from seq`.execute(storage.db)
  } else {
    // In slices: one statement per 100,000 rows stays well inside the pool's statement_timeout.
    for (let from = 0; from < n; from += 100_000) {
      const to = Math.min(n, from + 100_000) - 1
      await sql`
        insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
        select ${shopId}, 'customer', (100000 + i / ${ITEMS_PER_CUSTOMER})::text, 'default', (i % ${ITEMS_PER_CUSTOMER} + 1)::text,
               case when i % 3 = 0 then i::text end,
               case when i % 10 = 0 then 'handle, "quoted" ' || i else 'handle-' || i end, null, ${at}::bigint + i
        from generate_series(${from}::int, ${to}::int) as i`.execute(storage.db)
    }
    await sql`analyze wishlist_items`.execute(storage.db)
  }
}

function startServer(databaseUrl: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/serve-entry.ts', 'serve'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      JWT_SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ADMIN_PER_MIN: '100000',
    },
    // The IPC channel only tells the server when this process has ended (bench/serve-entry.ts).
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve({ child, base: m[1] as string })
    })
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)))
  })
}

function memoryOf(pid: number): { rssKb: number; hwmKb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') }
}

/** Counts CSV records (CRLF outside quotes), streaming: the client keeps nothing either. */
async function countRecords(body: ReadableStream<Uint8Array>): Promise<{ records: number; bytes: number }> {
  const decoder = new TextDecoder()
  let inQuotes = false
  let records = 0
  let bytes = 0
  let prev = ''
  for await (const chunk of body) {
    bytes += chunk.byteLength
    const text = decoder.decode(chunk, { stream: true })
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]
      if (ch === '"') inQuotes = !inQuotes
      else if (ch === '\n' && !inQuotes && prev === '\r') records++
      prev = ch as string
    }
  }
  return { records, bytes }
}

async function runOnce(n: number) {
  const target = await newTarget()
  const config = loadConfig({ ...process.env, DATABASE_URL: target.url, JWT_SECRET })
  const storage = openStorage(parseDatabaseUrl(target.url))
  let child: ChildProcess | undefined
  try {
    await migrateToLatest(storage)
    const { shop, apiKey } = await createServices({ config, storage }).shops.create({
      domain: `bench-${randomBytes(4).toString('hex')}.myshopify.com`,
      plan: 'scale',
    })
    const fillStart = performance.now()
    await fill(storage, shop.id, n)
    const fillSeconds = (performance.now() - fillStart) / 1000
    await storage.destroy()

    const server = await startServer(target.url)
    child = server.child
    const tokenRes = await fetch(`${server.base}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: apiKey.keyId, api_secret: apiKey.secret }),
    })
    const token = ((await tokenRes.json()) as { data: { token: string } }).data.token
    const before = memoryOf(child.pid as number)
    const start = performance.now()
    const res = await fetch(`${server.base}/v1/admin/export/wishlists.csv`, { headers: { authorization: `Bearer ${token}` } })
    if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`)
    const { records, bytes } = await countRecords(res.body)
    const seconds = (performance.now() - start) / 1000
    const after = memoryOf(child.pid as number)
    if (records - 1 !== n) throw new Error(`expected ${n} rows, counted ${records - 1}`)
    return {
      items: n,
      rows: records - 1,
      mb: bytes / 1e6,
      fillSeconds,
      seconds,
      rssBeforeMb: before.rssKb / 1024,
      peakRssMb: after.hwmKb / 1024,
    }
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r))
      child.kill('SIGTERM')
      await exited
    }
    await storage.destroy().catch(() => {})
    await target.cleanup()
  }
}

const results = []
for (const n of SIZES) {
  const r = await runOnce(n)
  results.push(r)
  console.log(
    `${backend} ${r.items.toLocaleString('en')} items: fill ${r.fillSeconds.toFixed(1)} s, ` +
      `export ${r.rows.toLocaleString('en')} rows / ${r.mb.toFixed(1)} MB in ${r.seconds.toFixed(1)} s (${Math.round(r.rows / r.seconds).toLocaleString('en')} rows/s), ` +
      `server RSS before ${r.rssBeforeMb.toFixed(0)} MB, peak ${r.peakRssMb.toFixed(0)} MB`,
  )
}
const [small, big] = results
if (small && big)
  console.log(
    `peak RSS ratio ${big.items.toLocaleString('en')} / ${small.items.toLocaleString('en')} items: ${(big.peakRssMb / small.peakRssMb).toFixed(2)}`,
  )
