/**
 * The write floor: bare Fastify (no logger, no rate limit, no hooks) with a cached token
 * check and the same SQLite transaction as the service's add and remove: the owner row and
 * its item count, the item, the analytics fact, each statement prepared once, on the bench
 * dataset's file with the service's pragmas (db/sqlite-file.ts). Each request's
 * transaction is a savepoint in a batch that commits once per event-loop turn, as the
 * service's group commit does (db/group-commit.ts; one COMMIT per request made this floor
 * slower than the service), and its answer waits for that COMMIT. `add-remove` is reported against it as well as
 * against the ceiling: what the service loses here is its own cost on a write beyond the
 * database work every add and remove needs (target: at least 0.6 of the floor).
 *
 * It mints customer tokens itself (`POST /v1/auth/token`, the key's shop, no secret check),
 * so the add-remove scenario runs against it unchanged. DATABASE_URL (`sqlite:FILE`) and
 * JWT_SECRET come from the environment.
 */
import Fastify from 'fastify'
import { jwtVerify, SignJWT } from 'jose'
import { openSqliteFile } from '../../src/db/sqlite-file.js'
import { JWT_AUDIENCE, JWT_ISSUER, TOKEN_TTL_SECONDS } from '../../src/modules/auth/auth.service.js'

const file = (process.env.DATABASE_URL ?? '').replace(/^sqlite:/, '')
const { db } = openSqliteFile(file)
const secret = new TextEncoder().encode(process.env.JWT_SECRET ?? '')

const shopOfKey = db.prepare('select shop_id from api_keys where id = ?')
const ensureOwner = db.prepare(
  `insert into wishlist_owners (shop_id, owner_type, owner_id, item_count, created_at, updated_at) values (?, 'customer', ?, 0, ?, ?)
   on conflict (shop_id, owner_type, owner_id) do update set item_count = item_count returning item_count`,
)
const insertItem = db.prepare(
  `insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
   values (?, 'customer', ?, 'default', ?, ?, null, null, ?) on conflict do nothing returning product_id`,
)
const deleteItem = db.prepare(`delete from wishlist_items where shop_id = ? and owner_type = 'customer' and owner_id = ? and list_id = 'default' and product_id = ? returning product_id`)
const adjustCount = db.prepare(`update wishlist_owners set item_count = item_count + ?, updated_at = ? where shop_id = ? and owner_type = 'customer' and owner_id = ? returning item_count`)
const recordFact = db.prepare(`insert into analytics_inbox (shop_id, type, owner_type, owner_id, product_id, occurred_at) values (?, ?, 'customer', ?, ?, ?)`)

/** The open batch: the answers waiting for its COMMIT (at the turn's check phase). */
let waiting: (() => void)[] | undefined

function commit(): void {
  const done = waiting ?? []
  waiting = undefined
  db.exec('COMMIT')
  for (const answer of done) answer()
}

function transaction<T>(work: () => T): Promise<T> {
  if (waiting === undefined) {
    db.exec('BEGIN IMMEDIATE')
    waiting = []
    setImmediate(commit)
  }
  db.exec('SAVEPOINT floor')
  try {
    const result = work()
    db.exec('RELEASE floor')
    return new Promise((resolve) => waiting?.push(() => resolve(result)))
  } catch (err) {
    db.exec('ROLLBACK TO floor')
    db.exec('RELEASE floor')
    throw err
  }
}

/** Verified once per token, then a map lookup (the service caches verified claims too). */
const verified = new Map<string, { shopId: string; customerId: string }>()
async function customerOf(authorization: string | undefined): Promise<{ shopId: string; customerId: string }> {
  const token = authorization?.slice('Bearer '.length) ?? ''
  let claims = verified.get(token)
  if (claims === undefined) {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE })
    claims = { shopId: String(payload.shop), customerId: String(payload.sub).slice('customer:'.length) }
    verified.set(token, claims)
  }
  return claims
}

const app = Fastify({ logger: false })

app.post<{ Body: { api_key: string; customer_id: string } }>('/v1/auth/token', async (request) => {
  const row = shopOfKey.get(request.body.api_key) as { shop_id: string }
  const token = await new SignJWT({ shop: row.shop_id, kid: request.body.api_key, scope: 'customer' })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setSubject(`customer:${request.body.customer_id}`)
    .setIssuedAt()
    .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
    .sign(secret)
  return { ok: true, data: { token, expires_in: TOKEN_TTL_SECONDS, token_type: 'Bearer', scope: 'customer' } }
})

app.post<{ Body: { product_id: string; variant_id?: string } }>('/v1/wishlists/me/items', async (request, reply) => {
  const { shopId, customerId } = await customerOf(request.headers.authorization)
  const { product_id: productId, variant_id: variantId = null } = request.body
  const at = Date.now()
  const result = await transaction(() => {
    ensureOwner.get(shopId, customerId, at, at)
    const created = insertItem.get(shopId, customerId, productId, variantId, at) !== undefined
    let count = 0
    if (created) {
      count = (adjustCount.get(1, at, shopId, customerId) as { item_count: number }).item_count
      recordFact.run(shopId, 'add', customerId, productId, at)
    }
    return { created, count }
  })
  const item = { productId, variantId, handle: null, metadata: null, addedAt: new Date(at).toISOString() }
  return reply.code(result.created ? 201 : 200).send({ ok: true, data: { created: result.created, item, count: result.count } })
})

app.delete<{ Params: { productId: string } }>('/v1/wishlists/me/items/:productId', async (request) => {
  const { shopId, customerId } = await customerOf(request.headers.authorization)
  const at = Date.now()
  const result = await transaction(() => {
    const removed = deleteItem.get(shopId, customerId, request.params.productId) !== undefined
    let count = 0
    if (removed) {
      count = (adjustCount.get(-1, at, shopId, customerId) as { item_count: number }).item_count
      recordFact.run(shopId, 'remove', customerId, request.params.productId, at)
    }
    return { removed, count }
  })
  return { ok: true, data: result }
})

const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.send?.({ listening: address })
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0))
})
