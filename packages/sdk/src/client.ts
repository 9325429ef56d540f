/**
 * `createWishlistClient()`: one typed method per endpoint of the wishlist service (/v1)
 * and the reviews interface (/api/v1). Shapes come from the server's OpenAPI document.
 */
import { type ClientOptions, fillPath, HttpCore } from './http.js'
import type * as T from './types.js'

/** The owner of a wishlist: a customer id, the guest id in guest mode, or `me`. */
export type Owner = string

/** Options shared by the item endpoints that act on one list. */
export interface ListScope {
  /** A list id from {@link WishlistClient.lists}; the default list when omitted. */
  wishlistId?: string
}

const listQuery = (scope?: ListScope) => (scope?.wishlistId === undefined ? {} : { wishlist_id: scope.wishlistId })

/** `wishlist.get`'s options as the API spells them: `wishlistId` (or the deprecated `wishlist_id`) becomes `wishlist_id`. */
function wishlistPageQuery(query: T.WishlistQuery): object {
  const { wishlistId, wishlist_id: legacy, ...rest } = query
  if (wishlistId !== undefined && legacy !== undefined && wishlistId !== legacy) {
    throw new TypeError(`wishlist.get: wishlistId '${wishlistId}' and the deprecated wishlist_id '${legacy}' name different lists`)
  }
  const list = wishlistId ?? legacy
  return list === undefined ? rest : { ...rest, wishlist_id: list }
}

