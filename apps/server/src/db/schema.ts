/**
 * The Kysely `Database` interface, for both backends. Times are epoch milliseconds, booleans
 * 0/1, JSON is text; every table is keyed by `shop_id` first (distributable by shop, Citus).
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely'

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
  /** Days before an order in which a held or signalled product counts as wishlist-influenced (1..90; migration 0016). */
  attribution_window_days: ColumnType<number, number | undefined, number>
  created_at: number
  updated_at: number
  /** Shopify app mode: when the app was uninstalled (docs/api.md); null while installed. */
  uninstalled_at: ColumnType<number | null, number | null | undefined, number | null>
  storefront_strings: ColumnType<string | null, string | null | undefined, string | null>
  /** Shopify app mode: the shop's numeric id at Shopify, once known (0022); null before. */
  shopify_shop_id: ColumnType<string | null, string | null | undefined, string | null>
  /** Hours in which a shopper gets at most one notification per product and signal (1..720, default 24; 0034). */
  notification_cooldown_hours: ColumnType<number, number | undefined, number>
  /** Notifications a shopper gets at most in any 24 hours (1..50, default 3; 0034). */
  notifications_per_day: ColumnType<number, number | undefined, number>
  /** Days after an add not bought when its reminder is due (1..90, default 7; 0034). */
  reminder_after_days: ColumnType<number, number | undefined, number>
  /** The shop's currency, an ISO 4217 code (0037); null when none is set. */
  currency: ColumnType<string | null, string | null | undefined, string | null>
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

/** Transactional outbox (modules/events/outbox.ts): webhook events some endpoint takes, written with their change. */
export interface OutboxTable {
  shop_id: string
  id: string
  event: string
  payload: string
  occurred_at: number
  created_at: number
  /** Always 0: fanned-out rows are deleted (migration 0008); readers skip the 1s older versions wrote. */
  dispatched: number
}

/** Product signals queued by an events request, one row per product (modules/events/product-fan-out.ts). */
export interface OutboxFanOutsTable {
  shop_id: string
  id: string
  product_id: string
  handle: string | null
  /** JSON array of the coalesced signals (`QueuedSignal`), in the order they were found. */
  signals: string
  /** How many of `signals` the worker has written to the outbox so far. */
  written: number
  /** How many of `signals` have made their notifications (0034). */
  notified: ColumnType<number, number | undefined, number>
  /** The last holder the next signal has made notifications for, JSON `[owner_type, owner_id]`; null: none yet (0034). */
  notify_after: ColumnType<string | null, string | null | undefined, string | null>
  occurred_at: number
  created_at: number
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

/** Facts committed and not yet applied to the log and rollups (migration 0007). */
export type AnalyticsInboxTable = AnalyticsEventsTable

export type OwnerType = 'customer' | 'guest'
export type AnalyticsFactType = 'add' | 'remove' | 'cart_add' | 'share'

/**
 * The parent row of what an owner holds, created on the first write; writers lock it so
 * concurrent adds cannot pass the item limit. `item_count` counts all the owner's lists.
 */
export interface WishlistOwnersTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  item_count: number
  created_at: number
  updated_at: number
  /** Moved by triggers on every change a wishlist page shows (migration 0006); bigint, read as a number (connect.ts). */
  version: ColumnType<number, never, never>
}

/**
 * Named lists; the default list (`id = 'default'`) has a row only once renamed. `name_key`:
 * the name's `comparisonKey` (lib/text.ts), unique per owner.
 */
export interface WishlistListsTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  id: string
  name: string
  name_key: string
  created_at: number
  updated_at: number
}

export interface WishlistItemsTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  list_id: string
  product_id: string
  /** As given on add; null means "the catalog's default variant, resolved on read". */
  variant_id: string | null
  handle: string | null
  /** JSON text, at most 200 characters. */
  metadata: string | null
  added_at: number
  /** 1..99 (migration 0016). */
  quantity: ColumnType<number, number | undefined, number>
  /** Trimmed, at most 280 characters; null when unset. */
  note: ColumnType<string | null, string | null | undefined, string | null>
  priority: ColumnType<ItemPriority, ItemPriority | undefined, ItemPriority>
  /** When an order of the owner bought the product; null until then. */
  purchased_at: ColumnType<number | null, number | null | undefined, number | null>
}

export type ItemPriority = 'low' | 'normal' | 'high'

export interface ShareLinksTable {
  shop_id: string
  token: string
  owner_type: OwnerType
  owner_id: string
  list_id: string
  created_at: number
  expires_at: number
  revoked_at: number | null
}

