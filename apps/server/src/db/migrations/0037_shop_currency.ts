import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The shop's currency (`shops.currency`): an ISO 4217 code, or null when the shop has none
 * yet. The merchant sets it (`PATCH /v1/admin/settings`, the CLI); a Shopify shop gets its
 * store currency at install when it has none. Shopper notifications carry it with the price.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema.alterTable('shops').addColumn('currency', 'text').execute()
}
