/**
 * The seam between the service and the commerce platforms it runs inside (docs/architecture.md,
 * "Platforms"). A platform the service is configured for (Shopify app mode) is one adapter in
 * the list app.ts builds (`configuredPlatforms`), made from the configuration alone; generic
 * code asks the list, never a platform by name. A second platform is a folder of its own
 * beside platforms/shopify/ and one more line in that list.
 */
import type { FastifyPluginAsync } from 'fastify'
import type { Db } from '../db/types.js'
import type { OperationDocs } from '../lib/http-schemas.js'
import type { AuthService, BearerContext } from '../modules/auth/auth.service.js'
import type { EventsService } from '../modules/events/events.service.js'
import type { NotificationChannel } from '../modules/notifications/channel.js'
import type { PrivacyService } from '../modules/privacy/privacy.service.js'
import type { InvitationsService } from '../modules/reviews/invitations.service.js'
import type { ShopsService } from '../modules/shops/shops.service.js'
import type { ShareService } from '../modules/wishlists/share.service.js'
import type { WishlistsService } from '../modules/wishlists/wishlists.service.js'

/** Rows a platform keeps for a while (Shopify: its webhook receipts), purged by the delivery worker's hourly housekeeping. */
export interface PlatformHousekeeping {
  /** What is purged, as the log line names it. */
  readonly what: string
  /** Whether any row is due at `at` (a read, so an idle worker writes nothing). */
  due(db: Db, at: number): Promise<boolean>
  /** Deletes up to `limit` rows due at `at`, oldest first, in one statement; returns how many. */
  purge(db: Db, at: number, limit: number): Promise<number>
}

/**
 * What buildApp hands a platform's routes: the database, the app's services (a platform acts
 * through them, as a module does: its webhooks feed the events intake and the privacy
 * erasure), and the storefront API (the wishlist and reviews routes), which a platform's
 * signed proxy serves a second time, each route marked `config.proxy` with the platform's
 * authenticator (plugins/auth.ts).
 */
export interface PlatformHost {
  db: Db
  services: {
    shops: ShopsService
    auth: AuthService
    events: EventsService
    privacy: PrivacyService
    wishlists: WishlistsService
    share: ShareService
    invitations: InvitationsService
  }
  storefrontApi: FastifyPluginAsync<{ proxied: boolean }>
}

/**
 * How a platform's admin embeds the dashboard, for a request whose query proves one of its
 * shops (`Platform.embedding`).
 */
export interface DashboardEmbedding {
  /** The origins that may frame the page (the CSP's `frame-ancestors`): the shop's admin. */
  readonly frameAncestors: readonly string[]
  /**
   * The admin's own script (Shopify: App Bridge, from Shopify's CDN), served as the first script
   * of the page's `<head>` after the `<meta name content>` tags it reads; the page's CSP allows
   * that one URL.
   */
  readonly script?: { readonly src: string; readonly meta: Readonly<Record<string, string>> }
}

/**
 * Bearer tokens a platform vouches for (Shopify: its admin's session tokens, so the embedded
 * dashboard sends a fresh one with every call), asked by plugins/auth.ts only for a token that
 * is not one of the service's own. Refusals are thrown as AppError, as for the service's tokens.
 */
export interface PlatformBearerAuthenticator {
  /**
   * The context of a token verified before, from caches alone, so the request hook stays
   * synchronous for a repeated token; undefined when it has to be verified (`authenticate`).
   */
  cached(token: string, requestId: string): BearerContext | undefined
  /** The context the token is worth, once verified; undefined when it is not one of this platform's tokens. */
  authenticate(token: string, requestId: string): Promise<BearerContext | undefined>
}

export interface Platform {
  /** Whether a shop domain is one of this platform's shops (its one rule for them). */
  ownsShopDomain(domain: string): boolean
  /**
   * Where a buyer of this platform's shop writes a review, for the invitation `query`
   * (`?invitation=…`): a page inside the shop's own storefront, in the buyer's language
   * (`place.locale`) where the storefront has one, at the path the shop serves it from.
   */
  reviewPageUrl(
    shopDomain: string,
    query: string,
    place: { locale: string | null; proxyPath: string | null; primaryLocale: string | null },
  ): string
  /**
   * Who charges this platform's shops for their plans (Shopify: "Shopify Billing"): their plan
   * follows what the merchant approved there, so the operator's CLI does not set it unforced.
   */
  readonly plansBilledBy?: string
  readonly housekeeping?: PlatformHousekeeping
  /** Its own routes (Shopify: the app proxy, the webhook intake, the embedded admin's sign-in), registered after the generic ones. */
  readonly routes: FastifyPluginAsync<PlatformHost>
  /** The OpenAPI docs of those routes (plugins/openapi.ts), as a module's `*Operations`. */
  readonly operations: OperationDocs
  /**
   * How the dashboard is embedded for a request whose query (`rawQuery`) proves a shop of this
   * platform (its embedded admin); undefined when it proves none.
   */
  embedding?(rawQuery: string): Promise<DashboardEmbedding | undefined>
  /**
   * The notification channel this platform's shops have (Shopify: Shopify Flow), for the
   * notification worker; undefined until its routes are registered (it calls the platform's API).
   */
  notificationChannel?(): NotificationChannel | undefined
  /** Its bearer tokens (Shopify: session tokens), made with the services they act through. */
  bearerAuthenticator?(services: { shops: ShopsService; auth: AuthService }): PlatformBearerAuthenticator
}

/** The platform whose shop `domain` is, among those configured; undefined for a shop outside them. */
export const platformOf = (platforms: readonly Platform[], domain: string): Platform | undefined =>
  platforms.find((p) => p.ownsShopDomain(domain))
