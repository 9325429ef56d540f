/**
 * Shopify as a platform of the seam (platforms/platform.ts), in Shopify app mode (on with
 * SHOPIFY_API_SECRET). Its shops are the `*.myshopify.com` domains Shopify signs; a buyer
 * writes a review inside the shop's theme, through the app proxy
 * (`https://{shop}/apps/wishlist/reviews/new?invitation=…`); its routes are the app proxy's
 * (under /proxy, signed by Shopify), the webhook intake (onto the events intake and the
 * privacy erasure), the embedded admin's sign-in, its setup guide and its plan page (plans
 * charged through Shopify Billing); the shop's admin may frame the dashboard, with App
 * Bridge, when its request proves the shop; its session tokens are bearer credentials of the
 * admin routes; the delivery worker's housekeeping deletes its expired webhook receipts.
 */
import type { Config } from '../../config.js'
import { REVIEW_PAGE_PATH } from '../../modules/reviews/invitations.service.js'
import { createFlowChannel, type FlowChannel } from '../../modules/notifications/flow.js'
import type { Platform } from '../platform.js'
import { createShopifyAdmin, type ShopifyAdmin } from './admin-api.js'
import { createCatalogSync } from './catalog-sync.js'
import { createShopifyBilling } from './billing.js'
import { flowLifecycleOperations, flowLifecycleRoutes } from './flow-lifecycle.routes.js'
import { billingRoutes } from './billing.routes.js'
import { billingOperations } from './billing.schemas.js'
import { createProxyAuth, PROXY_PREFIX, proxyRoutes } from './proxy.js'
import { createProxyPaths } from './proxy-path.js'
import { createSessionBearer } from './session-bearer.js'
import { provenAdminShop } from './session-token.js'
import { setupRoutes } from './setup.routes.js'
import { setupOperations } from './setup.schemas.js'
import { shopifyRoutes } from './shopify.routes.js'
import { shopifyOperations } from './shopify.schemas.js'
import { createShopifyWebhooks } from './shopify-webhooks.service.js'
import { DEFAULT_PATH_PREFIX, isShopDomain } from './signatures.js'
import { RECEIPT_RETENTION_MS, webhookReceiptsRepo } from './webhook-receipts.repo.js'

/** Shopify app mode's configuration (config.ts). */
export type ShopifyConfig = NonNullable<Config['shopify']>

/** Where Shopify admin frames its embedded apps, beside the shop's own domain. */
const SHOPIFY_ADMIN_ORIGIN = 'https://admin.shopify.com'
/** App Bridge, which Shopify serves from its CDN only (it keeps itself up to date there). */
export const APP_BRIDGE_URL = 'https://cdn.shopify.com/shopifycloud/app-bridge.js'

/**
 * The storefront's subfolder of a buyer's language (`/fr`, `/pt-br`): Shopify serves a shop's
 * published languages other than its primary one under `/{locale}` of its domain, app proxy
 * paths included. Empty when the language is unknown, when the shop's primary language is
 * not known yet, and when it is the primary language (a regional variant of it included:
 * such a subfolder exists only where a market has one).
 */
export function localeSubfolder(locale: string | null, primaryLocale: string | null): string {
  if (locale === null || primaryLocale === null || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/.test(locale)) return ''
  const language = (tag: string) => tag.toLowerCase().split('-')[0]
  return language(locale) === language(primaryLocale) ? '' : `/${locale.toLowerCase()}`
}

