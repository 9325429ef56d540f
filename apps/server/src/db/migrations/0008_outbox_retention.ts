import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The webhook worker deletes outbox rows once it has fanned them out into deliveries (each
 * delivery holds the exact body it sends), instead of marking them `dispatched`: before,
 * the outbox kept a row per wishlist event forever. This removes the rows earlier versions
 * marked. The `dispatched` column stays and readers still skip rows marked 1, so rows that an
 * instance of an earlier version marks during a rolling upgrade are not sent twice.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await (db as Kysely<{ outbox: { dispatched: number } }>).deleteFrom('outbox').where('dispatched', '<>', 0).execute()
}
