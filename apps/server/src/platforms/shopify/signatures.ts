/**
 * Shopify's four proofs, as Shopify documents them (docs/api.md, "Shopify app mode"):
 * the app proxy's `signature` query parameter, the `hmac` query parameter of the admin's
 * requests to the app (its embedded page's URL), a webhook's `X-Shopify-Hmac-Sha256` header
 * and the embedded admin's session token (session-token.ts). Each is keyed with the app's
 * client secret (SHOPIFY_API_SECRET); every comparison is constant-time.
 *
 * Written here rather than taken from `@shopify/shopify-api`: that library wants a runtime
 * adapter and an app configuration (scopes, host name) before its HMAC helpers work, checks
 * them asynchronously through WebCrypto, and brings its Admin API clients along; these are
 * a few lines. The proxy's replay window is that library's: 90 s.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** A shop's own domain, the only form Shopify signs: `{name}.myshopify.com`. */
const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]{0,59}\.myshopify\.com$/
export const isShopDomain = (s: string): boolean => SHOP_DOMAIN.test(s)

/** How far a proxy request's `timestamp` may be from the server clock (Shopify's own library allows 90 s). */
export const PROXY_MAX_SKEW_SECONDS = 90

const HEX_SHA256 = /^[0-9a-f]{64}$/

function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The app proxy's signature of a query: every parameter but `signature`, each written
 * `key=value` (the values of a repeated key joined by `,`, in the order sent), sorted,
 * concatenated with no separator; hex HMAC-SHA256 keyed with the secret.
 */
export function proxySignature(params: URLSearchParams, secret: string): string {
  const values = new Map<string, string[]>()
  for (const [key, value] of params) {
    if (key === 'signature') continue
    const list = values.get(key)
    if (list === undefined) values.set(key, [value])
    else list.push(value)
  }
  const message = [...values]
    .map(([key, list]) => `${key}=${list.join(',')}`)
    .sort()
    .join('')
  return createHmac('sha256', secret).update(message).digest('hex')
}

/** A query parameter sent exactly once; undefined when absent or repeated. */
function single(params: URLSearchParams, key: string): string | undefined {
  const all = params.getAll(key)
  return all.length === 1 ? all[0] : undefined
}

/** Whether `key` is sent once, as hex SHA-256, equal (constant-time) to the `expected` hex digest. */
function hexSignatureMatches(params: URLSearchParams, key: string, expected: () => string): boolean {
  const sent = single(params, key)
  return sent !== undefined && HEX_SHA256.test(sent) && constantTimeEqual(Buffer.from(expected(), 'hex'), Buffer.from(sent, 'hex'))
}

/** A signed query's `timestamp` (seconds), sent once and within PROXY_MAX_SKEW_SECONDS of `nowSeconds`; else undefined. */
function freshTimestamp(params: URLSearchParams, nowSeconds: number): number | undefined {
  const timestamp = single(params, 'timestamp')
  if (timestamp === undefined || !/^[0-9]{1,12}$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > PROXY_MAX_SKEW_SECONDS)
    return undefined
  return Number(timestamp)
}

/** A signed query's `shop`, sent once and a `*.myshopify.com` domain; else undefined. */
function shopOf(params: URLSearchParams): string | undefined {
  const shop = single(params, 'shop')
  return shop !== undefined && isShopDomain(shop) ? shop : undefined
}

/** What a verified proxy request proves. */
export interface ProxyProof {
  shop: string
  /** The logged-in shopper's customer id; null when nobody is logged in. */
  customerId: string | null
  /** Where the storefront reaches the proxy, e.g. `/apps/wishlist`. */
  pathPrefix: string
  /** When Shopify signed it: its `timestamp`, in seconds. */
  signedAt: number
}

const CUSTOMER_ID = /^[0-9]{1,32}$/
const PATH_PREFIX = /^\/[A-Za-z0-9_\-/]{1,200}$/
export const DEFAULT_PATH_PREFIX = '/apps/wishlist'

/**
 * The proof of a proxied request's query string (the part after `?`), or null when its
 * signature is missing, malformed or wrong, its timestamp more than 90 s away from
 * `nowSeconds`, or its shop not a `*.myshopify.com` domain.
 */
export function verifyProxyQuery(rawQuery: string, secret: string, nowSeconds: number): ProxyProof | null {
  const params = new URLSearchParams(rawQuery)
  if (!hexSignatureMatches(params, 'signature', () => proxySignature(params, secret))) return null
  const signedAt = freshTimestamp(params, nowSeconds)
  const shop = shopOf(params)
  if (signedAt === undefined || shop === undefined) return null
  const customer = params.getAll('logged_in_customer_id')
  if (customer.length > 1) return null
  const customerId = customer[0] === undefined || customer[0] === '' ? null : customer[0]
  if (customerId !== null && !CUSTOMER_ID.test(customerId)) return null
  const prefix = single(params, 'path_prefix') ?? DEFAULT_PATH_PREFIX
  if (!PATH_PREFIX.test(prefix) || prefix.includes('//')) return null
  return { shop, customerId, pathPrefix: prefix.replace(/\/+$/, ''), signedAt }
}

/**
 * The `hmac` of a query Shopify admin sends to the app (the embedded page's URL): every
 * parameter but `hmac` and `signature`, sorted by name, form-encoded (`a=1&b=2`); hex
 * HMAC-SHA256 keyed with the secret (as `@shopify/shopify-api`'s `validateHmac`).
 */
export function adminQueryHmac(params: URLSearchParams, secret: string): string {
  const sorted = [...params].filter(([key]) => key !== 'hmac' && key !== 'signature').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return createHmac('sha256', secret).update(new URLSearchParams(sorted).toString()).digest('hex')
}

/**
 * The shop a query from Shopify admin proves: its one `hmac` right, its `timestamp` within
 * 90 s of `nowSeconds` (as for the proxy) and its one `shop` a `*.myshopify.com` domain; else null.
 */
export function verifyAdminQuery(params: URLSearchParams, secret: string, nowSeconds: number): string | null {
  if (!hexSignatureMatches(params, 'hmac', () => adminQueryHmac(params, secret))) return null
  return freshTimestamp(params, nowSeconds) === undefined ? null : (shopOf(params) ?? null)
}

/** A well-formed `X-Shopify-Hmac-Sha256`: base64 of 32 bytes (checked before the body is read). */
export const isWebhookHmacHeader = (header: string | undefined): header is string =>
  header !== undefined && /^[A-Za-z0-9+/]{43}=$/.test(header)

/** `X-Shopify-Hmac-Sha256`: base64 HMAC-SHA256 of the raw body bytes, keyed with the secret. */
export function webhookHmacValid(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  if (!isWebhookHmacHeader(header)) return false
  const expected = createHmac('sha256', secret).update(rawBody).digest()
  return constantTimeEqual(expected, Buffer.from(header, 'base64'))
}

/** The header value Shopify would send for this body (tests and the development tools sign with it). */
export const webhookHmac = (rawBody: Buffer | string, secret: string): string =>
  createHmac('sha256', secret).update(rawBody).digest('base64')
