/**
 * The Kysely `Database` interface: the one source of row types for both backends.
 * Times are integer epoch milliseconds; booleans are 0/1 integers; JSON is text.
 * Every table is keyed by `shop_id` first so it can be distributed by shop (Citus).
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

export type Plan = 'free' | 'starter' | 'growth' | 'scale'
export type KeyScope = 'admin' | 'customer'

/** Shops are the tenant (distribution) table itself; lookups by domain and storefront key are global. */
export interface ShopsTable {
  id: string
  domain: string
  plan: Plan
  storefront_key: string
  multi_wishlist_enabled: number
  reviews_auto_approve: number
  share_link_ttl_days: number
  remove_on_purchase: number
  created_at: number
  updated_at: number
}

export interface ApiKeysTable {
  shop_id: string
  id: string
  name: string
  scope: KeyScope
  secret_hash: string
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
}

/**
 * Transactional outbox: every state change that SPEC lists as a webhook event is written
 * here in the same transaction as the change; the webhook worker fans it out to endpoints.
 */
export interface OutboxTable {
  shop_id: string
  id: string
  event: string
  payload: string
  occurred_at: number
  created_at: number
  /** 0 until the webhook worker has created a delivery per subscribed endpoint. */
  dispatched: number
}

/** Append-only analytics facts, written in the same transaction as the change. */
export interface AnalyticsEventsTable {
  shop_id: string
  id: Generated<number>
  type: AnalyticsFactType
  owner_type: OwnerType
  owner_id: string
  product_id: string
  occurred_at: number
}

export type OwnerType = 'customer' | 'guest'
export type AnalyticsFactType = 'add' | 'remove' | 'cart_add' | 'share'

export interface Database {
  shops: ShopsTable
  api_keys: ApiKeysTable
  outbox: OutboxTable
  analytics_events: AnalyticsEventsTable
}

export type ShopRow = Selectable<ShopsTable>
export type NewShopRow = Insertable<ShopsTable>
export type ShopUpdate = Updateable<ShopsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
