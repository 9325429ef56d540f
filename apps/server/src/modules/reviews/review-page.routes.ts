/**
 * The service's own review page, `PUBLIC_BASE_URL/reviews/new?invitation=…`: where a review
 * invitation's link points for a shop that is not on Shopify (review-page.ts). HTML, in the
 * shopper's language (`?locale=`, else `Accept-Language`); the form posts back here.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { errors } from '../../lib/http-schemas.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { Shop } from '../shops/shops.types.js'
import { negotiateLocale, type PageLocale, pageStrings, supportedLocale } from '../../lib/page-strings.js'
import { REVIEW_PAGE_PATH } from './invitations.service.js'
import { acceptFormBodies, invitationState, ReviewFormBody, type ReviewPageState, reviewPageHtml, submitReviewForm } from './review-page.js'
import type { ReviewsService } from './reviews.service.js'

const PageQuery = Type.Object({
  invitation: Type.Optional(Type.String({ maxLength: 200, description: 'The invitation token (from the `review.requested` event\'s `reviewUrl`)' })),
  locale: Type.Optional(Type.String({ maxLength: 35, description: 'A language tag (`fr`, `pt-BR`, …); default: from `Accept-Language`' })),
})
const HtmlPage = { description: 'The page', content: { 'text/html': { schema: Type.String({ description: 'HTML document' }) } } }

/** No script, no outside resource, posts only to itself, never framed. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

export const reviewPageRoutes: FastifyPluginAsyncTypebox<{ db: Db; reviews: ReviewsService; shops: ShopsService }> = async (app, { db, reviews, shops }) => {
  acceptFormBodies(app)
  const tags = ['reviews']

  /** The page in the shopper's language, with the texts of the invitation's shop when it is known. */
  const send = (reply: FastifyReply, state: ReviewPageState, locale: PageLocale, shop: Shop | undefined) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', PAGE_CSP)
      .header('referrer-policy', 'no-referrer')
      .send(reviewPageHtml(state, `${REVIEW_PAGE_PATH}?locale=${locale}`, locale, pageStrings(locale, shop?.settings.storefront_strings ?? {})))

  const localeOf = (query: { locale?: string | undefined }, acceptLanguage: string | undefined) =>
    query.locale !== undefined ? supportedLocale(query.locale) : negotiateLocale(acceptLanguage)

  /** The invitation's shop, when the token names one that is still there and installed. */
  async function shopOf(state: ReviewPageState): Promise<Shop | undefined> {
    const shopId = state.kind === 'form' ? state.invitation.shopId : state.kind === 'notice' ? state.shopId : undefined
    if (shopId === undefined) return undefined
    const shop = await shops.get(shopId)
    return shop && shop.uninstalledAt === null ? shop : undefined
  }

  // The invitation in the URL is the shopper's: `private, no-store` (plugins/caching.ts).
  app.get(
    REVIEW_PAGE_PATH,
    {
      config: { access: ['public'], cache: 'private' },
      schema: { tags, querystring: PageQuery, response: { 200: HtmlPage, ...errors(400, 429) } },
    },
    async (request, reply) => {
      const locale = localeOf(request.query, request.headers['accept-language'])
      const state = await invitationState(db, request.query.invitation, Date.now())
      const shop = await shopOf(state)
      if (state.kind === 'form' && shop === undefined) return send(reply, { kind: 'notice', which: 'unknown' }, locale, undefined)
      return send(reply, state, locale, shop)
    },
  )

  app.post(
    REVIEW_PAGE_PATH,
    {
      config: { access: ['public'], cache: 'private' },
      schema: { tags, querystring: PageQuery, body: ReviewFormBody, response: { 200: HtmlPage, ...errors(400, 429) } },
    },
    async (request, reply) => {
      const locale = localeOf(request.query, request.headers['accept-language'])
      const found = await invitationState(db, request.body.invitation, Date.now())
      const shop = await shopOf(found)
      if (found.kind !== 'form' || shop === undefined) return send(reply, found.kind === 'form' ? { kind: 'notice', which: 'unknown' } : found, locale, shop)
      const state = await submitReviewForm({ db, reviews }, { shop, actor: { kind: 'storefront' }, requestId: request.id }, request.body)
      return send(reply, state, locale, shop)
    },
  )
}
