import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The worker now deletes outbox rows once fanned out instead of marking them `dispatched`;
 * this removes the rows earlier versions marked. The column stays, and readers skip rows
 * marked 1, so nothing an older instance marks during a rolling upgrade is sent twice.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await (db as Kysely<{ outbox: { dispatched: number } }>).deleteFrom('outbox').where('dispatched', '<>', 0).execute()
}
