/**
 * The opt-out link's page (opt-out.ts): `GET` shows it (a confirm button), `POST` opts out
 * (the button, or a mail client's RFC 8058 one-click POST). Public: the signed token is the
 * credential (a path parameter named `token`, which logs never show), no login, no cookie.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { acceptFormBodies } from '../../lib/form-bodies.js'
import { errors } from '../../lib/http-schemas.js'
import { negotiateLocale, type PageLocale, pageStrings, supportedLocale } from '../../lib/page-strings.js'
import { now } from '../../lib/time.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { Shop } from '../shops/shops.types.js'
import type { Owner } from '../auth/auth.types.js'
import { OPT_OUT_PATH, type OptOutConfig, type OptOutPageState, optOutPageHtml, optOutsRepo, readOptOutToken } from './opt-out.js'

const HtmlPage = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String({ description: 'HTML document' }) } },
})
const NotFoundPage = HtmlPage('The link is not valid (tampered, or its shop is gone): a page saying so')

/** No script, no outside resource, posts only to itself, never framed. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

const TokenParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512, description: 'The signed token of the link' }) })
const LocaleQuery = Type.Object({
  locale: Type.Optional(Type.String({ maxLength: 35, description: 'The page language (`fr`, `pt-BR`…); else `Accept-Language`' })),
})

export const optOutRoutes: FastifyPluginAsyncTypebox<{ db: Db; shops: ShopsService; config: OptOutConfig }> = async (
  app,
  { db, shops, config },
) => {
  acceptFormBodies(app)
  // RFC 8058 allows a one-click POST as multipart/form-data too: its body says nothing more than the URL.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, _body, done) => done(null, {}))
  const tags = ['notifications']

  const send = (reply: FastifyReply, status: number, state: OptOutPageState, locale: PageLocale, shop: Shop | undefined, token: string) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('content-security-policy', PAGE_CSP)
      .header('referrer-policy', 'no-referrer')
      .send(
        optOutPageHtml(
          state,
          `${OPT_OUT_PATH}/${token}?locale=${locale}`,
          locale,
          pageStrings(locale, shop?.settings.storefront_strings ?? {}),
        ),
      )

  const localeOf = (query: { locale?: string | undefined }, acceptLanguage: string | undefined) =>
    query.locale !== undefined ? supportedLocale(query.locale) : negotiateLocale(acceptLanguage)

  /** The shop and owner of a token that verifies and names a shop still there. */
  async function resolve(token: string): Promise<{ shop: Shop; owner: Owner } | undefined> {
    const named = readOptOutToken(config.jwtSecret, token)
    if (named === undefined) return undefined
    const shop = await shops.get(named.shopId)
    return shop === undefined ? undefined : { shop, owner: named.owner }
  }

  const route = { access: ['public' as const], cache: 'private' as const }

  /** The page at the token's URL: `act` does what the method does for a token that verifies and says which page follows. */
  const page = (method: 'GET' | 'POST', description: string, act: (found: { shop: Shop; owner: Owner }) => Promise<'confirm' | 'done'>) =>
    app.route({
      method,
      url: `${OPT_OUT_PATH}/:token`,
      config: route,
      schema: {
        tags,
        params: TokenParams,
        querystring: LocaleQuery,
        response: { 200: HtmlPage(description), 404: NotFoundPage, ...errors(400, 429) },
      },
      handler: async (request, reply) => {
        const locale = localeOf(request.query, request.headers['accept-language'])
        const { token } = request.params
        const found = await resolve(token)
        if (found === undefined) return send(reply, 404, { kind: 'unknown' }, locale, undefined, token)
        const kind = await act(found)
        return send(reply, 200, { kind, shopName: found.shop.domain }, locale, found.shop, token)
      },
    })

  page('GET', 'The page', async ({ shop, owner }) => ((await optOutsRepo.isOptedOut(db, shop.id, owner)) ? 'done' : 'confirm'))
  page('POST', 'Opted out: the confirmation page', async ({ shop, owner }) => {
    await optOutsRepo.optOut(db, shop.id, owner, now())
    return 'done'
  })
}