/** What the events intake knows of a product; `variants`: JSON `[{variant_id, price, inventory_quantity}]`, the first the default. */
export interface CatalogProductsTable {
  shop_id: string
  product_id: string
  handle: string | null
  /** The product's title when an update gave one (0019). */
  title: string | null
  /** The product's image (an https or http URL) when an update gave one (0035). */
  image_url: ColumnType<string | null, string | null | undefined, string | null>
  default_variant_id: string | null
  variants: string
  updated_at: number
  /** The platform's `updated_at` of the state held, in ms, when the update gave one (0022). */
  source_updated_at: ColumnType<number | null, number | null | undefined, number | null>
}

/** docs/api.md, "Webhooks". `events` is a JSON array of event names; `secret` is `whsec_<base64>`. */
export interface WebhookEndpointsTable {
  shop_id: string
  id: string
  url: string
  events: string
  secret: string
  created_at: number
  /** Set when the receiver answered 410 Gone: no new deliveries, pending ones failed. */
  disabled_at: number | null
  disabled_reason: string | null
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

/**
 * One outbox message for one endpoint: `body` is the exact JSON every attempt sends, `id` the
 * `webhook-id` header; `locked_until`/`locked_by` the claim lease (it expires if its worker dies).
 */
export interface WebhookDeliveriesTable {
  shop_id: string
  id: string
  webhook_id: string
  message_id: string
  event: string
  body: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: number | null
  locked_until: number | null
  locked_by: string | null
  last_status_code: number | null
  last_error: string | null
  created_at: number
  updated_at: number
}

/** Every attempt, with the receiver's response body capped. */
export interface WebhookAttemptsTable {
  shop_id: string
  delivery_id: string
  attempt: number
  worker_id: string
  started_at: number
  duration_ms: number
  status_code: number | null
  error: string | null
  response_body: string | null
}

export type ReviewStatus = 'pending' | 'approved' | 'rejected'
export type ReviewVerification = 'customer_order' | 'invitation'

/**
 * Product reviews (docs/api.md, "Reviews"). `id` is a global auto id; `created_at` is whole
 * seconds (in ms) so the sort order matches the seconds-precision `createdAt` clients see.
 */
export interface ReviewsTable {
  id: Generated<number>
  shop_id: string
  product_id: string
  /** Lower-cased; null once erased (docs/api.md, "Privacy and export"). */
  customer_email: string | null
  customer_id: string | null
  customer_name: string
  rating: number
  title: string
  body: string
  /** JSON text: an array of https URLs. */
  photos: string
  has_photos: number
  verified: number
  /** How `verified` was proven: the linked customer's order, or a review invitation (migration 0013). */
  verified_by: ReviewVerification | null
  helpful_count: number
  status: ReviewStatus
  reply_body: string | null
  replied_at: number | null
  created_at: number
  updated_at: number
}

/** Per-product figures over approved reviews, kept in each review write's transaction (no counting on read). */
export interface ReviewAggregatesTable {
  shop_id: string
  product_id: string
  review_count: number
  rating_sum: number
  rating_1: number
  rating_2: number
  rating_3: number
  rating_4: number
  rating_5: number
  verified_count: number
  with_photos_count: number
  updated_at: number
}

export type VoterType = 'customer' | 'guest'

/** One helpful vote per voter per review. */
export interface ReviewVotesTable {
  shop_id: string
  review_id: number
  voter_type: VoterType
  voter_id: string
  /** Guest votes: a pseudonymous key of the voter's address (the per-address cap); null for customers. */
  client_key: string | null
  created_at: number
}

/** Products bought, by customer id and/or e-mail (from `order.created`): the source of `verifiedPurchase`. */
export interface PurchasesTable {
  shop_id: string
  product_id: string
  /** `customer:<id>` or `email:<lower-cased e-mail>`: one row per buyer identity and product. */
  buyer: string
  customer_id: string | null
  email: string | null
  created_at: number
}

/** Review invitations: a single-use token per product of an order, valid 90 days; its review is verified. */
export interface ReviewInvitationsTable {
  shop_id: string
  token: string
  order_id: string | null
  customer_id: string | null
  /** Lower-cased, as the order gave it. */
  email: string | null
  product_id: string
  created_at: number
  expires_at: number
  used_at: number | null
  review_id: number | null
  /** The buyer's language from the order (0029); null when the order did not say. */
  locale: ColumnType<string | null, string | null | undefined, string | null>
}

/** Where a shop's storefront serves the service's pages (0029; modules/storefront/storefront-paths.service.ts). */
export interface StorefrontPathsTable {
  shop_id: string
  /** The app proxy's path on the shop's domain (`/apps/wishlist`), from its last signed request. */
  proxy_path: string
  /** The shop's primary language as Shopify names it (`en`, `fr`, `pt-BR`); null until known. */
  primary_locale: string | null
  /** The path last written to the app's metafield the theme extension reads; null until written. */
  published_path: string | null
  updated_at: number
}

/** Analytics read models (modules/analytics/facts.ts); `day` is the UTC epoch day. */
export interface AnalyticsDailyTable {
  shop_id: string
  day: number
  adds: number
  removes: number
  /** Distinct owners with a wishlist event (add, remove, share) on this day. */
  shoppers: number
  /** Owners whose most recent wishlist event falls on this day (each owner counts on exactly one day). */
  last_seen: number
  /** Adds made on this day that the same owner later cart-added. */
  converted: number
  /** Orders of this day with a wishlist-influenced line (migration 0016; written by the events intake). */
  orders_influenced: ColumnType<number, number | undefined, number>
  lines_influenced: ColumnType<number, number | undefined, number>
  /** Items added on this day that the same owner later bought (counted once per item). */
  purchased: ColumnType<number, number | undefined, number>
  /** Influenced lines of this day's orders that a signal named within the window. */
  signal_back_in_stock: ColumnType<number, number | undefined, number>
  signal_price_dropped: ColumnType<number, number | undefined, number>
  signal_low_stock: ColumnType<number, number | undefined, number>
  /** Influenced lines of this day's orders whose customer a notification of the product was sent to within the window, per channel (0033). */
  channel_klaviyo: ColumnType<number, number | undefined, number>
  channel_flow: ColumnType<number, number | undefined, number>
  /**
   * Days from add to purchase of the items added on this day and since bought: `lag:count`
   * pairs, the lag in tenths of a day, `35:2,150:1`; null when none (migration 0020;
   * modules/analytics/purchase-lags.ts).
   */
  purchase_lags: ColumnType<string | null, string | null | undefined, string | null>
}

/** The per-(shop, day, owner) "seen" set behind `analytics_daily.shoppers`. */
export interface AnalyticsShopperDaysTable {
  shop_id: string
  day: number
  owner_type: OwnerType
  owner_id: string
}

/** Each owner's last day with a wishlist event, behind `analytics_daily.last_seen`. */
export interface AnalyticsShoppersTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  last_day: number
}

