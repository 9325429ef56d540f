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
import type { ProxyPaths } from './proxy-path.js'
import type { Db } from '../../db/types.js'
import { wishlistsRepo } from '../../modules/wishlists/wishlists.repo.js'
import { DEFAULT_LIST_ID } from '../../modules/wishlists/wishlists.schemas.js'

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
export function createProxyAuth(deps: {
  secret: string
  defaultPlan: Plan
  shops: ShopsService
  /** Remembers the proxy's path each shop's requests name (proxy-path.ts). */
  paths?: Pick<ProxyPaths, 'seen'>
  clock?: () => number
}): ProxyAuth {
  const clock = deps.clock ?? Date.now
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<ResolvedAuth> => {
    const q = request.url.indexOf('?')
    const proof = verifyProxyQuery(q === -1 ? '' : request.url.slice(q + 1), deps.secret, Math.floor(clock() / 1000))
    if (proof === null) return { error: new AppError('INVALID_SIGNATURE', 'The app proxy signature is missing, wrong or stale') }
    const clientAddress = proxyClientAddress(request)
    // A fresh signed request installs the shop (again); one signed before an uninstall does not.
    const shop = await deps.shops.install(proof.shop, deps.defaultPlan, proof.signedAt)
    if (shop.uninstalledAt !== null) return { error: new AppError('FORBIDDEN', 'The app is uninstalled from this shop'), clientAddress }
    await deps.paths?.seen(shop.id, proof.pathPrefix)
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
  db: Db
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

/** A language's root on the shop (`/fr`, `/en-ca`), as a page's form tells it (`return_root`); '' for the primary one. */
const RETURN_ROOT = /^(\/[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2})?$/

/**
 * Where a form sends the browser once it went through (Post/Redirect/Get): the page `path`
 * under the proxy's path, in the language the form was posted from, with what was done in
 * the query, so reloading the page posts nothing again.
 */
function backTo(request: FastifyRequest, path: string, query: Record<string, string> = {}): string {
  const raw = (request.body as Record<string, unknown> | undefined)?.return_root
  const root = typeof raw === 'string' && RETURN_ROOT.test(raw) ? raw : ''
  const q = new URLSearchParams(query).toString()
  return `${root}${pathPrefixOf(request)}${path}${q === '' ? '' : `?${q}`}`
}

const seeOther = (reply: FastifyReply, location: string) => reply.code(303).header('location', location).send()

/**
 * The shop's own texts of the pages (its `storefront_strings` setting). Pages are built on
 * every request from the shop as the request resolved it, so a change shows on the next page
 * (on another instance, once its shop cache expires).
 */
const textsOf = (shop: Shop | undefined): StringOverrides => shop?.settings.storefront_strings ?? {}

const pageDoc = <E extends object>(operationId: string, summary: string, description: string, extra: E = {} as E, redirects = false) => ({
  tags: ['shopify'],
  summary,
  description: `Signed by Shopify like every \`/proxy\` request. Answers \`Content-Type: application/liquid\`, which Shopify renders inside the theme, in the shop's language (\`request.locale\`). ${description}`,
  operationId,
  ...extra,
  response: {
    200: { description: 'Liquid source of the page', content: { 'application/liquid': { schema: LiquidPage } } },
    ...(redirects ? redirected : {}),
    ...errors(400, 401, 403, 429),
  },
})

const ReturnRoot = Type.Optional(
  Type.String({
    maxLength: 40,
    description: "The page's language root on the shop (`/fr`; empty for the primary language): where the redirect goes",
  }),
)
const PageNumber = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: '20 items a page' })),
  done: Type.Optional(
    Type.String({
      maxLength: 20,
      description: 'What the form just did, set by its redirect: `removed`, `shared` (the page shows the share link)',
    }),
  ),
})
const RemoveForm = Type.Object(
  { product_id: Type.Optional(Type.String({ maxLength: 255 })), return_root: ReturnRoot },
  { description: '`application/x-www-form-urlencoded`' },
)
const InvitationQuery = Type.Object({
  invitation: Type.Optional(Type.String({ maxLength: 200 })),
  done: Type.Optional(Type.String({ maxLength: 10, description: 'Set by the redirect after the form went in: the thank-you page' })),
})
const ReviewForm = Type.Object(
  { ...ReviewFormBody.properties, return_root: ReturnRoot },
  { description: "The form's fields, `application/x-www-form-urlencoded`" },
)
const redirected = { 303: { description: 'Done: back to the page (`Location`), which shows what was done' } }

