/** How much of a shop's catalog the service knows (catalog_products, kept by the events intake), for the setup guide. */
import type { Db } from '../../db/types.js'

export const catalogStatusRepo = {
  /** The products known of the shop, and when the newest of them was last updated (ms; null with none). */
  async summary(db: Db, shopId: string): Promise<{ products: number; updatedAt: number | null }> {
    const row = await db
      .selectFrom('catalog_products')
      .select((eb) => [eb.fn.countAll<number | string>().as('products'), eb.fn.max('updated_at').as('updated_at')])
      .where('shop_id', '=', shopId)
      .executeTakeFirstOrThrow()
    return { products: Number(row.products), updatedAt: row.updated_at === null ? null : Number(row.updated_at) }
  },
}