/** The distinct (owner, product) pairs held in any list, behind `analytics_product_holders`. */
export interface AnalyticsHoldingsTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  product_id: string
  /** When the pair became held (the first add fact of the hold; migration 0016). */
  held_since: ColumnType<number | null, number | null | undefined, number | null>
}

/** When an owner last stopped holding a product in any list (the attribution window looks back to it). */
export interface AnalyticsReleasesTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  product_id: string
  held_since: number | null
  released_at: number
  /** 1 once an order bought it after the release (counted in `purchased` once). */
  purchased: ColumnType<number, number | undefined, number>
}

export type SignalName = 'back_in_stock' | 'price_dropped' | 'low_stock'

/** Product signals of the events intake, whether or not a webhook took them. */
export interface AnalyticsSignalsTable {
  shop_id: string
  product_id: string
  at: number
  signal: SignalName
}

/** The order ids whose `order.created` was applied: a repeat applies once. */
export interface OrdersTable {
  shop_id: string
  order_id: string
  occurred_at: number
  created_at: number
}

/**
 * Wishlist-influenced revenue per day and currency, in the currency's minor units:
 * `amount_high` × 10^12 + `amount` (lib/money.ts, `splitAmount`; 0023).
 */
export interface AnalyticsRevenueDailyTable {
  shop_id: string
  day: number
  currency: string
  /** The sum's part below 10^12. */
  amount: number
  /** The sum's multiples of 10^12, at most AMOUNT_HIGH_MAX. */
  amount_high: ColumnType<number, number | undefined, number>
}

/** Influenced purchases and revenue per product and currency (`''`: lines without a price). */
export interface AnalyticsProductRevenueTable {
  shop_id: string
  product_id: string
  currency: string
  purchases: number
  /** As in analytics_revenue_daily: `amount_high` × 10^12 + `amount` minor units. */
  amount: number
  amount_high: ColumnType<number, number | undefined, number>
}

/** Influenced lines with a price per currency: the shop's most frequent currency. */
export interface AnalyticsCurrenciesTable {
  shop_id: string
  currency: string
  lines: number
}

