/**
 * Public shapes of the SDK, every one derived from the generated OpenAPI types
 * (src/generated/openapi.d.ts): a route the server does not have types as `never`.
 */
import type { HttpMethod, RequestBody, RequestQuery, ResponseData } from './openapi-helpers.js'

/** `data` of the success response of `"method /path"`. */
export type Data<K extends string> = K extends `${infer M extends HttpMethod} ${infer P}` ? ResponseData<P, M> : never
/** JSON body of `"method /path"`. */
export type Body<K extends string> = K extends `${infer M extends HttpMethod} ${infer P}` ? RequestBody<P, M> : never
/** Query parameters of `"method /path"`. */
export type Query<K extends string> = K extends `${infer M extends HttpMethod} ${infer P}` ? RequestQuery<P, M> : never

// Auth and admin
export type TokenRequest = Body<'post /v1/auth/token'>
export type TokenResponse = Data<'post /v1/auth/token'>
export type Shop = Data<'get /v1/admin/shop'>
export type ShopSettings = Data<'patch /v1/admin/settings'>
export type SettingsPatch = Body<'patch /v1/admin/settings'>
export type ApiKeyList = Data<'get /v1/admin/api-keys'>
export type ApiKeyInfo = ApiKeyList['apiKeys'][number]
export type CreateApiKeyInput = NonNullable<Body<'post /v1/admin/api-keys'>>
export type CreatedApiKey = Data<'post /v1/admin/api-keys'>

// Wishlist items
export type WishlistPage = Data<'get /v1/wishlists/{customerId}'>
export type WishlistItem = WishlistPage['items'][number]
/** Options of `wishlist.get`: the list, `limit` (1..200) and `offset`. */
export type WishlistQuery = Omit<Query<'get /v1/wishlists/{customerId}'>, 'wishlist_id'> & {
  /** A list id from `lists.list()`; the default list when omitted. */
  wishlistId?: string
  /**
   * The API's spelling of `wishlistId`, still accepted.
   * @deprecated Use `wishlistId`; `wishlist_id` will be removed in the next minor version.
   */
  wishlist_id?: string
}
export type AddItemInput = Body<'post /v1/wishlists/{customerId}/items'>
export type AddItemResult = Data<'post /v1/wishlists/{customerId}/items'>
export type RemoveItemResult = Data<'delete /v1/wishlists/{customerId}/items/{productId}'>
/** PATCH …/items/{productId}: `quantity` (1..99), `note` (≤ 280 characters; null clears), `priority`, `variant_id`. */
export type UpdateItemInput = Body<'patch /v1/wishlists/{customerId}/items/{productId}'>
export type UpdateItemResult = Data<'patch /v1/wishlists/{customerId}/items/{productId}'>
/** `low` | `normal` | `high`. */
export type ItemPriority = WishlistItem['priority']
export type BulkDeleteInput = Body<'post /v1/wishlists/{customerId}/items/bulk-delete'>
export type BulkDeleteResult = Data<'post /v1/wishlists/{customerId}/items/bulk-delete'>
export type MergeInput = Body<'post /v1/wishlists/{customerId}/merge'>
export type GuestItem = NonNullable<MergeInput['guest_items']>[number]
export type MergeResult = Data<'post /v1/wishlists/{customerId}/merge'>
export type MoveInput = Body<'post /v1/wishlists/{customerId}/items/move'>
export type MoveResult = Data<'post /v1/wishlists/{customerId}/items/move'>

// Lists
export type ListsResult = Data<'get /v1/wishlists/{customerId}/lists'>
export type WishlistList = ListsResult['wishlists'][number]
export type CreateListResult = Data<'post /v1/wishlists/{customerId}/lists'>
export type RenameListResult = Data<'put /v1/wishlists/{customerId}/lists/{listId}'>
export type DeleteListResult = Data<'delete /v1/wishlists/{customerId}/lists/{listId}'>

// Sharing and import
export type ShareLink = Data<'get /v1/wishlists/{customerId}/share'>
export type RevokeShareResult = Data<'delete /v1/wishlists/{customerId}/share'>
export type SharedWishlist = Data<'get /v1/wishlists/shared/{shareToken}'>
export type ImportInput = Body<'post /v1/wishlists/import'>
export type ImportItem = ImportInput['items'][number]
export type ImportResult = Data<'post /v1/wishlists/import'>

