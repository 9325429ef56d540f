import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * What Shopify's webhooks are checked against (docs/shopify.md, "Webhooks that prove themselves"):
 * - `shops.shopify_shop_id`: the shop's numeric id at Shopify, from its first `app/uninstalled`
 *   body (later: from the Admin API at install); `shop/redact` must name it, and an order's
 *   `order_status_url` must carry it. Null until known.
 * - `catalog_products.source_updated_at`: the platform's own `updated_at` of the product state
 *   the catalog holds (milliseconds), so that an update delivered late, or replayed, is not
 *   applied over a newer one. Null when the update that wrote the row gave none.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema.alterTable('shops').addColumn('shopify_shop_id', 'text').execute()
  await db.schema.alterTable('catalog_products').addColumn('source_updated_at', 'bigint').execute()
}