/** Creates a client. See the package README for the credential modes. */
export function createWishlistClient(options: ClientOptions) {
  const http = new HttpCore(options)
  const get = <R>(path: string, query?: object) => http.request<R>('GET', path, { query })
  const post = <R>(path: string, body?: unknown, query?: object) => http.request<R>('POST', path, { body, query })
  const put = <R>(path: string, body?: unknown) => http.request<R>('PUT', path, { body })
  const patch = <R>(path: string, body?: unknown) => http.request<R>('PATCH', path, { body })
  const del = <R>(path: string, query?: object) => http.request<R>('DELETE', path, { query })
  const owner = (customerId: Owner) => ({ customerId })

  return {
    /** The transport (credentials, retries); exposed for advanced use. */
    http,

    auth: {
      /** POST /v1/auth/token: exchange an API key for an admin token, or a customer token with `customer_id`. */
      token: (body: T.TokenRequest): Promise<T.TokenResponse> => http.exchange(body),
      /**
       * POST /v1/auth/shopify-session: exchange a Shopify session token (the embedded admin's
       * `id_token`) for an admin token of its shop; no credentials sent.
       */
      shopifySession: (sessionToken: string): Promise<T.ShopifySessionResponse> =>
        http.request('POST', '/v1/auth/shopify-session', { body: { session_token: sessionToken }, auth: false }),
      /** The bearer token the client currently uses (minting one with API-key credentials). */
      currentToken: (): Promise<string | undefined> => http.bearerToken(),
    },

    wishlist: {
      /**
       * GET /v1/wishlists/{customerId}: one page of a list, newest first; `{ wishlistId, limit, offset }`
       * (the default list when `wishlistId` is omitted).
       */
      get: (customerId: Owner, query: T.WishlistQuery = {}): Promise<T.WishlistPage> =>
        get(fillPath('/v1/wishlists/{customerId}', owner(customerId)), wishlistPageQuery(query)),
      /** POST …/items: add (or update) a product; 201 when new, 200 when it was there. */
      add: (customerId: Owner, item: T.AddItemInput, scope?: ListScope): Promise<T.AddItemResult> =>
        post(fillPath('/v1/wishlists/{customerId}/items', owner(customerId)), item, listQuery(scope)),
      /**
       * PATCH …/items/{productId}: change quantity, note (null clears), priority or variant; `by: 'handle'` picks the item by handle; 404
       * when absent.
       */
      update: (
        customerId: Owner,
        productIdOrHandle: string,
        input: T.UpdateItemInput,
        opts: ListScope & { by?: 'handle' } = {},
      ): Promise<T.UpdateItemResult> =>
        http.request('PATCH', fillPath('/v1/wishlists/{customerId}/items/{productId}', { customerId, productId: productIdOrHandle }), {
          body: input,
          query: { ...listQuery(opts), ...(opts.by === undefined ? {} : { by: opts.by }) },
        }),
      /** DELETE …/items/{productId}; `by: 'handle'` removes by product handle. */
      remove: (customerId: Owner, productIdOrHandle: string, opts: ListScope & { by?: 'handle' } = {}): Promise<T.RemoveItemResult> =>
        del(fillPath('/v1/wishlists/{customerId}/items/{productId}', { customerId, productId: productIdOrHandle }), {
          ...listQuery(opts),
          ...(opts.by === undefined ? {} : { by: opts.by }),
        }),
      /** POST …/items/bulk-delete: up to 100 product ids and handles together. */
      bulkDelete: (customerId: Owner, input: T.BulkDeleteInput, scope?: ListScope): Promise<T.BulkDeleteResult> =>
        post(fillPath('/v1/wishlists/{customerId}/items/bulk-delete', owner(customerId)), input, listQuery(scope)),
      /** POST …/merge: merge a guest's items (and server-side guest list with `guest_id`) into a customer's list (the default one unless `wishlistId`). */
      merge: (customerId: Owner, input: T.MergeInput, scope?: ListScope): Promise<T.MergeResult> =>
        post(fillPath('/v1/wishlists/{customerId}/merge', owner(customerId)), input, listQuery(scope)),
      /** POST …/items/move: move a product between two lists. */
      move: (customerId: Owner, input: T.MoveInput): Promise<T.MoveResult> =>
        post(fillPath('/v1/wishlists/{customerId}/items/move', owner(customerId)), input),
      /**
       * PUT …/contact: the shopper's own e-mail for notifications, with their consent: `consent: true`
       * and `consent_text`, the sentence they agreed to (stored with it).
       */
      setContact: (customerId: Owner, input: T.ShopperContactInput): Promise<T.Contact> =>
        put(fillPath('/v1/wishlists/{customerId}/contact', owner(customerId)), input),
      /** DELETE …/contact: the shopper's e-mail forgotten; nothing is sent to them until they give one again (404 when none). */
      deleteContact: (customerId: Owner): Promise<{ deleted: true }> =>
        del(fillPath('/v1/wishlists/{customerId}/contact', owner(customerId))),
      /** POST /v1/wishlists/import (admin, growth+): up to 500 items; `dry_run` validates only. */
      import: (input: T.ImportInput): Promise<T.ImportResult> => post('/v1/wishlists/import', input),
    },

    lists: {
      /** GET …/lists: the default list first, then by creation. */
      list: (customerId: Owner): Promise<T.ListsResult> => get(fillPath('/v1/wishlists/{customerId}/lists', owner(customerId))),
      /** POST …/lists: a new named list (at most 20 per owner). */
      create: (customerId: Owner, name: string): Promise<T.CreateListResult> =>
        post(fillPath('/v1/wishlists/{customerId}/lists', owner(customerId)), { name }),
      /** PUT …/lists/{listId}: rename. */
      rename: (customerId: Owner, listId: string, name: string): Promise<T.RenameListResult> =>
        put(fillPath('/v1/wishlists/{customerId}/lists/{listId}', { customerId, listId }), { name }),
      /** DELETE …/lists/{listId}: deletes the list and its items (not the default list). */
      delete: (customerId: Owner, listId: string): Promise<T.DeleteListResult> =>
        del(fillPath('/v1/wishlists/{customerId}/lists/{listId}', { customerId, listId })),
    },

    share: {
      /** GET …/share: the list's active share link, created when none is active. */
      get: (customerId: Owner, scope?: ListScope): Promise<T.ShareLink> =>
        get(fillPath('/v1/wishlists/{customerId}/share', owner(customerId)), listQuery(scope)),
      /** DELETE …/share: revoke the active link. */
      revoke: (customerId: Owner, scope?: ListScope): Promise<T.RevokeShareResult> =>
        del(fillPath('/v1/wishlists/{customerId}/share', owner(customerId)), listQuery(scope)),
      /** GET /v1/wishlists/shared/{shareToken}: public read, no credentials sent. */
      read: (shareToken: string): Promise<T.SharedWishlist> =>
        http.request('GET', fillPath('/v1/wishlists/shared/{shareToken}', { shareToken }), { auth: false }),
    },

    analytics: {
      /** GET /v1/analytics/overview (admin). */
      overview: (query: T.AnalyticsPeriodQuery = {}): Promise<T.AnalyticsOverview> => get('/v1/analytics/overview', query),
      /** GET /v1/analytics/top-products (admin). */
      topProducts: (query: T.TopProductsQuery = {}): Promise<T.TopProducts> => get('/v1/analytics/top-products', query),
      /** GET /v1/analytics/product/{productId} (admin). */
      product: (productId: string): Promise<T.ProductStats> => get(fillPath('/v1/analytics/product/{productId}', { productId })),
      /** GET /v1/analytics/daily (admin). */
      daily: (query: T.DailyQuery = {}): Promise<T.DailyStats> => get('/v1/analytics/daily', query),
      /** GET /v1/admin/analytics/conversions (admin): orders and revenue the wishlist influenced. */
      conversions: (query: T.ConversionsQuery = {}): Promise<T.Conversions> => get('/v1/admin/analytics/conversions', query),
    },

    webhooks: {
      /** POST /v1/webhooks: the response carries the signing `secret`, shown only here. */
      create: (input: T.CreateWebhookInput): Promise<T.CreatedWebhook> => post('/v1/webhooks', input),
      /** GET /v1/webhooks. */
      list: (): Promise<T.WebhookList> => get('/v1/webhooks'),
      /** DELETE /v1/webhooks/{webhookId}. */
      delete: (webhookId: string): Promise<T.DeleteWebhookResult> => del(fillPath('/v1/webhooks/{webhookId}', { webhookId })),
      /** GET /v1/webhooks/{webhookId}/deliveries (newest first; `limit` 1..100, default 50). */
      deliveries: (webhookId: string, query: T.WebhookDeliveriesQuery = {}): Promise<T.WebhookDeliveries> =>
        get(fillPath('/v1/webhooks/{webhookId}/deliveries', { webhookId }), query),
      /** POST /v1/webhooks/{webhookId}/test: sends a signed `webhook.test` event. */
      test: (webhookId: string): Promise<T.WebhookTestResult> => post(fillPath('/v1/webhooks/{webhookId}/test', { webhookId })),
    },

    events: {
      /** POST /v1/events (admin): platform events (cart adds, product updates, orders). */
      send: (input: T.EventsInput): Promise<T.EventsResult> => post('/v1/events', input),
    },

    admin: {
      /** GET /v1/admin/shop. */
      shop: (): Promise<T.Shop> => get('/v1/admin/shop'),
      /** PATCH /v1/admin/settings: returns the full settings. */
      updateSettings: (input: T.SettingsPatch): Promise<T.ShopSettings> => patch('/v1/admin/settings', input),
      /** GET /v1/admin/api-keys. */
      apiKeys: (): Promise<T.ApiKeyList> => get('/v1/admin/api-keys'),
      /** POST /v1/admin/api-keys: the secret is returned only here. */
      createApiKey: (input: T.CreateApiKeyInput = {}): Promise<T.CreatedApiKey> => post('/v1/admin/api-keys', input),
      /** DELETE /v1/admin/api-keys/{keyId}: revokes the key and every token minted from it. */
      deleteApiKey: (keyId: string): Promise<{ deleted: true }> => del(fillPath('/v1/admin/api-keys/{keyId}', { keyId })),
      /** POST /v1/admin/storefront-key/rotate. */
      rotateStorefrontKey: (): Promise<{ storefrontKey: string }> => post('/v1/admin/storefront-key/rotate'),
      /** GET /v1/admin/customers/{customerId}/export: everything held about one customer. */
      exportCustomer: (customerId: string): Promise<T.CustomerExport> =>
        get(fillPath('/v1/admin/customers/{customerId}/export', { customerId })),
      /** DELETE /v1/admin/customers/{customerId}: erase a customer. */
      eraseCustomer: (customerId: string): Promise<T.CustomerErasure> => del(fillPath('/v1/admin/customers/{customerId}', { customerId })),
      /** GET /v1/admin/review-invitations: invitations of the shop's orders by `order_id` and/or `email`, newest first. */
      reviewInvitations: (query: T.ReviewInvitationQuery = {}): Promise<T.ReviewInvitationList> =>
        get('/v1/admin/review-invitations', query),
      /** GET /v1/admin/privacy-requests: Shopify's `customers/data_request` notifications, newest first. */
      privacyRequests: (): Promise<T.PrivacyRequestList> => get('/v1/admin/privacy-requests'),
      /** GET /v1/admin/privacy-requests/{id}/export: the export of that request's customer. */
      privacyRequestExport: (id: string): Promise<T.PrivacyRequestExport> =>
        get(fillPath('/v1/admin/privacy-requests/{id}/export', { id })),
      /** GET /v1/admin/platform-setup (Shopify app mode): where the shop's setup stands, for the embedded admin's setup guide. */
      platformSetup: (): Promise<T.PlatformSetup> => get('/v1/admin/platform-setup'),
      /** POST /v1/admin/platform-setup/catalog-sync (Shopify app mode): reads the shop's catalog from Shopify again, in the background; the sync's state (the running one, if any). */
      syncCatalog: (): Promise<T.CatalogStatus> => post('/v1/admin/platform-setup/catalog-sync'),
      /** GET /v1/platforms/shopify/billing (Shopify app mode): the shop's plan, confirmed with Shopify Billing, and the plans' prices. */
      shopifyBilling: (): Promise<T.ShopifyBilling> => get('/v1/platforms/shopify/billing'),
      /** POST /v1/platforms/shopify/billing/subscription: a paid plan's `confirmationUrl` to approve, or Free at once. */
      chooseShopifyPlan: (input: T.ChooseShopifyPlanInput): Promise<T.ChosenShopifyPlan> =>
        post('/v1/platforms/shopify/billing/subscription', input),
      /** GET /v1/admin/channels: the notification channels (Klaviyo, Shopify Flow), their state and counts per signal for `period`. */
      channels: (query: T.ChannelsQuery = {}): Promise<T.Channels> => get('/v1/admin/channels', query),
      /** PUT /v1/admin/channels/klaviyo: connects Klaviyo with a private key, checked with Klaviyo first (400 CHANNEL_KEY_REJECTED). */
      connectKlaviyo: (privateKey: string): Promise<T.KlaviyoChannel> => put('/v1/admin/channels/klaviyo', { private_key: privateKey }),
      /** DELETE /v1/admin/channels/klaviyo: forgets the key; 404 when not connected. */
      disconnectKlaviyo: (): Promise<{ deleted: true }> => del('/v1/admin/channels/klaviyo'),
      /** PUT /v1/admin/customers/{customerId}/contact: the e-mail of the merchant's customer record (source `merchant`). */
      setCustomerContact: (customerId: string, input: T.MerchantContactInput): Promise<T.Contact> =>
        put(fillPath('/v1/admin/customers/{customerId}/contact', { customerId }), input),
      /** GET /v1/admin/export/wishlists.csv as text. */
      exportWishlistsCsv: (): Promise<string> => http.request('GET', '/v1/admin/export/wishlists.csv', { text: true }),
    },

    reviews: {
      /**
       * GET /api/v1/products/{productId}/reviews: approved reviews, paged. Browsers may keep it
       * for 5 minutes; `{fresh: true}` asks the service (after a vote or a submission).
       */
      list: (productId: string, query: T.ReviewQuery = {}, opts: { fresh?: boolean } = {}): Promise<T.ReviewPage> =>
        http.request('GET', fillPath('/api/v1/products/{productId}/reviews', { productId }), { query, ...opts }),
      /** GET /api/v1/products/{productId}/reviews/summary: counts and average (schema.org AggregateRating); `{fresh: true}` as `list`. */
      summary: (productId: string, opts: { fresh?: boolean } = {}): Promise<T.ReviewSummary> =>
        http.request('GET', fillPath('/api/v1/products/{productId}/reviews/summary', { productId }), opts),
      /**
       * GET /api/v1/reviews/{id}: an approved review in the public view; with an admin token,
       * a review of any status in the moderation view (`reviews.admin.get` narrows to it).
       */
      get: (id: number): Promise<T.ReviewDetail> => get(fillPath('/api/v1/reviews/{id}', { id })),
      /**
       * POST /api/v1/reviews: 201 with `{id, status}`. With `invitation` (the token of a review
       * invitation link) the review is verified and linked to the invitation's order customer.
       */
      submit: (input: T.SubmitReviewInput): Promise<T.SubmitReviewResult> => post('/api/v1/reviews', input),
      /** GET /api/v1/review-invitations/{token}: `{productId, expiresAt, usable}`, no credentials sent. */
      invitation: (token: string): Promise<T.ReviewInvitationLookup> =>
        http.request('GET', fillPath('/api/v1/review-invitations/{token}', { token }), { auth: false }),
      /** PUT /api/v1/reviews/{id}/helpful: vote (idempotent). */
      voteHelpful: (id: number): Promise<T.HelpfulResult> => put(fillPath('/api/v1/reviews/{id}/helpful', { id })),
      /** DELETE /api/v1/reviews/{id}/helpful: take the vote back (idempotent). */
      unvoteHelpful: (id: number): Promise<T.HelpfulResult> => del(fillPath('/api/v1/reviews/{id}/helpful', { id })),
      /** Moderation (admin token). */
      admin: {
        /** GET /api/v1/reviews/{id} with an admin token: the moderation view, any status. */
        get: (id: number): Promise<T.AdminReview> => get(fillPath('/api/v1/reviews/{id}', { id })),
        /** GET /api/v1/admin/reviews. */
        list: (query: T.AdminReviewQuery = {}): Promise<T.AdminReviewPage> => get('/api/v1/admin/reviews', query),
        /** POST /api/v1/reviews/{id}/approve. */
        approve: (id: number): Promise<T.ModeratedReview> => post(fillPath('/api/v1/reviews/{id}/approve', { id })),
        /** POST /api/v1/reviews/{id}/reject. */
        reject: (id: number): Promise<T.ModeratedReview> => post(fillPath('/api/v1/reviews/{id}/reject', { id })),
        /** PUT /api/v1/reviews/{id}/reply. */
        reply: (id: number, body: string): Promise<T.RepliedReview> => put(fillPath('/api/v1/reviews/{id}/reply', { id }), { body }),
        /** DELETE /api/v1/reviews/{id}/reply. */
        deleteReply: (id: number): Promise<T.RepliedReview> => del(fillPath('/api/v1/reviews/{id}/reply', { id })),
        /** DELETE /api/v1/reviews/{id}. */
        delete: (id: number): Promise<T.DeleteReviewResult> => del(fillPath('/api/v1/reviews/{id}', { id })),
      },
    },
  }
}

/** The client returned by {@link createWishlistClient}. */
export type WishlistClient = ReturnType<typeof createWishlistClient>
