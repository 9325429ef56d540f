/**
 * The PostgreSQL write floor: bare Fastify (no logger, no rate limit, no hooks) doing the
 * database work of the service's add and remove on PostgreSQL and nothing else. Each request
 * takes a connection from a pool of the service's default size (10) and runs the same
 * transaction as the service: the owner row and its item count, the item, the analytics fact
 * (BEGIN and COMMIT as their own round trips, as Kysely's transactions send them), each
 * statement prepared once per connection (named statements). `add-remove` on PostgreSQL is
 * reported against it: what the service spends beyond it is its own cost on a write.
 *
 * With the statements the service's add and remove run (BENCH_FLOOR_EXTRAS=statements, which
 * the bench sets for this floor): the count's update answers the list's count, the outbox
 * insert checks the shop's webhook subscriptions, a remove reads the owner row first.
 * DATABASE_URL (`postgres://…`) and JWT_SECRET come from the environment.
 */
import Fastify from 'fastify'
import pg from 'pg'
import { customerOf, tokenRoute } from './floor-common.js'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const extras = new Set((process.env.BENCH_FLOOR_EXTRAS ?? '').split(',').filter(Boolean))

const statement = (name: string, text: string) => (values: unknown[]) => ({ name, text, values })
const ensureOwner = statement(
  'floor_ensure_owner',
  `insert into wishlist_owners (shop_id, owner_type, owner_id, item_count, created_at, updated_at) values ($1, 'customer', $2, 0, $3, $3)
   on conflict (shop_id, owner_type, owner_id) do update set item_count = wishlist_owners.item_count returning item_count`,
)
const insertItem = statement(
  'floor_insert_item',
  `insert into wishlist_items (shop_id, owner_type, owner_id, list_id, product_id, variant_id, handle, metadata, added_at)
   values ($1, 'customer', $2, 'default', $3, $4, null, null, $5) on conflict do nothing returning product_id`,
)
const deleteItem = statement(
  'floor_delete_item',
  `delete from wishlist_items where shop_id = $1 and owner_type = 'customer' and owner_id = $2 and list_id = 'default' and product_id = $3 returning product_id`,
)
const adjustCount = statement(
  'floor_adjust_count',
  `update wishlist_owners set item_count = item_count + $1, updated_at = $2 where shop_id = $3 and owner_type = 'customer' and owner_id = $4 returning item_count`,
)
const recordFact = statement(
  'floor_record_fact',
  `insert into analytics_inbox (shop_id, type, owner_type, owner_id, product_id, occurred_at) values ($1, $2, 'customer', $3, $4, $5)`,
)
const adjustAndCount = statement(
  'floor_adjust_and_count',
  `update wishlist_owners set item_count = item_count + $1, updated_at = $2 where shop_id = $3 and owner_type = 'customer' and owner_id = $4
   returning (select count(*)::int from wishlist_items where shop_id = $3 and owner_type = 'customer' and owner_id = $4 and list_id = 'default') as n`,
)
const outboxIfTaken = statement(
  'floor_outbox_if_taken',
  `insert into outbox (shop_id, id, event, payload, occurred_at, created_at, dispatched) select $1, $2, $3, $4, $5::bigint, $5::bigint, 0
   where exists (select 1 from webhook_endpoints where shop_id = $1 and disabled_at is null and strpos(events, '"' || $3 || '"') > 0)`,
)
let outboxIds = 0
const lockOwner = statement(
  'floor_lock_owner',
  `select item_count, created_at, updated_at from wishlist_owners where shop_id = $1 and owner_type = 'customer' and owner_id = $2 for update`,
)

/** One request's transaction on a pooled connection. */
async function transaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect()
  try {
    await c.query('BEGIN')
    try {
      const result = await work(c)
      await c.query('COMMIT')
      return result
    } catch (err) {
      await c.query('ROLLBACK')
      throw err
    }
  } finally {
    c.release()
  }
}

const app = Fastify({ logger: false })
tokenRoute(
  app,
  async (keyId) => (await pool.query<{ shop_id: string }>('select shop_id from api_keys where id = $1', [keyId])).rows[0]?.shop_id ?? '',
)

app.post<{ Body: { product_id: string; variant_id?: string } }>('/v1/wishlists/me/items', async (request, reply) => {
  const { shopId, customerId } = await customerOf(request.headers.authorization)
  const { product_id: productId, variant_id: variantId = null } = request.body
  const at = Date.now()
  const result = await transaction(async (c) => {
    await c.query(ensureOwner([shopId, customerId, at]))
    const created = (await c.query(insertItem([shopId, customerId, productId, variantId, at]))).rowCount === 1
    let count = 0
    if (created) {
      if (extras.has('statements')) {
        count = (await c.query<{ n: number }>(adjustAndCount([1, at, shopId, customerId]))).rows[0]?.n ?? 0
        await c.query(outboxIfTaken([shopId, `floor_${++outboxIds}`, 'wishlist.item.added', JSON.stringify({ customerId, productId }), at]))
      } else count = (await c.query<{ item_count: number }>(adjustCount([1, at, shopId, customerId]))).rows[0]?.item_count ?? 0
      await c.query(recordFact([shopId, 'add', customerId, productId, at]))
    }
    return { created, count }
  })
  const item = { productId, variantId, handle: null, metadata: null, addedAt: new Date(at).toISOString() }
  return reply.code(result.created ? 201 : 200).send({ ok: true, data: { created: result.created, item, count: result.count } })
})

app.delete<{ Params: { productId: string } }>('/v1/wishlists/me/items/:productId', async (request) => {
  const { shopId, customerId } = await customerOf(request.headers.authorization)
  const at = Date.now()
  const result = await transaction(async (c) => {
    if (extras.has('statements')) await c.query(lockOwner([shopId, customerId]))
    const removed = (await c.query(deleteItem([shopId, customerId, request.params.productId]))).rowCount === 1
    let count = 0
    if (removed) {
      if (extras.has('statements')) {
        count = (await c.query<{ n: number }>(adjustAndCount([-1, at, shopId, customerId]))).rows[0]?.n ?? 0
        await c.query(
          outboxIfTaken([
            shopId,
            `floor_${++outboxIds}`,
            'wishlist.item.removed',
            JSON.stringify({ customerId, productId: request.params.productId }),
            at,
          ]),
        )
      } else count = (await c.query<{ item_count: number }>(adjustCount([-1, at, shopId, customerId]))).rows[0]?.item_count ?? 0
      await c.query(recordFact([shopId, 'remove', customerId, request.params.productId, at]))
    }
    return { removed, count }
  })
  return { ok: true, data: result }
})

process.send?.({ listening: await app.listen({ port: 0, host: '127.0.0.1' }) })
const stop = () => {
  void app.close().then(async () => {
    await pool.end()
    process.exit(0)
  })
}
process.on('SIGTERM', stop)
// The bench that started it has ended, however (its IPC channel closed): stop with it.
process.on('disconnect', stop)
