import SQLite from 'better-sqlite3'
const times = new Map<string, { n: number; us: number }>()
const origPrepare = SQLite.prototype.prepare
SQLite.prototype.prepare = function (this: SQLite.Database, sql: string) {
  const stmt = origPrepare.call(this, sql)
  for (const m of ['run', 'all', 'get'] as const) {
    const f = (stmt as any)[m].bind(stmt)
    ;(stmt as any)[m] = (...a: unknown[]) => { const t = process.hrtime.bigint(); try { return f(...a) } finally { const e = times.get(sql) ?? { n: 0, us: 0 }; e.n++; e.us += Number(process.hrtime.bigint() - t) / 1000; times.set(sql, e) } }
  }
  return stmt
} as typeof origPrepare
const { buildApp } = await import('./src/app.js')
const { loadConfig } = await import('./src/config.js')
const { openStorage } = await import('./src/db/connect.js')
const { migrateToLatest } = await import('./src/db/migrate.js')
const { SignJWT } = await import('jose')
const storage = openStorage({ kind: 'sqlite', file: '/tmp/ar.db' })
await migrateToLatest(storage)
const { sql } = await import('kysely')
if (process.env.PRAGMA) await sql.raw(process.env.PRAGMA).execute(storage.db)
const config = { ...loadConfig({ JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123', DATABASE_URL: 'sqlite:/tmp/ar.db', RATE_LIMIT_STOREFRONT_PER_MIN: '1000000', RATE_LIMIT_ADMIN_PER_MIN: '1000000' }) }
const app = await buildApp({ config, storage, logger: false })
const info = JSON.parse(((await storage.db.selectFrom('bench_dataset' as any).selectAll().executeTakeFirst()) as any).v)
const tok = await (await app.inject({ method: 'POST', url: '/v1/auth/token', payload: { api_key: info.keyId, api_secret: info.secret, customer_id: '3000001' } })).json()
const auth = `Bearer ${tok.data.token}`
times.clear()
const t0 = Date.now()
for (let i = 0; i < 300; i++) {
  const a = await app.inject({ method: 'POST', url: '/v1/wishlists/me/items', headers: { authorization: auth }, payload: { product_id: String(900000 + i) } })
  if (a.statusCode > 201) { console.log(a.body); break }
  await app.inject({ method: 'DELETE', url: `/v1/wishlists/me/items/${900000 + i}`, headers: { authorization: auth } })
}
console.log('ms per cycle', (Date.now() - t0) / 300)
for (const [sql, e] of [...times].sort((a, b) => b[1].us - a[1].us).slice(0, 12)) console.log((e.us / 300).toFixed(1).padStart(8), 'us/cycle', e.n, sql.slice(0, 180))
await app.close()
