/**
 * The Shopify app proxy (docs/api.md, "The app proxy"). Shopify forwards
 * `https://{shop}/apps/wishlist/<rest>?<query>` to `/proxy/<rest>?<query>&shop=…&
 * logged_in_customer_id=…&path_prefix=…&timestamp=…&signature=…`.
 *
 * The wishlist and reviews route plugins are registered a second time under `/proxy`, each
 * route marked `config.proxy` with this proxy's authenticator (and hidden from the OpenAPI
 * document: its contract is the direct route's). For those routes the auth plugin calls it
 * instead of reading `Authorization` / `X-Storefront-Key`, so the direct routes' path is
 * unchanged and the answers, bodies and errors are the same code's.
 */
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'
import { Type } from 'typebox'
import type { Plan } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import { acceptFormBodies } from '../../lib/form-bodies.js'
import { errors } from '../../lib/http-schemas.js'
import { guestIdOf, type ProxyAuth, type ResolvedAuth } from '../../plugins/auth.js'
import type { RequestContext } from '../../modules/auth/auth.types.js'
import { REVIEW_PAGE_PATH, type InvitationsService } from '../../modules/reviews/invitations.service.js'
import { ReviewFormBody } from '../../modules/reviews/review-page.schemas.js'
import { planAtLeast } from '../../modules/shops/plans.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import type { StringOverrides } from '../../lib/page-strings.js'
import type { ShareService } from '../../modules/wishlists/share.service.js'
import type { WishlistsService } from '../../modules/wishlists/wishlists.service.js'
import { SharedTokenParams } from '../../modules/wishlists/wishlists.schemas.js'
import { ITEMS_PER_PAGE } from './liquid-pages.js'
import { reviewPageLiquid } from './review-page.js'
import { sharedPageLiquid } from './shared-page.js'
import { type WishlistPage, wishlistPageLiquid } from './wishlist-page.js'
import { DEFAULT_PATH_PREFIX, verifyProxyQuery } from './signatures.js'

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
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<ResolvedAuth> => {
    const q = request.url.indexOf('?')
    const proof = verifyProxyQuery(q === -1 ? '' : request.url.slice(q + 1), deps.secret, Math.floor(clock() / 1000))
    if (proof === null) return { error: new AppError('INVALID_SIGNATURE', 'The app proxy signature is missing, wrong or stale') }
    const clientAddress = proxyClientAddress(request)
    // A fresh signed request installs the shop (again); one signed before an uninstall does not.
    const shop = await deps.shops.install(proof.shop, deps.defaultPlan, proof.signedAt)
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
 * `config.proxy` here with `authenticate` (`createProxyAuth`).
 */
export interface ProxyRoutesOptions {
  authenticate: ProxyAuth
  share: ShareService
  wishlists: WishlistsService
  invitations: InvitationsService
  storefrontApi: FastifyPluginAsync<{ proxied: boolean }>
}

/** The proxy's path on the shop, from the signed `path_prefix` (`/apps/wishlist` when missing or odd). */
function pathPrefixOf(request: FastifyRequest): string {
  const raw = (request.query as Record<string, unknown>).path_prefix
  return typeof raw === 'string' && /^\/[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/.test(raw) ? raw : DEFAULT_PATH_PREFIX
}

/** A form posted from another site (the browser says so): not acted on. */
const crossSite = (request: FastifyRequest) => request.headers['sec-fetch-site'] === 'cross-site'

const liquid = (reply: FastifyReply, source: string) => reply.type('application/liquid; charset=utf-8').send(source)

/**
 * The shop's own texts of the pages (its `storefront_strings` setting). Pages are built on
 * every request from the shop as the request resolved it, so a change shows on the next page
 * (on another instance, once its shop cache expires).
 */
const textsOf = (shop: Shop | undefined): StringOverrides => shop?.settings.storefront_strings ?? {}

const pageDoc = <E extends object>(operationId: string, summary: string, description: string, extra: E = {} as E) => ({
  tags: ['shopify'],
  summary,
  description: `Signed by Shopify like every \`/proxy\` request. Answers \`Content-Type: application/liquid\`, which Shopify renders inside the theme, in the shop's language (\`request.locale\`). ${description}`,
  operationId,
  ...extra,
  response: {
    200: { description: 'Liquid source of the page', content: { 'application/liquid': { schema: LiquidPage } } },
    ...errors(400, 401, 403, 429),
  },
})

const PageNumber = Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: '20 items a page' })) })
const RemoveForm = Type.Object(
  { product_id: Type.String({ minLength: 1, maxLength: 255 }) },
  { description: '`application/x-www-form-urlencoded`' },
)
const InvitationQuery = Type.Object({ invitation: Type.Optional(Type.String({ maxLength: 200 })) })

