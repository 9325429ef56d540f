import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * Where a shop's storefront serves the service's pages, and the language of a review
 * invitation (docs/shopify.md, "Paths and languages"):
 *
 * - `storefront_paths`: per shop, the path of the app proxy on the shop's domain as the
 *   signed `path_prefix` of its last proxied request named it (the merchant may change the
 *   proxy's subpath), the shop's primary language once Shopify told it, and the path last
 *   written to the app's metafield that the theme extension reads. A shop without a row has
 *   the default path.
 * - `review_invitations.locale`: the buyer's language from the order (Shopify's
 *   `customer_locale`, the intake's `locale`); null when the order did not say.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('storefront_paths')
    .addColumn('shop_id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('proxy_path', 'text', (c) => c.notNull())
    .addColumn('primary_locale', 'text')
    .addColumn('published_path', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.alterTable('review_invitations').addColumn('locale', 'text').execute()
}
