import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Two nullable columns for the storefront:
 * - `catalog_products.title`: a product's title (from `product.updated` and Shopify's product
 *   webhooks), so the dashboard's top products name their products; null until an update gives one.
 * - `shops.storefront_strings`: the merchant's overrides of the app proxy pages' texts, JSON
 *   `{"<locale>": {"<key>": "<text>"}}`; null when there are none.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema.alterTable('catalog_products').addColumn('title', 'text').execute()
  await db.schema.alterTable('shops').addColumn('storefront_strings', 'text').execute()
}
