import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { NewShopRow, ShopRow, ShopUpdate } from '../../db/schema.js'
import type { StorefrontStrings } from '../../lib/page-strings.js'
import type { Shop } from './shops.types.js'

/** The stored overrides (checked when written); a value that is not an object reads as none. */
function storedStrings(text: string | null | undefined): StorefrontStrings | null {
  if (text === null || text === undefined) return null
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as StorefrontStrings) : null
  } catch {
    return null
  }
}

export function toShop(row: ShopRow): Shop {
  return {
    id: row.id,
    domain: row.domain,
    plan: row.plan,
    storefrontKey: row.storefront_key,
    createdAt: row.created_at,
    uninstalledAt: row.uninstalled_at === null || row.uninstalled_at === undefined ? null : Number(row.uninstalled_at),
    shopifyShopId: row.shopify_shop_id ?? null,
    settings: {
      multi_wishlist_enabled: row.multi_wishlist_enabled === 1,
      reviews_auto_approve: row.reviews_auto_approve === 1,
      share_link_ttl_days: row.share_link_ttl_days,
      remove_on_purchase: row.remove_on_purchase === 1,
      attribution_window_days: row.attribution_window_days ?? 30,
      notification_cooldown_hours: row.notification_cooldown_hours ?? 24,
      notifications_per_day: row.notifications_per_day ?? 3,
      reminder_after_days: row.reminder_after_days ?? 7,
      currency: row.currency ?? null,
      storefront_strings: storedStrings(row.storefront_strings),
    },
  }
}

/** Shops: the tenant table itself, so a shop is found by its id, or globally by its domain or storefront key. */
export const shopsRepo = {
  async byId(db: Db, shopId: string): Promise<Shop | undefined> {
    const row = await db.selectFrom('shops').selectAll().where('id', '=', shopId).executeTakeFirst()
    return row && toShop(row)
  },
  async byDomain(db: Db, domain: string): Promise<Shop | undefined> {
    const row = await db.selectFrom('shops').selectAll().where('domain', '=', domain).executeTakeFirst()
    return row && toShop(row)
  },
  async byStorefrontKey(db: Db, key: string): Promise<Shop | undefined> {
    const row = await db.selectFrom('shops').selectAll().where('storefront_key', '=', key).executeTakeFirst()
    return row && toShop(row)
  },
  async domainTaken(db: Db, domain: string): Promise<boolean> {
    return (await db.selectFrom('shops').select('id').where('domain', '=', domain).executeTakeFirst()) !== undefined
  },
  async insert(db: Db, row: NewShopRow): Promise<void> {
    await db.insertInto('shops').values(row).execute()
  },
  /** The shop's Shopify id, and `currency` when the shop has none yet (a merchant's own choice is kept), in one statement. */
  async setShopifyShop(db: Db, shopId: string, shopifyShopId: string, currency: string | null, at: number): Promise<Shop | undefined> {
    const row = await db
      .updateTable('shops')
      .set({
        shopify_shop_id: shopifyShopId,
        updated_at: at,
        ...(currency === null ? {} : { currency: sql<string>`coalesce(currency, ${currency})` }),
      })
      .where('id', '=', shopId)
      .returningAll()
      .executeTakeFirst()
    return row && toShop(row)
  },
  async update(db: Db, shopId: string, patch: ShopUpdate): Promise<Shop | undefined> {
    const row = await db.updateTable('shops').set(patch).where('id', '=', shopId).returningAll().executeTakeFirst()
    return row && toShop(row)
  },
}
