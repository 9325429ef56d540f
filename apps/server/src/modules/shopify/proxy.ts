/**
 * The Shopify app proxy (docs/api.md, "The app proxy"). Shopify forwards
 * `https://{shop}/apps/wishlist/<rest>?<query>` to `/proxy/<rest>?<query>&shop=…&
 * logged_in_customer_id=…&path_prefix=…&timestamp=…&signature=…`.
 *
 * The wishlist and reviews route plugins are registered a second time under `/proxy`, each
 * route marked `config.proxy` (and hidden from the OpenAPI document: its contract is the
 * direct route's). For those routes the auth plugin calls `proxyAuth` instead of reading
 * `Authorization` / `X-Storefront-Key`, so the direct routes' path is unchanged and the
 * answers, bodies and errors are the same code's.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'
import { Type } from 'typebox'
import type { Plan } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import { guestIdOf, type ProxyAuth, type ResolvedAuth } from '../../plugins/auth.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { ShareService } from '../wishlists/share.service.js'
import { SharedTokenParams } from '../wishlists/wishlists.schemas.js'
import { sharedPageLiquid } from './shared-page.js'
import { verifyProxyQuery } from './signatures.js'

export const PROXY_PREFIX = '/proxy'
/** The page is Liquid text; typed as what the handler sends. */
const LiquidPage = Type.String({ description: 'Liquid source, rendered by Shopify inside the theme' })
/** The actor's key id of a proxied customer (no API key is involved). */
export const PROXY_KEY_ID = 'shopify-app-proxy'

/**
 * The shopper's address behind the app proxy: the first `X-Forwarded-For` entry, which
 * Shopify sets (whatever TRUST_PROXY says: the signature proves Shopify sent the request).
 * The peer's address when the header is missing or not an address.
 */
export function proxyClientAddress(request: FastifyRequest): string {
  const raw = request.headers['x-forwarded-for']
  const first = (Array.isArray(raw) ? raw[0] : raw)?.split(',')[0]?.trim()
  return first !== undefined && ipaddr.isValid(first) ? first : request.ip
}

/** Credentials of a proxied request, from its signed query alone. */
export function createProxyAuth(deps: { secret: string; defaultPlan: Plan; shops: ShopsService; clock?: () => number }): ProxyAuth {
  const clock = deps.clock ?? Date.now
  return async (request: FastifyRequest, reply: FastifyReply): Promise<ResolvedAuth> => {
    // Answers through the proxy are per shopper: no cache between Shopify and the browser may keep them.
    reply.header('cache-control', 'no-store')
    const q = request.url.indexOf('?')
    const proof = verifyProxyQuery(q === -1 ? '' : request.url.slice(q + 1), deps.secret, Math.floor(clock() / 1000))
    if (proof === null) return { error: new AppError('INVALID_SIGNATURE', 'The app proxy signature is missing, wrong or stale') }
    const clientAddress = proxyClientAddress(request)
    const shop = await deps.shops.ensureByDomain(proof.shop, deps.defaultPlan)
    if (shop.uninstalledAt !== null) return { error: new AppError('FORBIDDEN', 'The app is uninstalled from this shop'), clientAddress }
    const base = { shop, requestId: request.id, shareBaseUrl: `https://${shop.domain}${proof.pathPrefix}/shared/` }
    if (proof.customerId !== null) {
      return { ctx: { ...base, actor: { kind: 'customer', keyId: PROXY_KEY_ID, customerId: proof.customerId } }, clientAddress }
    }
    const guestId = guestIdOf(request)
    if (guestId instanceof AppError) return { error: guestId, clientAddress }
    if (guestId === undefined) return { ctx: { ...base, actor: { kind: 'storefront' } }, clientAddress }
    return { ctx: { ...base, actor: { kind: 'guest', guestId } }, clientAddress }
  }
}

/**
 * Everything under `/proxy` (registered with that prefix): `storefrontApi` registers the
 * wishlist and reviews routes (app.ts, which serves the same plugin directly), each marked
 * `config.proxy` here.
 */
export const proxyRoutes: FastifyPluginAsyncTypebox<{ share: ShareService; storefrontApi: FastifyPluginAsync<{ proxied: boolean }> }> = async (app, { share, storefrontApi }) => {
  await app.register(async (proxied) => {
    proxied.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), proxy: true }
      route.schema = { ...(route.schema ?? {}), hide: true }
    })
    await proxied.register(storefrontApi, { proxied: true })
  })

  app.get(
    '/shared/:shareToken',
    {
      config: { access: ['public'], proxy: true },
      schema: {
        tags: ['shopify'],
        params: SharedTokenParams,
        response: { 200: { content: { 'application/liquid': { schema: LiquidPage } } } },
      },
    },
    async (request, reply) => {
      const page = await share.sharedPage(request.auth.ctx?.shop.id ?? '', request.params.shareToken)
      return reply.type('application/liquid; charset=utf-8').send(sharedPageLiquid(page))
    },
  )
}