export const proxyRoutes: FastifyPluginAsyncTypebox<ProxyRoutesOptions> = async (
  app,
  { authenticate, share, wishlists, invitations, storefrontApi },
) => {
  /** The signed query is the credential: its `signature` never reaches a log. */
  const proxied = { proxy: authenticate, credentialQuery: ['signature'] }
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = {
        ...(route.config ?? {}),
        ...proxied,
        credentialQuery: [...(route.config?.credentialQuery ?? []), ...proxied.credentialQuery],
      }
      route.schema = { ...(route.schema ?? {}), hide: true }
    })
    await scope.register(storefrontApi, { proxied: true })
  })

  app.get(
    '/shared/:shareToken',
    {
      config: { access: ['public'], ...proxied },
      schema: {
        tags: ['shopify'],
        params: SharedTokenParams,
        response: { 200: { content: { 'application/liquid': { schema: LiquidPage } } } },
      },
    },
    async (request, reply) => {
      const shop = request.auth.ctx?.shop
      const page = await share.sharedPage(shop?.id ?? '', request.params.shareToken)
      return liquid(reply, sharedPageLiquid(page, textsOf(shop)))
    },
  )

  // The pages of the shop: forms post back to them (remove, share, review), no script needed.
  await app.register(async (scope) => {
    acceptFormBodies(scope)
    const pages = scope.withTypeProvider<TypeBoxTypeProvider>()
    const pageConfig = { access: ['public' as const], ...proxied }

    /** The signed request's context: always there on these routes (a bad signature never reaches a handler). */
    const ctxOf = (request: FastifyRequest): RequestContext => request.auth.ctx as RequestContext

    async function wishlistPage(
      ctx: RequestContext,
      page: number,
      flash?: Extract<WishlistPage, { kind: 'customer' }>['flash'],
    ): Promise<WishlistPage> {
      if (ctx.actor.kind !== 'customer') return { kind: 'guest' }
      // One page read from the database (the list may hold 2,500 items; the page shows 20).
      const read = await wishlists.page(
        ctx,
        { type: 'customer', id: ctx.actor.customerId },
        { limit: ITEMS_PER_PAGE, offset: (page - 1) * ITEMS_PER_PAGE },
      )
      const items = read.items.map((i) => ({ productId: i.productId, variantId: i.variantId, handle: i.handle ?? null }))
      return { kind: 'customer', items, page, hasMore: read.has_more, flash }
    }

    pages.get(
      '/',
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyWishlistPage',
          "The shopper's wishlist as a page of the shop's theme (app proxy)",
          'A logged-in shopper (`logged_in_customer_id`) gets their list, 20 items a page (`page`), each with image, title, price and link from `all_products[handle]`, an add-to-cart form and a remove form, then "add all to cart" (one `POST /cart/add` form with `items[][id]`/`items[][quantity]`) and share. A guest gets the container the widget fills from the guest\'s own id, and a link to log in.',
          { querystring: PageNumber },
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        return liquid(reply, wishlistPageLiquid(await wishlistPage(ctx, request.query.page ?? 1), pathPrefixOf(request), textsOf(ctx.shop)))
      },
    )

    pages.post(
      '/remove',
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyWishlistPageRemove',
          'Remove an item from the wishlist page (form post, app proxy)',
          "The remove form of the wishlist page: removes the product from the logged-in shopper's list and answers with the page. A guest gets the guest page; a form posted from another site (`Sec-Fetch-Site: cross-site`) changes nothing.",
          { body: RemoveForm },
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        let flash: Extract<WishlistPage, { kind: 'customer' }>['flash']
        if (ctx.actor.kind === 'customer' && !crossSite(request)) {
          // Already gone (another tab, a double click): nothing changes, the page shows the list as it is.
          await wishlists.removeItem(ctx, { type: 'customer', id: ctx.actor.customerId }, undefined, request.body.product_id, undefined)
          flash = { removed: true }
        }
        return liquid(reply, wishlistPageLiquid(await wishlistPage(ctx, 1, flash), pathPrefixOf(request), textsOf(ctx.shop)))
      },
    )

    pages.post(
      '/share',
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyWishlistPageShare',
          'Share the wishlist from its page (form post, app proxy)',
          "The share form of the wishlist page: the list's active share link (made when none is active, on the plans that share), shown on the page, pointing to the shop (`https://{shop}/apps/wishlist/shared/{token}`).",
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        let flash: Extract<WishlistPage, { kind: 'customer' }>['flash']
        if (ctx.actor.kind === 'customer' && !crossSite(request)) {
          flash = planAtLeast(ctx.shop.plan, 'starter')
            ? { shareUrl: (await share.link(ctx, { type: 'customer', id: ctx.actor.customerId }, undefined)).share_url }
            : { shareUnavailable: true }
        }
        return liquid(reply, wishlistPageLiquid(await wishlistPage(ctx, 1, flash), pathPrefixOf(request), textsOf(ctx.shop)))
      },
    )

    const reviewAction = (request: FastifyRequest) => `${pathPrefixOf(request)}${REVIEW_PAGE_PATH}`
    pages.get(
      REVIEW_PAGE_PATH,
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyReviewInvitationPage',
          "The review form of an invitation as a page of the shop's theme (app proxy)",
          "Where `reviewUrl` points for a Shopify shop: the invited product (title and image from `all_products` by the catalog's handle; a generic heading when the catalog has no handle) and its review form, no script needed. Used, expired, unknown and other shops' invitations, and products the shop no longer has, render a page saying so.",
          { querystring: InvitationQuery },
        ),
      },
      async (request, reply) => {
        const { shop } = ctxOf(request)
        const state = await invitations.page(request.query.invitation, shop.id)
        return liquid(reply, reviewPageLiquid(state, reviewAction(request), textsOf(shop)))
      },
    )

    pages.post(
      REVIEW_PAGE_PATH,
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyReviewInvitationPageSubmit',
          'Submit the review form of an invitation (form post, app proxy)',
          "Submitted as `POST /api/v1/reviews` with `invitation` would be; answers with a thank-you page (saying when the review awaits moderation) or the form again with each field's problem.",
          { body: ReviewFormBody },
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        const state = await invitations.submitPage(ctx, request.body)
        return liquid(reply, reviewPageLiquid(state, reviewAction(request), textsOf(ctx.shop)))
      },
    )
  })
}
