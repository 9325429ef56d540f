/**
 * wishlist-service-sdk: typed client of the wishlist service and the reviews interface.
 * React bindings live in `wishlist-service-sdk/react`.
 */
export { type CartItemLike, type CartLine, toCartLines } from './cart.js'
export { createWishlistClient, type ListScope, type Owner, type WishlistClient } from './client.js'
export {
  type ApiKeyCredentials,
  type ClientOptions,
  type Credentials,
  createGuestId,
  fillPath,
  type RetryOptions,
  type StorefrontCredentials,
  type TokenCredentials,
} from './http.js'
export {
  CLIENT_ERROR_CODES,
  type ErrorCode,
  isWishlistApiError,
  type KnownErrorCode,
  parseRetryAfter,
  SERVER_ERROR_CODES,
  WishlistApiError,
} from './errors.js'
export type { paths, webhooks } from './generated/openapi.js'
export { WEBHOOK_EVENTS, type WebhookEventName } from './generated/webhook-events.js'
export { CURRENCY_CODES, type CurrencyCode } from './generated/settings.js'
// The body of each webhook delivery (`WishlistItemAddedEvent` …) and their union `WebhookEvent`, generated from the document's `webhooks`.
export type * from './generated/webhook-events.js'
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookBody,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './webhooks.js'
export type * from './types.js'
