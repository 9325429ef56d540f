/** Shopify's side of the app mode tests: proxy signatures, webhook HMACs and session tokens. */
import { SignJWT } from 'jose'
import { expect, vi } from 'vitest'
import { proxySignature, webhookHmac } from '../../src/platforms/shopify/signatures.js'
import type { TestApp } from './app.js'

export const SHOPIFY_SECRET = 'shopify-test-app-secret'
export const SHOPIFY_API_KEY = 'shopify-test-client-id'
export const SHOPIFY_ENV = { SHOPIFY_API_SECRET: SHOPIFY_SECRET, SHOPIFY_API_KEY }
/** The API version of the test deliveries (X-Shopify-Api-Version) and of their payloads: the app's webhook version. */
export const SHOPIFY_WEBHOOK_API_VERSION = '2026-10'

let shopCounter = 0
/** A fresh `*.myshopify.com` domain (every test file shares the process's counter). */
export const newShopDomain = () => `shopify-${process.pid}-${++shopCounter}-${Date.now().toString(36)}.myshopify.com`

export interface ProxyParams {
  shop: string
  /** Empty or omitted: nobody is logged in. */
  customerId?: string
  pathPrefix?: string
  /** Seconds; now by default. */
  timestamp?: number
  secret?: string
}

/**
 * The query Shopify appends to a proxied request (after the storefront's own `query`),
 * signed as Shopify signs it.
 */
export function signedQuery(p: ProxyParams, query: Record<string, string | string[]> = {}): string {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) for (const one of [v].flat()) params.append(k, one)
  params.append('shop', p.shop)
  params.append('logged_in_customer_id', p.customerId ?? '')
  params.append('path_prefix', p.pathPrefix ?? '/apps/wishlist')
  params.append('timestamp', String(p.timestamp ?? Math.floor(Date.now() / 1000)))
  params.append('signature', proxySignature(params, p.secret ?? SHOPIFY_SECRET))
  return params.toString()
}

/** `/proxy<rest>?<signed query>`. */
export const proxyUrl = (rest: string, p: ProxyParams, query: Record<string, string | string[]> = {}) =>
  `/proxy${rest}?${signedQuery(p, query)}`

/** A proxied call, as Shopify forwards it (the shopper's address in X-Forwarded-For). */
export async function proxyCall(
  t: TestApp,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  rest: string,
  p: ProxyParams,
  opts: { query?: Record<string, string | string[]>; body?: unknown; headers?: Record<string, string>; ip?: string } = {},
) {
  return t.call(method, proxyUrl(rest, p, opts.query), {
    headers: { 'x-forwarded-for': `${opts.ip ?? '203.0.113.7'}, 23.227.38.1`, ...(opts.headers ?? {}) },
    ...(opts.body === undefined ? {} : { body: opts.body }),
  })
}

export interface WebhookOptions {
  topic: string
  shop: string
  eventId?: string
  webhookId?: string
  secret?: string
  /** Replaces the computed HMAC header (undefined: the right one; null: none). */
  hmac?: string | null
}

/** POSTs a Shopify webhook delivery, signed as Shopify signs it. */
export async function sendShopifyWebhook(t: TestApp, payload: unknown, o: WebhookOptions) {
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': o.topic,
    'x-shopify-shop-domain': o.shop,
    'x-shopify-api-version': SHOPIFY_WEBHOOK_API_VERSION,
    'x-shopify-webhook-id': o.webhookId ?? `wh-${Math.random().toString(36).slice(2)}`,
  }
  if (o.eventId !== undefined) headers['x-shopify-event-id'] = o.eventId
  const hmac = o.hmac === undefined ? webhookHmac(raw, o.secret ?? SHOPIFY_SECRET) : o.hmac
  if (hmac !== null) headers['x-shopify-hmac-sha256'] = hmac
  const res = await t.inject({ method: 'POST', url: '/v1/platforms/shopify/webhooks', headers, payload: raw })
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON that each test reads as it expects
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? undefined : (res.json() as any) }
}

/** A session token as App Bridge hands it to the embedded app. */
export async function sessionToken(
  shop: string,
  o: { secret?: string; aud?: string; dest?: string; iss?: string; exp?: number; nbf?: number; iat?: number; alg?: 'HS256' | 'HS512' } = {},
): Promise<string> {
  const nowS = Math.floor(Date.now() / 1000)
  const dest = o.dest ?? `https://${shop}`
  return new SignJWT({ dest, sid: 'session-id', sub: '42' })
    .setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer(o.iss ?? `${dest}/admin`)
    .setAudience(o.aud ?? SHOPIFY_API_KEY)
    .setIssuedAt(o.iat ?? nowS)
    .setNotBefore(o.nbf ?? nowS)
    .setExpirationTime(o.exp ?? nowS + 60)
    .setJti(`jti-${Math.random()}`)
    .sign(new TextEncoder().encode(o.secret ?? SHOPIFY_SECRET))
}

/**
 * Waits until the catalog sync a token exchange starts (catalog-sync.ts) has ended for the
 * shop: its Admin API calls run in the background after the session answers, and one that
 * meets a token the test then revokes drops it (a test that revokes must wait for them).
 */
export const catalogSyncOver = (t: TestApp, shopId: string) =>
  vi.waitFor(
    async () => {
      const sync = await t.storage.db.selectFrom('shopify_catalog_syncs').select('state').where('shop_id', '=', shopId).executeTakeFirst()
      expect(sync?.state).toMatch(/^(done|failed)$/)
    },
    { timeout: 10_000, interval: 10 },
  )
