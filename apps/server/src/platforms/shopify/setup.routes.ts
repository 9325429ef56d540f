/**
 * The embedded admin's setup guide (docs/shopify.md, "The setup guide"): where a Shopify
 * shop's setup stands, for the dashboard's home screen inside Shopify admin, and the request
 * that runs its catalog sync again (catalog-sync.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from 'typebox'
import type { Db } from '../../db/types.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import type { ShopifyAdmin } from './admin-api.js'
import { type ShopifyBilling, subscriptionOf } from './billing.js'
import { catalogStatusRepo } from './catalog-status.repo.js'
import type { CatalogSync } from './catalog-sync.js'
import { catalogSyncRepo } from './catalog-sync.repo.js'
import { CatalogStatus, PlatformSetup } from './setup.schemas.js'
import { isShopDomain } from './signatures.js'

/** The block of the theme app extension (extensions/wishlist/blocks/app-embed.liquid) the editor link turns on. */
const APP_EMBED_BLOCK = 'app-embed'

/** The theme editor of `shop` with the app's embed ready to turn on (Shopify's deep link). */
export const appEmbedEditorUrl = (shop: string, apiKey: string): string =>
  `https://${shop}/admin/themes/current/editor?context=apps&activateAppId=${encodeURIComponent(apiKey)}/${APP_EMBED_BLOCK}`

/** The shop's catalog: the products the service knows, and the state of its sync from Shopify. */
async function catalogStatus(db: Db, shopId: string): Promise<Static<typeof CatalogStatus>> {
  // The sync's state first, then the products: a sync marked done committed its products before, so the count
  // read after it includes them (read side by side, a count could miss what a 'done' read just after reports).
  const sync = await catalogSyncRepo.get(db, shopId)
  const known = await catalogStatusRepo.summary(db, shopId)
  return {
    state: sync?.state ?? 'not_started',
    products: known.products,
    updatedAt: known.updatedAt === null ? null : isoMillis(known.updatedAt),
    sync:
      sync === undefined
        ? null
        : {
            productsRead: sync.products_read,
            productsChanged: sync.products_changed,
            startedAt: isoMillis(Number(sync.started_at)),
            finishedAt: sync.finished_at === null ? null : isoMillis(Number(sync.finished_at)),
            error: sync.error,
          },
  }
}

const notShopify = () => new AppError('NOT_FOUND', 'This shop is not a Shopify shop: it has no Shopify setup')

export const setupRoutes: FastifyPluginAsyncTypebox<{
  db: Db
  apiKey: string | undefined
  adminApi: Pick<ShopifyAdmin, 'hasToken'>
  catalogSync: Pick<CatalogSync, 'start'>
  billing: Pick<ShopifyBilling, 'latest'>
}> = async (app, opts) => {
  app.get(
    '/v1/admin/platform-setup',
    {
      config: { access: ['admin'] },
      schema: { tags: ['shopify'], response: { 200: Ok(PlatformSetup), ...errors(401, 403, 404, 429) } },
    },
    async (request) => {
      const { shop } = request.ctx
      if (!isShopDomain(shop.domain)) throw notShopify()
      return {
        ok: true as const,
        data: {
          catalog: await catalogStatus(opts.db, shop.id),
          plan: { current: shop.plan, subscription: subscriptionOf(await opts.billing.latest(shop.id)) },
          appEmbed: { editorUrl: opts.apiKey === undefined ? null : appEmbedEditorUrl(shop.domain, opts.apiKey) },
        },
      }
    },
  )

  app.post(
    '/v1/admin/platform-setup/catalog-sync',
    {
      config: { access: ['admin'] },
      schema: { tags: ['shopify'], response: { 202: Ok(CatalogStatus), ...errors(401, 403, 404, 429) } },
    },
    async (request, reply) => {
      const { shop } = request.ctx
      if (!isShopDomain(shop.domain)) throw notShopify()
      if (!(await opts.adminApi.hasToken(shop.id)))
        throw new AppError(
          'FORBIDDEN',
          "The shop has not granted the app Admin API access yet: open the app from the shop's Shopify admin, then sync again",
        )
      await opts.catalogSync.start(shop.id)
      return reply.code(202).send({ ok: true as const, data: await catalogStatus(opts.db, shop.id) })
    },
  )
}
