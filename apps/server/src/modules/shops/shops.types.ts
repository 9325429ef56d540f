import type { Plan } from '../../db/schema.js'
import type { StorefrontStrings } from '../../lib/page-strings.js'

export interface ShopSettings {
  multi_wishlist_enabled: boolean
  reviews_auto_approve: boolean
  share_link_ttl_days: number
  remove_on_purchase: boolean
  /** Days before an order in which a held or signalled product counts as wishlist-influenced (1..90, default 30). */
  attribution_window_days: number
  /** Hours in which a shopper gets at most one notification per product and signal (1..720, default 24). */
  notification_cooldown_hours: number
  /** Notifications a shopper gets at most in any 24 hours (1..50, default 3). */
  notifications_per_day: number
  /** Days after an add not bought when its reminder is due (1..90, default 7). */
  reminder_after_days: number
  /** The shop's currency, an ISO 4217 code (lib/money.ts, CURRENCY_CODES); null when none is set (default). */
  currency: string | null
  /** The merchant's texts of the pages the service renders for shoppers, by language and string key (null: the shipped texts). */
  storefront_strings: StorefrontStrings | null
}

export interface Shop {
  id: string
  domain: string
  plan: Plan
  storefrontKey: string
  settings: ShopSettings
  createdAt: number
  /** Shopify app mode: when the app was uninstalled; null while installed (and for shops outside Shopify). */
  uninstalledAt: number | null
  /** Shopify app mode: the shop's numeric id at Shopify once known (Admin API at install, or its first `app/uninstalled`); null before. */
  shopifyShopId: string | null
}

export const SETTING_NAMES = [
  'multi_wishlist_enabled',
  'reviews_auto_approve',
  'share_link_ttl_days',
  'remove_on_purchase',
  'attribution_window_days',
  'notification_cooldown_hours',
  'notifications_per_day',
  'reminder_after_days',
  'currency',
] as const satisfies readonly (keyof ShopSettings)[]
