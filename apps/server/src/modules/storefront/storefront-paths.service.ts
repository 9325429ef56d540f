/**
 * Where a shop's storefront serves the service's pages (`storefront_paths`, migration 0029):
 * the app proxy's path on the shop's domain as its last signed request named it, the shop's
 * primary language once known, and the path last published to the theme extension. A shop
 * without a row serves them under the default path.
 */
import type { Db } from '../../db/types.js'
import type { StorefrontPathsTable } from '../../db/schema.js'

export type StorefrontPaths = StorefrontPathsTable

export const storefrontPaths = {
  get(db: Db, shopId: string): Promise<StorefrontPaths | undefined> {
    return db.selectFrom('storefront_paths').selectAll().where('shop_id', '=', shopId).executeTakeFirst()
  },

  /** Records the proxy's path (a change of path leaves the rest as it was). */
  async setProxyPath(db: Db, shopId: string, proxyPath: string, at: number): Promise<void> {
    await db
      .insertInto('storefront_paths')
      .values({ shop_id: shopId, proxy_path: proxyPath, primary_locale: null, published_path: null, updated_at: at })
      .onConflict((oc) => oc.column('shop_id').doUpdateSet({ proxy_path: proxyPath, updated_at: at }))
      .execute()
  },

  /** What Shopify was told and answered: the path now in the app's metafield, the shop's primary language. */
  async setPublished(db: Db, shopId: string, published: { path: string; primaryLocale: string | null }, at: number): Promise<void> {
    await db
      .updateTable('storefront_paths')
      .set({ published_path: published.path, primary_locale: published.primaryLocale, updated_at: at })
      .where('shop_id', '=', shopId)
      .execute()
  },
}
