/**
 * PROVISIONAL shapes, transcribed from SPEC.md + DECISIONS.md, for routes that the server
 * on this branch does not have yet (they are being built on other branches). They are
 * used ONLY as the fallback of `ResponseData`/`RequestBody`/`RequestQuery` in types.ts:
 * as soon as a route appears in the generated OpenAPI document, its generated type wins
 * and the entry here is dead. Delete entries as their routes land.
 */

type Timestamp = string

export interface PendingItem {
  productId: string
  variantId: string | null
  handle?: string
  metadata?: Record<string, unknown>
  addedAt: Timestamp
}
export interface PendingList {
  wishlistId: string
  name: string
  itemCount: number
  createdAt: Timestamp
  updatedAt: Timestamp
}
export interface PendingGuestItem {
  product_id: string
  handle?: string
  added_at?: Timestamp
}
export interface PendingImportItem {
  customer_id: string
  product_id: string
  variant_id?: string
  handle?: string
  added_at?: Timestamp
  metadata?: Record<string, unknown>
}
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
export interface PendingReview {
  id: number
  productId: string
  customerName: string
  rating: number
  title: string
  body: string
  photos: string[]
  verifiedPurchase: boolean
  helpfulCount: number
  replyBody: string | null
  repliedAt: Timestamp | null
  createdAt: Timestamp
}
export type PendingPeriod = '7d' | '14d' | '30d' | '90d' | '1y' | 'all'
export type PendingReviewSort = 'newest' | 'oldest' | 'highest' | 'lowest' | 'most_helpful'

/** Fallbacks keyed by `"METHOD path"` (the OpenAPI path template). */
export interface Pending {
  'get /v1/wishlists/{customerId}': {
    query: { limit?: number; offset?: number; wishlist_id?: string }
    data: { items: PendingItem[]; count: number; total: number; has_more: boolean }
  }
  'post /v1/wishlists/{customerId}/items': {
    query: { wishlist_id?: string }
    body: { product_id: string; variant_id?: string; handle?: string; metadata?: Record<string, unknown> }
    data: { item: PendingItem; count: number }
  }
  'delete /v1/wishlists/{customerId}/items/{productId}': {
    query: { wishlist_id?: string; by?: 'handle' }
    data: { removed: boolean; count: number }
  }
  'post /v1/wishlists/{customerId}/items/bulk-delete': {
    query: { wishlist_id?: string }
    body: { product_ids?: string[]; handles?: string[] }
    data: { removed_count: number; count: number }
  }
  'post /v1/wishlists/{customerId}/merge': {
    body: { guest_items: PendingGuestItem[]; guest_id?: string }
    data: { merged_count: number; skipped_count?: number; items: PendingItem[]; count: number }
  }
  'post /v1/wishlists/{customerId}/items/move': {
    body: { product_id: string; from: string; to: string }
    data: { moved: boolean }
  }
  'get /v1/wishlists/{customerId}/lists': { data: { wishlists: PendingList[] } }
  'post /v1/wishlists/{customerId}/lists': { body: { name: string }; data: { wishlist: PendingList } }
  'put /v1/wishlists/{customerId}/lists/{listId}': { body: { name: string }; data: { updated: boolean } }
  'delete /v1/wishlists/{customerId}/lists/{listId}': { data: { deleted: boolean } }
  'get /v1/wishlists/{customerId}/share': { query: { wishlist_id?: string }; data: { share_url: string; expires_at: Timestamp } }
  'delete /v1/wishlists/{customerId}/share': { query: { wishlist_id?: string }; data: { revoked: boolean } }
  'get /v1/wishlists/shared/{shareToken}': {
    data: {
      name: string
      items: { productId: string; variantId: string | null; addedAt: Timestamp }[]
      count: number
      created_at: Timestamp
      expires_at: Timestamp
    }
  }
  'post /v1/wishlists/import': {
    body: { items: PendingImportItem[]; dry_run?: boolean }
    data: { customers: number; imported: number; skipped: number; dry_run: boolean }
  }
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
  'get /api/v1/products/{productId}/reviews': {
    query: {
      page?: number
      per_page?: number
      sort?: PendingReviewSort
      rating?: number
      verified?: boolean
      with_photos?: boolean
    }
    data: { data: PendingReview[]; page: number; perPage: number; total: number; hasMore: boolean }
  }
  'get /api/v1/products/{productId}/reviews/summary': {
    data: {
      productId: string
      reviewCount: number
      averageRating: number | null
      ratingDistribution: Record<'1' | '2' | '3' | '4' | '5', number>
      verifiedCount: number
      withPhotosCount: number
      bestRating: number
      worstRating: number
    }
  }
  'get /api/v1/reviews/{id}': { data: PendingReview }
  'post /api/v1/reviews': {
    body: {
      productId: string
      customerEmail: string
      customerName: string
      rating: number
      title?: string
      body: string
      photos?: string[]
    }
    data: { id: number; status: 'pending' | 'approved' }
  }
  'get /api/v1/admin/reviews': {
    query: { status?: 'pending' | 'approved' | 'rejected'; product_id?: string; page?: number; per_page?: number }
    data: {
      data: (PendingReview & { customerEmail: string | null; status: 'pending' | 'approved' | 'rejected' })[]
      page: number
      perPage: number
      total: number
      hasMore: boolean
    }
  }
  'post /api/v1/reviews/{id}/approve': { data: PendingReview & { status: string } }
  'post /api/v1/reviews/{id}/reject': { data: PendingReview & { status: string } }
  'put /api/v1/reviews/{id}/reply': { body: { body: string }; data: PendingReview }
  'delete /api/v1/reviews/{id}/reply': { data: PendingReview }
  'delete /api/v1/reviews/{id}': { data: { deleted: boolean } }
  'put /api/v1/reviews/{id}/helpful': { data: { helpfulCount: number } }
  'delete /api/v1/reviews/{id}/helpful': { data: { helpfulCount: number } }
}
