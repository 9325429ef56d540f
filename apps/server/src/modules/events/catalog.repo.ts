/** What the intake knows about a shop's products (catalog_products). Every query is scoped by shop. */
import type { Transaction } from 'kysely'
import type { Backend, Db } from '../../db/types.js'
import { lockedForUpdate } from '../../db/dialect.js'
import type { Database } from '../../db/schema.js'
import type { VariantState } from './product-signals.js'

export interface CatalogState {
  handle: string | null
  title: string | null
  variants: VariantState[]
  /** The platform's `updated_at` of this state (ms), when an update gave one. */
  sourceUpdatedAt: number | null
}

export function createCatalogRepo(backend: Backend) {
  return {
    /** The last known state, locked until commit on PostgreSQL so concurrent updates of one product compare in turn. */
    async lockProduct(trx: Transaction<Database>, shopId: string, productId: string): Promise<CatalogState | undefined> {
      const q = trx.selectFrom('catalog_products').select(['handle', 'title', 'variants', 'source_updated_at']).where('shop_id', '=', shopId).where('product_id', '=', productId)
      const row = await lockedForUpdate(q, backend).executeTakeFirst()
      if (!row) return undefined
      const sourceUpdatedAt = row.source_updated_at === null ? null : Number(row.source_updated_at)
      return { handle: row.handle, title: row.title, variants: JSON.parse(row.variants) as VariantState[], sourceUpdatedAt }
    },

    async upsertProduct(trx: Transaction<Database>, shopId: string, productId: string, state: CatalogState, at: number): Promise<void> {
      const values = {
        handle: state.handle,
        title: state.title,
        default_variant_id: state.variants[0]?.variant_id ?? null,
        variants: JSON.stringify(state.variants),
        source_updated_at: state.sourceUpdatedAt,
        updated_at: at,
      }
      await trx
        .insertInto('catalog_products')
        .values({ shop_id: shopId, product_id: productId, ...values })
        .onConflict((oc) => oc.columns(['shop_id', 'product_id']).doUpdateSet(values))
        .execute()
    },

    /** Forgets the product: its next update is a first sight again. Wishlist items that hold it stay. */
    async deleteProduct(executor: Db | Transaction<Database>, shopId: string, productId: string): Promise<void> {
      await executor.deleteFrom('catalog_products').where('shop_id', '=', shopId).where('product_id', '=', productId).execute()
    },
  }
}
