/**
 * The embedded admin's setup guide (docs/shopify.md, "The setup guide"): where a Shopify
 * shop's setup stands, for the dashboard's home screen inside Shopify admin.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Db } from '../../db/types.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import { catalogStatusRepo } from './catalog-status.repo.js'
import { PlatformSetup } from './setup.schemas.js'
import { isShopDomain } from './signatures.js'

/** The block of the theme app extension (extensions/wishlist/blocks/app-embed.liquid) the editor link turns on. */
const APP_EMBED_BLOCK = 'app-embed'

/** The theme editor of `shop` with the app's embed ready to turn on (Shopify's deep link). */
export const appEmbedEditorUrl = (shop: string, apiKey: string): string =>
  `https://${shop}/admin/themes/current/editor?context=apps&activateAppId=${encodeURIComponent(apiKey)}/${APP_EMBED_BLOCK}`

export const setupRoutes: FastifyPluginAsyncTypebox<{ db: Db; apiKey: string | undefined }> = async (app, opts) => {
  app.get(
    '/v1/admin/platform-setup',
    {
      config: { access: ['admin'] },
      schema: { tags: ['shopify'], response: { 200: Ok(PlatformSetup), ...errors(401, 403, 404, 429) } },
    },
    async (request) => {
      const { shop } = request.ctx
      if (!isShopDomain(shop.domain)) throw new AppError('NOT_FOUND', 'This shop is not a Shopify shop: it has no Shopify setup')
      const catalog = await catalogStatusRepo.summary(opts.db, shop.id)
      return {
        ok: true as const,
        data: {
          catalog: {
            state: catalog.products > 0 ? ('done' as const) : ('not_started' as const),
            products: catalog.products,
            updatedAt: catalog.updatedAt === null ? null : isoMillis(catalog.updatedAt),
          },
          plan: { current: shop.plan, subscription: null },
          appEmbed: { editorUrl: opts.apiKey === undefined ? null : appEmbedEditorUrl(shop.domain, opts.apiKey) },
        },
      }
    },
  )
}
