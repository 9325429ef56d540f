import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Wishlist pages are newest first with ties broken by product id, so the page index gets
 * product_id as its last column: `ORDER BY added_at DESC, product_id DESC LIMIT n` is then
 * one backward range scan of the owner's list on both backends, with no sort.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema.dropIndex('wishlist_items_page').execute()
  await db.schema
    .createIndex('wishlist_items_page')
    .on('wishlist_items')
    .columns(['shop_id', 'owner_type', 'owner_id', 'list_id', 'added_at', 'product_id'])
    .execute()
}
