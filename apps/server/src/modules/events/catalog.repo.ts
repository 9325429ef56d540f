/** What the intake knows about a shop's products (catalog_products) and orders. Every query is scoped by shop. */
import type { Db } from '../../db/types.js'
import { backendOf, lockedForUpdate } from '../../db/dialect.js'
import type { VariantState } from './product-signals.js'

export interface CatalogState {
  handle: string | null
  title: string | null
  imageUrl: string | null
  variants: VariantState[]
  /** The platform's `updated_at` of this state (ms), when an update gave one. */
  sourceUpdatedAt: number | null
}

export const catalogRepo = {
  /** The last known state, locked until commit on PostgreSQL so concurrent updates of one product compare in turn. */
  async lockProduct(db: Db, shopId: string, productId: string): Promise<CatalogState | undefined> {
    const q = db
      .selectFrom('catalog_products')
      .select(['handle', 'title', 'image_url', 'variants', 'source_updated_at'])
      .where('shop_id', '=', shopId)
      .where('product_id', '=', productId)
    const row = await lockedForUpdate(q, backendOf(db)).executeTakeFirst()
    if (!row) return undefined
    const sourceUpdatedAt = row.source_updated_at === null ? null : Number(row.source_updated_at)
    return {
      handle: row.handle,
      title: row.title,
      imageUrl: row.image_url,
      variants: JSON.parse(row.variants) as VariantState[],
      sourceUpdatedAt,
    }
  },

  async upsertProduct(db: Db, shopId: string, productId: string, state: CatalogState, at: number): Promise<void> {
    const values = {
      handle: state.handle,
      title: state.title,
      image_url: state.imageUrl,
      default_variant_id: state.variants[0]?.variant_id ?? null,
      variants: JSON.stringify(state.variants),
      source_updated_at: state.sourceUpdatedAt,
      updated_at: at,
    }
    await db
      .insertInto('catalog_products')
      .values({ shop_id: shopId, product_id: productId, ...values })
      .onConflict((oc) => oc.columns(['shop_id', 'product_id']).doUpdateSet(values))
      .execute()
  },

  /** Forgets the product: its next update is a first sight again. Wishlist items that hold it stay. */
  async deleteProduct(db: Db, shopId: string, productId: string): Promise<void> {
    await db.deleteFrom('catalog_products').where('shop_id', '=', shopId).where('product_id', '=', productId).execute()
  },

  /** Records the shop's order; false when it was recorded before (the platform may send an order again). */
  async recordOrder(db: Db, shopId: string, orderId: string, occurredAt: number, at: number): Promise<boolean> {
    const inserted = await db
      .insertInto('orders')
      .values({ shop_id: shopId, order_id: orderId, occurred_at: occurredAt, created_at: at })
      .onConflict((oc) => oc.doNothing())
      .returning('order_id')
      .execute()
    return inserted.length > 0
  },
}
