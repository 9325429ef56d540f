import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * A product's title in the catalog (from `product.updated` and Shopify's product webhooks),
 * so the dashboard's top products name their products; null until an update gives one.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema.alterTable('catalog_products').addColumn('title', 'text').execute()
}
