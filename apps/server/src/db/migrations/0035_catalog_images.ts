import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * The product's image in the catalog (`catalog_products.image_url`): a product update's
 * `image_url` (Shopify: the product's featured image), kept like its title, so notifications
 * carry the picture of the product they are about.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema.alterTable('catalog_products').addColumn('image_url', 'text').execute()
}