/**
 * The shop's days-to-purchase histogram over its whole history: items bought `lag` tenths of
 * a day after their add, the sum of every day's `analytics_daily.purchase_lags` (migration 0028).
 */
export interface AnalyticsPurchaseLagTotalsTable {
  shop_id: string
  lag: number
  count: number
}

/** Distinct owners now holding each product. */
export interface AnalyticsProductHoldersTable {
  shop_id: string
  product_id: string
  holders: number
}

/** Adds not yet followed by a cart add of the same owner and product. */
export interface AnalyticsPendingAddsTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  product_id: string
  added_at: number
  day: number
  count: number
}

/** Shopify webhooks already processed: a redelivery of (topic, event id) changes nothing. */
export interface ShopifyWebhookReceiptsTable {
  shop_id: string
  topic: string
  event_id: string
  received_at: number
}

/** Shopify `customers/data_request` notifications, listed for the merchant with their export. */
export interface PrivacyRequestsTable {
  shop_id: string
  id: string
  customer_id: string
  email: string | null
  received_at: number
}

/**
 * A Shopify shop's Admin API tokens (platforms/shopify/admin-api.ts): sealed (AES-256-GCM,
 * `v1.` + base64url), never in clear; `generation` moves on at every write.
 */
export interface ShopifyAccessTokensTable {
  shop_id: string
  access_token: string
  access_expires_at: number | null
  refresh_token: string | null
  refresh_expires_at: number | null
  scope: string
  generation: number
  /** Until when an instance holds the claim to refresh them (null: nobody). */
  refresh_lease_until: number | null
  updated_at: number
}

/** A Shopify app subscription the service made for a shop (platforms/shopify/billing.ts). */
export interface ShopifySubscriptionsTable {
  shop_id: string
  /** Shopify's GID of it (`gid://shopify/AppSubscription/…`). */
  subscription_id: string
  /** The paid plan it charges for. */
  plan: Plan
  /** Shopify's AppSubscriptionStatus, as last read from the Admin API. */
  status: string
  created_at: number
  /** When it was first seen ACTIVE (null: never charged). */
  activated_at: number | null
  updated_at: number
}

/** What Shopify Flow last said of a shop's use of a wishlist trigger (0031, modules/notifications/flow.ts). */
export interface ShopifyFlowTriggersTable {
  shop_id: string
  /** The trigger's extension handle (`wishlist-flow-…`). */
  handle: string
  /** Whether the shop has an enabled workflow that starts with the trigger (0/1). */
  has_enabled_flow: number
  /** The lifecycle callback's `timestamp` (ms): a callback older than this one changes nothing. */
  status_at: number
  updated_at: number
}

/**
 * A merchant's notification channel (0030, modules/notifications/channels.repo.ts): its
 * credential sealed (AES-256-GCM, `v1.` + base64url), never in clear, and the last check of it.
 */
export interface NotificationChannelsTable {
  shop_id: string
  channel: 'klaviyo'
  secret: string
  /** The credential's last four characters, what the dashboard shows of it. */
  secret_last4: string
  connected_at: number
  checked_at: number
  check_state: 'valid' | 'invalid' | 'unreachable'
  check_error: string | null
  updated_at: number
}

/** The e-mail a shop knows for an owner, for notifications (0032, docs/notifications.md). */
export interface NotificationContactsTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  email: string
  /** `order`: an order of theirs; `merchant`: the merchant's customer record; `shopper`: typed in the widget with consent. */
  source: 'order' | 'merchant' | 'shopper'
  /** The consent text the shopper saw (source `shopper`). */
  consent_text: string | null
  consented_at: number
  updated_at: number
}

/** Owners who stopped every notification through the signed opt-out link (0032). */
export interface NotificationOptOutsTable {
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  opted_out_at: number
}

export type NotificationSignalName = 'back_in_stock' | 'price_drop' | 'low_stock' | 'reminder' | 'item_added'

/** A notification an owner was due (0032): queued for the channels, or suppressed by the frequency rules or an opt-out. */
export interface NotificationsTable {
  id: string
  shop_id: string
  owner_type: OwnerType
  owner_id: string
  signal: NotificationSignalName
  product_id: string
  variant_id: string | null
  /** JSON: the message's product part (title, URL, image, prices, inventory) as of the signal. */
  payload: string
  state: 'queued' | 'suppressed'
  reason: 'cooldown' | 'daily_cap' | 'opted_out' | null
  created_at: number
}

