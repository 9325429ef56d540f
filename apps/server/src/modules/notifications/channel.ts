/**
 * A shopper notification as every channel of the merchant's (Klaviyo, Shopify Flow) receives
 * it, and what a channel answers (docs/notifications.md). The signals come from the catalog
 * events (modules/events/product-signals.ts) and the shopper's own actions.
 */
export type NotificationSignal = 'back_in_stock' | 'price_drop' | 'low_stock' | 'reminder' | 'item_added'

export const NOTIFICATION_SIGNALS: readonly NotificationSignal[] = ['back_in_stock', 'price_drop', 'low_stock', 'reminder', 'item_added']

export interface NotificationMessage {
  id: string // unique per message; idempotency key where the channel supports one
  shopId: string
  signal: NotificationSignal
  occurredAt: number // ms since epoch
  shopper: { customerId: string; email: string }
  product: {
    productId: string
    variantId: string | null
    title: string | null
    url: string | null
    imageUrl: string | null
    price: string | null
    previousPrice: string | null
    currency: string | null
    inventoryQuantity: number | null
  }
  optOutUrl: string
}

export type SendResult = { ok: true } | { ok: false; permanent: boolean; retryAfterMs: number | null; reason: string } // permanent: bad key / invalid payload; else retry later

export interface NotificationChannel {
  readonly name: 'klaviyo' | 'flow'
  send(message: NotificationMessage): Promise<SendResult>
}
