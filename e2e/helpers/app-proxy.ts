/**
 * Shopify's app proxy as a test storefront plays it: `https://{shop}/apps/wishlist/<rest>` is
 * signed as Shopify signs it (the shop, the logged-in customer, the path prefix, a fresh
 * timestamp) and forwarded to the service's `/proxy/<rest>` with the shopper's address in
 * `X-Forwarded-For` and none of their cookies; the answer comes back with its type, its
 * caching headers, which decide what the shopper's browser may keep, and a redirect's
 * `Location` (followed by the browser, on the shop's domain).
 */
import { createHmac } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { signedQuery } from '../../apps/server/test/helpers/shopify.js'

export const APP_PROXY_PREFIX = '/apps/wishlist'

/**
 * Shopify's app proxy signature, written here from Shopify's description rather than taken
 * from the service (so a mistake in the service's own cannot cancel out): hex HMAC-SHA256 of
 * the sorted `key=value` pairs (repeated keys joined by `,`), no separator.
 */
export function proxySignature(params: URLSearchParams, secret: string): string {
  const grouped = new Map<string, string[]>()
  for (const [key, value] of params) if (key !== 'signature') grouped.set(key, [...(grouped.get(key) ?? []), value])
  const message = [...grouped]
    .map(([key, values]) => `${key}=${values.join(',')}`)
    .sort()
    .join('')
  return createHmac('sha256', secret).update(message).digest('hex')
}

export interface ProxiedRequest {
  method: string
  url: URL
  headers: IncomingHttpHeaders
  body: Buffer
}

export interface ProxyAnswer {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** The request headers the widget sends that the service reads; the answer headers passed back. */
const FORWARDED = ['accept', 'content-type', 'x-guest-id']
const RETURNED = ['content-type', 'cache-control', 'vary', 'etag', 'location', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']

/** `ip`: the shopper's address, as Shopify puts it in `X-Forwarded-For` (each shopper their own rate-limit budget). */
export async function forwardToAppProxy(
  serviceUrl: string,
  app: { shop: string; secret: string; customerId: string; ip?: string },
  request: ProxiedRequest,
): Promise<ProxyAnswer> {
  const query: Record<string, string[]> = {}
  for (const [key, value] of request.url.searchParams) (query[key] ??= []).push(value)
  const signed = signedQuery({ shop: app.shop, secret: app.secret, customerId: app.customerId, pathPrefix: APP_PROXY_PREFIX }, query)
  const headers: Record<string, string> = { 'x-forwarded-for': app.ip ?? '203.0.113.9' }
  for (const name of FORWARDED) {
    const value = request.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  const answer = await fetch(`${serviceUrl}/proxy${request.url.pathname.slice(APP_PROXY_PREFIX.length)}?${signed}`, {
    method: request.method,
    headers,
    body: request.body.length > 0 ? new Uint8Array(request.body) : undefined,
    // A redirect (a form's 303 back to its page) goes to the shopper's browser, as Shopify passes it on.
    redirect: 'manual',
  })
  const returned: Record<string, string> = {}
  for (const name of RETURNED) {
    const value = answer.headers.get(name)
    if (value !== null) returned[name] = value
  }
  return { status: answer.status, headers: returned, body: Buffer.from(await answer.arrayBuffer()) }
}