export const proxyRoutes: FastifyPluginAsyncTypebox<ProxyRoutesOptions> = async (
  app,
  { db, authenticate, share, wishlists, invitations, storefrontApi },
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

  // The pages of the shop: forms post back to them (remove, share, review), no script needed;
  // one that went through sends the browser back to the page (303), one that did not answers
  // with the page and its error summary.
  await app.register(async (scope) => {
    acceptFormBodies(scope)
    const pages = scope.withTypeProvider<TypeBoxTypeProvider>()
    const pageConfig = { access: ['public' as const], ...proxied }

    /** The signed request's context: always there on these routes (a bad signature never reaches a handler). */
    const ctxOf = (request: FastifyRequest): RequestContext => request.auth.ctx as RequestContext
    type CustomerPage = Extract<WishlistPage, { kind: 'customer' }>

    async function wishlistPage(
      ctx: RequestContext,
      page: number,
      outcome: Pick<CustomerPage, 'flash' | 'error'> = {},
    ): Promise<WishlistPage> {
      if (ctx.actor.kind !== 'customer') return { kind: 'guest' }
      const owner = { type: 'customer' as const, id: ctx.actor.customerId }
      // One page read from the database (the list may hold 2,500 items; the page shows 20).
      const [read, list] = await Promise.all([
        wishlists.page(ctx, owner, { limit: ITEMS_PER_PAGE, offset: (page - 1) * ITEMS_PER_PAGE }),
        // The default list has a row once renamed: until then the page names it in its language.
        wishlistsRepo.list(db, ctx.shop.id, owner, DEFAULT_LIST_ID),
      ])
      const items = read.items.map((i) => ({
        productId: i.productId,
        variantId: i.variantId,
        handle: i.handle ?? null,
        quantity: i.quantity,
        note: i.note,
        purchased: i.purchasedAt !== null,
      }))
      return { kind: 'customer', items, page, hasMore: read.has_more, name: list?.name ?? null, ...outcome }
    }

    const send = async (request: FastifyRequest, reply: FastifyReply, page: WishlistPage) =>
      liquid(reply, wishlistPageLiquid(page, pathPrefixOf(request), textsOf(ctxOf(request).shop)))

    pages.get(
      '/',
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyWishlistPage',
          "The shopper's wishlist as a page of the shop's theme (app proxy)",
          "A logged-in shopper (`logged_in_customer_id`) gets their list, headed by its name (the default list's in the page's language until renamed), 20 items a page (`page`), each with image, title, price and link from `all_products[handle]`, its quantity, note and whether it was bought, an add-to-cart form of its quantity and a remove form, then \"add all to cart\" (one `POST /cart/add` form with `items[][id]`/`items[][quantity]`) and share. `done` (set by the forms' redirects) shows what was just done. A guest gets the container the widget fills from the guest's own id, and a link to log in.",
          { querystring: PageNumber },
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        const { done } = request.query
        let flash: CustomerPage['flash']
        if (done === 'removed') flash = { removed: true }
        else if (done === 'shared' && ctx.actor.kind === 'customer' && planAtLeast(ctx.shop.plan, 'starter')) {
          const active = await share.activeLink(ctx, { type: 'customer', id: ctx.actor.customerId }, undefined)
          if (active !== null) flash = { shareUrl: active.share_url }
        }
        return send(request, reply, await wishlistPage(ctx, request.query.page ?? 1, { flash }))
      },
    )

    pages.post(
      '/remove',
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyWishlistPageRemove',
          'Remove an item from the wishlist page (form post, app proxy)',
          "The remove form of the wishlist page: removes the product from the logged-in shopper's list (already gone counts as removed) and answers `303 See Other` to the page with `done=removed`, in the language the form was posted from (`return_root`). No product named: the page with an error summary. A guest, and a form posted from another site (`Sec-Fetch-Site: cross-site`), change nothing and are sent back to the page.",
          { body: RemoveForm },
          true,
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        if (ctx.actor.kind !== 'customer' || crossSite(request)) return seeOther(reply, backTo(request, ''))
        const productId = request.body.product_id?.trim() ?? ''
        if (productId === '') return send(request, reply, await wishlistPage(ctx, 1, { error: 'errorRemove' }))
        // Already gone (another tab, a double click): nothing changes, the page shows the list as it is.
        await wishlists.removeItem(ctx, { type: 'customer', id: ctx.actor.customerId }, undefined, productId, undefined)
        return seeOther(reply, backTo(request, '', { done: 'removed' }))
      },
    )

    pages.post(
      '/share',
      {
        config: pageConfig,
        schema: pageDoc(
          'proxyWishlistPageShare',
          'Share the wishlist from its page (form post, app proxy)',
          "The share form of the wishlist page (`application/x-www-form-urlencoded`, its one field `return_root`): makes the list's share link when none is active (on the plans that share), pointing to the shop (`https://{shop}/apps/wishlist/shared/{token}`), and answers `303 See Other` to the page with `done=shared`, which shows it. On a plan that does not share: the page with an error summary saying so.",
          {},
          true,
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        if (ctx.actor.kind !== 'customer' || crossSite(request)) return seeOther(reply, backTo(request, ''))
        if (!planAtLeast(ctx.shop.plan, 'starter')) return send(request, reply, await wishlistPage(ctx, 1, { error: 'shareUnavailable' }))
        await share.link(ctx, { type: 'customer', id: ctx.actor.customerId }, undefined)
        return seeOther(reply, backTo(request, '', { done: 'shared' }))
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
          "Where `reviewUrl` points for a Shopify shop: the invited product (title and image from `all_products` by the catalog's handle; a generic heading when the catalog has no handle) and its review form, no script needed. Used, expired, unknown and other shops' invitations, and products the shop no longer has, render a page saying so. `done` (set by the form's redirect): the thank-you page.",
          { querystring: InvitationQuery },
        ),
      },
      async (request, reply) => {
        const { shop } = ctxOf(request)
        const { invitation, done } = request.query
        const state = done === undefined ? await invitations.page(invitation, shop.id) : await invitations.thanks(invitation, shop.id)
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
          "Submitted as `POST /api/v1/reviews` with `invitation` would be. Taken: `303 See Other` to the page with `done=1`, the thank-you page (saying when the review awaits moderation), in the language the form was posted from. Refused: the form again, with an error summary first and each field's problem.",
          { body: ReviewForm },
          true,
        ),
      },
      async (request, reply) => {
        const ctx = ctxOf(request)
        const state = await invitations.submitPage(ctx, request.body)
        if (state.kind === 'thanks')
          return seeOther(reply, backTo(request, REVIEW_PAGE_PATH, { invitation: request.body.invitation ?? '', done: '1' }))
        return liquid(reply, reviewPageLiquid(state, reviewAction(request), textsOf(ctx.shop)))
      },
    )
  })
}