/** One notification through one channel (0032): leased and retried like webhook deliveries. */
export interface NotificationDeliveriesTable {
  id: string
  notification_id: string
  shop_id: string
  channel: 'klaviyo' | 'flow'
  state: 'pending' | 'sent' | 'failed' | 'skipped'
  attempts: ColumnType<number, number | undefined, number>
  next_attempt_at: number
  lease_owner: string | null
  lease_until: number | null
  last_error: string | null
  created_at: number
  sent_at: number | null
}

/** How far notifications made from a shop's wishlist adds have read them (0032), per kind. */
export interface NotificationCursorsTable {
  shop_id: string
  kind: 'item_added' | 'reminder'
  added_at: number
  /** The last item read at `added_at` (owner, list and product), for ties. */
  item_key: string
  updated_at: number
}

/** A profile deletion to ask of a channel for an erased shopper (0032), retried until taken. */
export interface NotificationErasuresTable {
  id: string
  shop_id: string
  channel: 'klaviyo'
  email: string | null
  external_id: string | null
  attempts: ColumnType<number, number | undefined, number>
  next_attempt_at: number
  lease_owner: string | null
  lease_until: number | null
  last_error: string | null
  created_at: number
}

/**
 * Who sends on a Klaviyo key (0036): the notification worker that holds it until `expires_at`.
 * `name` is the key's hash (the worker's limiter key); `shop_id` is always '' (a key may serve
 * several shops).
 */
export interface NotificationSendLeasesTable {
  shop_id: string
  name: string
  holder: string
  expires_at: number
}

/** A Shopify shop's catalog sync (0025): its state, the current or last run's counts, and the lease of the run that holds it. */
export interface ShopifyCatalogSyncsTable {
  shop_id: string
  state: 'running' | 'done' | 'failed'
  run_id: string
  lease_until: number
  products_read: number
  products_changed: number
  error: string | null
  started_at: number
  finished_at: number | null
}

export interface Database {
  shops: ShopsTable
  api_keys: ApiKeysTable
  outbox: OutboxTable
  outbox_fan_outs: OutboxFanOutsTable
  analytics_events: AnalyticsEventsTable
  analytics_inbox: AnalyticsInboxTable
  wishlist_owners: WishlistOwnersTable
  wishlist_lists: WishlistListsTable
  wishlist_items: WishlistItemsTable
  share_links: ShareLinksTable
  catalog_products: CatalogProductsTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  reviews: ReviewsTable
  review_aggregates: ReviewAggregatesTable
  review_votes: ReviewVotesTable
  purchases: PurchasesTable
  review_invitations: ReviewInvitationsTable
  storefront_paths: StorefrontPathsTable
  analytics_daily: AnalyticsDailyTable
  analytics_shopper_days: AnalyticsShopperDaysTable
  analytics_shoppers: AnalyticsShoppersTable
  analytics_holdings: AnalyticsHoldingsTable
  analytics_product_holders: AnalyticsProductHoldersTable
  analytics_pending_adds: AnalyticsPendingAddsTable
  analytics_releases: AnalyticsReleasesTable
  analytics_signals: AnalyticsSignalsTable
  orders: OrdersTable
  analytics_revenue_daily: AnalyticsRevenueDailyTable
  analytics_product_revenue: AnalyticsProductRevenueTable
  analytics_currencies: AnalyticsCurrenciesTable
  analytics_purchase_lag_totals: AnalyticsPurchaseLagTotalsTable
  shopify_webhook_receipts: ShopifyWebhookReceiptsTable
  privacy_requests: PrivacyRequestsTable
  shopify_access_tokens: ShopifyAccessTokensTable
  shopify_catalog_syncs: ShopifyCatalogSyncsTable
  shopify_subscriptions: ShopifySubscriptionsTable
  shopify_flow_triggers: ShopifyFlowTriggersTable
  notification_channels: NotificationChannelsTable
  notification_contacts: NotificationContactsTable
  notification_opt_outs: NotificationOptOutsTable
  notifications: NotificationsTable
  notification_deliveries: NotificationDeliveriesTable
  notification_cursors: NotificationCursorsTable
  notification_erasures: NotificationErasuresTable
  notification_send_leases: NotificationSendLeasesTable
}

export type ShopRow = Selectable<ShopsTable>
export type NewShopRow = Insertable<ShopsTable>
export type ShopUpdate = Updateable<ShopsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type ReviewRow = Selectable<ReviewsTable>
export type ReviewAggregateRow = Selectable<ReviewAggregatesTable>
export type ReviewInvitationRow = Selectable<ReviewInvitationsTable>
