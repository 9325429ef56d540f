/**
 * TypeBox schemas of Shopify app mode's own routes (docs/api.md, "Shopify app mode"), and
 * their operation docs.
 */
import { Type } from 'typebox'
import { type OperationDocs, Timestamp } from '../../lib/http-schemas.js'
import { MAX_PRIVACY_REQUESTS } from './privacy-requests.repo.js'

export const DeliveryAnswer = Type.Object({
  result: Type.Union([Type.Literal('processed'), Type.Literal('duplicate'), Type.Literal('ignored')], {
    description:
      '`duplicate`: this topic and event id were processed before (or, for shop/redact, the shop is already gone); `ignored`: a topic the service does not take, or a delivery that must not act (a shop the app does not know, an older product body, an `app/uninstalled` while the app is still installed, …)',
  }),
})

export const SessionRequest = Type.Object(
  {
    session_token: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'The session token App Bridge gives the embedded app (`id_token`)',
    }),
  },
  { additionalProperties: false },
)
export const SessionToken = Type.Object({
  token: Type.String(),
  expires_in: Type.Integer(),
  token_type: Type.Literal('Bearer'),
  scope: Type.Literal('admin'),
})

export const PrivacyRequest = Type.Object(
  { id: Type.String(), customerId: Type.String(), email: Type.Union([Type.String(), Type.Null()]), receivedAt: Timestamp },
  { additionalProperties: false },
)
export const PrivacyRequestParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) })

export const shopifyOperations: OperationDocs = {
  'GET /proxy/shared/:shareToken': {
    operationId: 'proxySharedWishlistPage',
    summary: "A shared wishlist as a page of the shop's theme (app proxy)",
    description:
      'Signed by Shopify like every `/proxy` request. Answers `Content-Type: application/liquid`, which Shopify renders inside the theme: the items with title, image, price and link from `all_products[handle]` (items saved without a handle show their ids). ' +
      'Expired and unknown links answer 200 with a page saying so.',
    responses: { 200: 'Liquid source of the page' },
  },
  'POST /v1/platforms/shopify/webhooks': {
    operationId: 'receiveShopifyWebhook',
    summary: 'Receive a Shopify webhook',
    description:
      'Signed with `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the raw body with the app secret); the shop from `X-Shopify-Shop-Domain`, the topic from `X-Shopify-Topic`. ' +
      'A processed delivery is recorded under its topic and `X-Shopify-Event-Id` (else `X-Shopify-Webhook-Id`) and under the SHA-256 of its topic and raw body: either seen before answers 200 `duplicate` and changes nothing. An unknown topic, or a shop the app does not know, answers 200 `ignored` and writes nothing: no webhook creates or installs a shop. ' +
      'Before the body is read: a missing or malformed HMAC header (base64 of 32 bytes) or a domain that is not `*.myshopify.com` is 401 INVALID_SIGNATURE; a client address with 4 bodies unfinished gets 429 RATE_LIMITED; when the bytes received of unfinished bodies reach SHOPIFY_WEBHOOK_BUFFER_MB the answer is 503 UNAVAILABLE with `Retry-After`; a body arriving slower than 16 KiB/s after its first second is 408 REQUEST_TIMEOUT. ' +
      "Shopify signs the body only, so each topic's body must have that topic's shape (`products/create|update` `{id, variants}`, `products/delete` `{id}`, `orders/create` `{id, line_items}`, `customers/redact` `{shop_domain, customer: {id}, orders_to_redact}`, `customers/data_request` `{shop_domain, customer: {id}, data_request: {id}}`, `shop/redact` `{shop_id, shop_domain}`, `app/uninstalled` `{id, myshopify_domain}`, `app_subscriptions/update` `{app_subscription: {admin_graphql_api_id, status}}`) and a `shop_domain` or `myshopify_domain` must be the header's: else 400 VALIDATION_ERROR, nothing written and the event id not recorded. " +
      "An order whose `order_status_url` names another Shopify shop id than the shop's (read from the Admin API first when not known yet) is 400 VALIDATION_ERROR; without that URL, a shop holding an Admin API token must find the order there (`order(id:)`), else 400 VALIDATION_ERROR. " +
      "`app/uninstalled` for a shop holding an Admin API token is confirmed with Shopify first: while the token works the app is installed and the body stale, answered `ignored` with a warning logged, even for a body seen before; a token Shopify refuses (401, 403) lets the uninstall act, even for a body seen before. `app_subscriptions/update` never sets a plan from its body: it has the shop's subscriptions read from the Admin API, whose ACTIVE one sets the plan (Free once the one that set it ended). " +
      'When these checks cannot reach Shopify (or it throttles or fails), 503 UNAVAILABLE with `Retry-After` and nothing recorded: Shopify delivers the webhook again. ' +
      'Product bodies apply in `updated_at` order (an older one is `ignored`). For an uninstalled shop only the compliance topics act. ' +
      "`shop/redact` erases only a shop uninstalled for SHOPIFY_SHOP_REDACT_MIN_HOURS (48) whose Shopify id (from its `app/uninstalled`) is the body's `shop_id`; otherwise it answers `ignored` and logs a warning. Bodies up to 5 MiB (413 beyond).",
    responses: { 200: 'Receive a Shopify webhook' },
  },
  'POST /v1/auth/shopify-session': {
    operationId: 'exchangeShopifySessionToken',
    summary: 'Exchange a Shopify session token for an admin token of its shop',
    description:
      "The embedded dashboard signs in with the session token Shopify admin gives it (HS256 with the app secret; `aud` the app's client id, `dest` `https://{shop}`, `iss` `https://{shop}/admin`; `exp` and `nbf` with 5 s of leeway). " +
      'An unknown shop is created; an uninstalled one is installed again, unless the token was issued before the uninstall (403 FORBIDDEN). Any failed check is 401 INVALID_SIGNATURE.',
    responses: { 200: 'Exchange a Shopify session token for an admin token of its shop' },
  },
  'GET /v1/admin/privacy-requests': {
    operationId: 'listPrivacyRequests',
    summary: 'Customer data requests received from Shopify, newest first',
    description: `Each \`customers/data_request\` webhook is recorded here; the merchant downloads the customer's export from \`/v1/admin/privacy-requests/{id}/export\`. At most the ${MAX_PRIVACY_REQUESTS} newest.`,
    responses: { 200: 'Customer data requests received from Shopify, newest first' },
  },
  'GET /v1/admin/privacy-requests/:id/export': {
    operationId: 'exportPrivacyRequest',
    summary: 'The export of the customer a privacy request names',
    description: "The same document as `GET /v1/admin/customers/{customerId}/export` with the request's e-mail address, made when asked.",
    responses: { 200: 'The export of the customer a privacy request names' },
  },
}
