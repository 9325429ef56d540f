/**
 * The service's own review page, `PUBLIC_BASE_URL/reviews/new?invitation=…`: where a review
 * invitation's link points for a shop outside the configured platforms (review-page.ts). HTML,
 * in the shopper's language (`?locale=`, which invitation links carry, else `Accept-Language`);
 * the form posts back here. A review taken sends the browser to the thank-you page (303 See
 * Other, `done=1`), so a reload posts nothing again; a refused one answers with the form, an
 * error summary first (focused, each problem a link to its field) and "Error: " in the title.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { acceptFormBodies } from '../../lib/form-bodies.js'
import { errors } from '../../lib/http-schemas.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { Shop } from '../shops/shops.types.js'
import { negotiateLocale, type PageLocale, pageStrings, supportedLocale } from '../../lib/page-strings.js'
import { type InvitationsService, REVIEW_PAGE_PATH } from './invitations.service.js'
import { reviewPageHtml } from './review-page.js'
import { ReviewFormBody, ReviewPageQuery, type ReviewPageState } from './review-page.schemas.js'

const HtmlPage = { description: 'The page', content: { 'text/html': { schema: Type.String({ description: 'HTML document' }) } } }

/** No script, no outside resource, posts only to itself, never framed. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

export const reviewPageRoutes: FastifyPluginAsyncTypebox<{ invitations: InvitationsService; shops: ShopsService }> = async (
  app,
  { invitations, shops },
) => {
  acceptFormBodies(app)
  const tags = ['reviews']

  /** The page in the shopper's language, with the texts of the invitation's shop when it is known. */
  const send = (reply: FastifyReply, state: ReviewPageState, locale: PageLocale, shop: Shop | undefined) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', PAGE_CSP)
      .header('referrer-policy', 'no-referrer')
      .send(
        reviewPageHtml(state, `${REVIEW_PAGE_PATH}?locale=${locale}`, locale, pageStrings(locale, shop?.settings.storefront_strings ?? {})),
      )

  const localeOf = (query: { locale?: string | undefined }, acceptLanguage: string | undefined) =>
    query.locale !== undefined ? supportedLocale(query.locale) : negotiateLocale(acceptLanguage)

  /** The invitation's shop, when the token names one that is still there and installed. */
  async function shopOf(state: ReviewPageState): Promise<Shop | undefined> {
    const shopId = state.kind === 'form' ? state.invitation.shopId : state.shopId
    if (shopId === undefined) return undefined
    const shop = await shops.get(shopId)
    return shop && shop.uninstalledAt === null ? shop : undefined
  }

  // The invitation in the URL is the shopper's: `private, no-store` (plugins/caching.ts).
  app.get(
    REVIEW_PAGE_PATH,
    {
      config: { access: ['public'], cache: 'private' },
      schema: { tags, querystring: ReviewPageQuery, response: { 200: HtmlPage, ...errors(400, 429) } },
    },
    async (request, reply) => {
      const locale = localeOf(request.query, request.headers['accept-language'])
      const { invitation, done } = request.query
      const state = done === undefined ? await invitations.page(invitation) : await invitations.thanks(invitation)
      const shop = await shopOf(state)
      if (state.kind === 'form' && shop === undefined) return send(reply, { kind: 'notice', which: 'unknown' }, locale, undefined)
      return send(reply, state, locale, shop)
    },
  )

  app.post(
    REVIEW_PAGE_PATH,
    {
      config: { access: ['public'], cache: 'private' },
      schema: {
        tags,
        querystring: ReviewPageQuery,
        body: ReviewFormBody,
        response: {
          200: HtmlPage,
          303: { description: 'The review was taken: the thank-you page (`Location`)' },
          ...errors(400, 429),
        },
      },
    },
    async (request, reply) => {
      const locale = localeOf(request.query, request.headers['accept-language'])
      const found = await invitations.page(request.body.invitation)
      const shop = await shopOf(found)
      if (found.kind !== 'form' || shop === undefined)
        return send(reply, found.kind === 'form' ? { kind: 'notice', which: 'unknown' } : found, locale, shop)
      const state = await invitations.submitPage({ shop, actor: { kind: 'storefront' }, requestId: request.id }, request.body)
      if (state.kind === 'thanks') {
        const query = new URLSearchParams({ invitation: request.body.invitation ?? '', locale, done: '1' })
        return reply.code(303).header('location', `${REVIEW_PAGE_PATH}?${query.toString()}`).send()
      }
      return send(reply, state, locale, shop)
    },
  )
}