export function createShopifyPlatform(shopify: ShopifyConfig): Platform {
  const { apiSecret: secret, apiKey, defaultPlan } = shopify
  // The shops' Admin API access is made with the routes (it needs the database), before any
  // request; the session tokens used as bearer credentials grant it through this too.
  let adminApi: ShopifyAdmin | undefined
  let flow: FlowChannel | undefined
  const grantAtSession: Pick<ShopifyAdmin, 'exchangeSessionToken'> = {
    exchangeSessionToken: (shop, sessionToken) => (adminApi as ShopifyAdmin).exchangeSessionToken(shop, sessionToken),
  }
  return {
    ownsShopDomain: isShopDomain,
    reviewPageUrl: (shopDomain, query, place) =>
      `https://${shopDomain}${localeSubfolder(place.locale, place.primaryLocale)}${place.proxyPath ?? DEFAULT_PATH_PREFIX}${REVIEW_PAGE_PATH}${query}`,
    plansBilledBy: 'Shopify Billing',
    // The webhook receipts that expire (webhook-receipts.repo.ts: RECEIPT_RETENTION_MS after they were taken).
    housekeeping: {
      what: 'Shopify webhook receipts',
      due: (db, at) => webhookReceiptsRepo.anyExpiring(db, at - RECEIPT_RETENTION_MS),
      purge: (db, at, limit) => webhookReceiptsRepo.purgeExpiring(db, at - RECEIPT_RETENTION_MS, limit),
    },
    routes: async (app, { db, services, storefrontApi }) => {
      const { shops, auth, events, privacy } = services
      const admin = createShopifyAdmin({ db, config: shopify, shops, log: app.log })
      adminApi = admin
      flow = createFlowChannel({ db, admin, log: app.log.child({ component: 'shopify-flow' }) })
      app.addHook('onClose', () => admin.close())
      // The catalog backfill: after a shop's first token exchange, on demand, and taken over from a stopped instance.
      const catalogSync = createCatalogSync({ db, admin, shops, events, log: app.log })
      admin.onTokenGranted((shopId) => catalogSync.start(shopId))
      app.addHook('onReady', () => catalogSync.startSweeping())
      app.addHook('onClose', () => catalogSync.close())
      const billing = createShopifyBilling({ db, billing: shopify.billing, apiKey, shops, adminApi: admin, log: app.log })
      // The proxy's path each shop's requests name: remembered, and published to the theme extension once the shop has a token.
      const paths = createProxyPaths({ db, admin, log: app.log })
      admin.onTokenGranted(async (shopId) => {
        void paths.publish(shopId)
      })
      app.addHook('onClose', () => paths.settled())
      const authenticate = createProxyAuth({ secret, defaultPlan, shops, paths })
      await app.register(proxyRoutes, {
        prefix: PROXY_PREFIX,
        db,
        authenticate,
        share: services.share,
        wishlists: services.wishlists,
        invitations: services.invitations,
        storefrontApi,
      })
      await app.register(shopifyRoutes, {
        db,
        secret,
        apiKey,
        defaultPlan,
        webhookBufferBytes: shopify.webhookBufferBytes,
        shops,
        auth,
        privacy,
        adminApi: admin,
        webhooks: createShopifyWebhooks({
          db,
          secret,
          shopRedactMinHours: shopify.shopRedactMinHours,
          shops,
          events,
          privacy,
          adminApi: admin,
          billing,
        }),
      })
      await app.register(setupRoutes, { db, apiKey, adminApi: admin, catalogSync, billing })
      // Shopify Flow's trigger lifecycle callback: which of the wishlist's Flow triggers each shop uses.
      await app.register(flowLifecycleRoutes, { db, secret, shops })
      await app.register(billingRoutes, { billing, config: shopify.billing, shops })
    },
    operations: { ...shopifyOperations, ...setupOperations, ...billingOperations, ...flowLifecycleOperations },
    // App Bridge needs the app's client id; without it the page is framed but has no App Bridge.
    embedding: async (rawQuery) => {
      const shop = await provenAdminShop(rawQuery, { secret, apiKey, nowSeconds: Math.floor(Date.now() / 1000) })
      if (shop === undefined) return undefined
      const frameAncestors = [`https://${shop}`, SHOPIFY_ADMIN_ORIGIN]
      return apiKey === undefined
        ? { frameAncestors }
        : { frameAncestors, script: { src: APP_BRIDGE_URL, meta: { 'shopify-api-key': apiKey } } }
    },
    // Shopify Flow's triggers, fired through the shop's Admin API.
    notificationChannel: () => flow,
    bearerAuthenticator: ({ shops, auth }) => createSessionBearer({ secret, apiKey, defaultPlan, shops, auth, adminApi: grantAtSession }),
  }
}