// Analytics, webhooks, events, privacy
export type AnalyticsOverview = Data<'get /v1/analytics/overview'>
export type AnalyticsPeriodQuery = Query<'get /v1/analytics/overview'>
export type TopProducts = Data<'get /v1/analytics/top-products'>
export type TopProductsQuery = Query<'get /v1/analytics/top-products'>
export type ProductStats = Data<'get /v1/analytics/product/{productId}'>
export type DailyStats = Data<'get /v1/analytics/daily'>
export type DailyQuery = Query<'get /v1/analytics/daily'>
/** What the wishlist sold over a period (orders, revenue per currency, rates). */
export type Conversions = Data<'get /v1/admin/analytics/conversions'>
export type ConversionsQuery = Query<'get /v1/admin/analytics/conversions'>
/** An amount in one currency: a decimal string with the currency's minor-unit digits. */
export type Money = Conversions['revenueInfluenced'][number]
export type CreateWebhookInput = Body<'post /v1/webhooks'>
export type CreatedWebhook = Data<'post /v1/webhooks'>
export type WebhookList = Data<'get /v1/webhooks'>
export type DeleteWebhookResult = Data<'delete /v1/webhooks/{webhookId}'>
export type WebhookDeliveries = Data<'get /v1/webhooks/{webhookId}/deliveries'>
export type WebhookDeliveriesQuery = Query<'get /v1/webhooks/{webhookId}/deliveries'>
export type WebhookTestResult = Data<'post /v1/webhooks/{webhookId}/test'>
export type EventsInput = Body<'post /v1/events'>
export type EventsResult = Data<'post /v1/events'>
export type CustomerExport = Data<'get /v1/admin/customers/{customerId}/export'>
export type CustomerErasure = Data<'delete /v1/admin/customers/{customerId}'>

// Shopify app mode (the server answers 404 there unless it runs as a Shopify app)
export type ShopifySessionResponse = Data<'post /v1/auth/shopify-session'>
export type PrivacyRequestList = Data<'get /v1/admin/privacy-requests'>
/** A `customers/data_request` received from Shopify. */
export type PrivacyRequest = PrivacyRequestList['privacyRequests'][number]
export type PrivacyRequestExport = Data<'get /v1/admin/privacy-requests/{id}/export'>
/** The embedded admin's setup guide: catalog, plan and the theme editor link to the app embed. */
export type PlatformSetup = Data<'get /v1/admin/platform-setup'>
/** The shop's catalog and its sync from Shopify, as the catalog sync request answers it. */
export type CatalogStatus = Data<'post /v1/admin/platform-setup/catalog-sync'>
/** The embedded admin's plan page: the shop's plan as Shopify Billing says, its newest subscription, the plans' prices. */
export type ShopifyBilling = Data<'get /v1/platforms/shopify/billing'>
export type ChooseShopifyPlanInput = Body<'post /v1/platforms/shopify/billing/subscription'>
export type ChosenShopifyPlan = Data<'post /v1/platforms/shopify/billing/subscription'>

// Reviews
export type ReviewPage = Data<'get /api/v1/products/{productId}/reviews'>
export type Review = ReviewPage['data'][number]
export type ReviewQuery = Query<'get /api/v1/products/{productId}/reviews'>
export type ReviewSummary = Data<'get /api/v1/products/{productId}/reviews/summary'>
export type SubmitReviewInput = Body<'post /api/v1/reviews'>
export type SubmitReviewResult = Data<'post /api/v1/reviews'>
export type AdminReviewPage = Data<'get /api/v1/admin/reviews'>
/** A review in the moderation view (every status, the customer's e-mail and id). */
export type AdminReview = AdminReviewPage['data'][number]
/** `GET /api/v1/reviews/{id}`: the public view, or the moderation view for an admin token. */
export type ReviewDetail = Data<'get /api/v1/reviews/{id}'>
export type AdminReviewQuery = Query<'get /api/v1/admin/reviews'>
export type ModeratedReview = Data<'post /api/v1/reviews/{id}/approve'>
export type RepliedReview = Data<'put /api/v1/reviews/{id}/reply'>
export type ReplyInput = Body<'put /api/v1/reviews/{id}/reply'>
export type DeleteReviewResult = Data<'delete /api/v1/reviews/{id}'>
export type HelpfulResult = Data<'put /api/v1/reviews/{id}/helpful'>
/** What a review invitation link shows the storefront (no credentials). */
export type ReviewInvitationLookup = Data<'get /api/v1/review-invitations/{token}'>
export type ReviewInvitationList = Data<'get /v1/admin/review-invitations'>
/** A review invitation as the merchant sees it (and as the `review.requested` webhook carries it). */
export type ReviewInvitation = ReviewInvitationList['invitations'][number]
export type ReviewInvitationQuery = Query<'get /v1/admin/review-invitations'>

// Notifications (Klaviyo, Shopify Flow): channels and contacts
export type ChannelsQuery = NonNullable<Query<'get /v1/admin/channels'>>
export type Channels = Data<'get /v1/admin/channels'>
export type KlaviyoChannel = Data<'put /v1/admin/channels/klaviyo'>
export type MerchantContactInput = Body<'put /v1/admin/customers/{customerId}/contact'>
export type Contact = Data<'put /v1/admin/customers/{customerId}/contact'>
export type ShopperContactInput = Body<'put /v1/wishlists/{customerId}/contact'>
