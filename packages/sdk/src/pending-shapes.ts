/**
 * PROVISIONAL shapes, transcribed from SPEC.md + DECISIONS.md, for routes that the server
 * on this branch does not have yet (they are being built on other branches). They are
 * used ONLY as the fallback of `ResponseData`/`RequestBody`/`RequestQuery` in types.ts:
 * as soon as a route appears in the generated OpenAPI document, its generated type wins
 * and the entry here is dead. Delete entries as their routes land.
 */

type Timestamp = string

export type PendingWebhookEvent =
  | 'wishlist.item.added'
  | 'wishlist.item.removed'
  | 'wishlist.shared'
  | 'wishlist.product.back_in_stock'
  | 'wishlist.product.price_dropped'
  | 'wishlist.product.low_stock'
export interface PendingWebhook {
  webhookId: string
  url: string
  events: PendingWebhookEvent[]
  createdAt: Timestamp
}
export type PendingPeriod = '7d' | '14d' | '30d' | '90d' | '1y' | 'all'

/** Fallbacks keyed by `"METHOD path"` (the OpenAPI path template). */
export interface Pending {
  'get /v1/analytics/overview': {
    query: { period?: PendingPeriod }
    data: { totalWishlistedItems: number; activeShoppers: number; wishlistToCartRate: number }
  }
  'get /v1/analytics/top-products': { query: { limit?: number }; data: { products: { productId: string; wishlistCount: number }[] } }
  'get /v1/analytics/product/{productId}': { data: { wishlistCount: number } }
  'get /v1/analytics/daily': {
    query: { period?: PendingPeriod }
    data: {
      days: {
        date: string
        period: string
        items_added: number
        items_removed: number
        unique_shoppers: number
        cumulative_total: number
      }[]
    }
  }
  'post /v1/webhooks': { body: { url: string; events: PendingWebhookEvent[] }; data: PendingWebhook & { secret: string } }
  'get /v1/webhooks': { data: { webhooks: PendingWebhook[] } }
  'delete /v1/webhooks/{webhookId}': { data: { deleted: boolean } }
  'get /v1/webhooks/{webhookId}/deliveries': {
    data: {
      deliveries: {
        id: string
        event: string
        status: 'pending' | 'succeeded' | 'failed'
        attempts: number
        lastStatusCode: number | null
        nextAttemptAt: Timestamp | null
        createdAt: Timestamp
      }[]
    }
  }
  'post /v1/webhooks/{webhookId}/test': { data: Record<string, unknown> }
  'post /v1/events': { body: { events: ({ type: string } & Record<string, unknown>)[] }; data: { accepted: number } }
  'get /v1/admin/customers/{customerId}/export': { data: Record<string, unknown> }
  'delete /v1/admin/customers/{customerId}': { data: Record<string, unknown> }
}
