/**
 * buildApp(): registers plugins and modules; never listens (server.ts does).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions, LogController } from 'fastify'
import type { Redis } from 'ioredis'
import { type Config, DEFAULT_PG_POOL_MAX } from './config.js'
import type { Storage } from './db/connect.js'
import { invalid } from './lib/errors.js'
import { createExportGate } from './lib/export-gate.js'
import { requestIdGenerator } from './lib/ids.js'
import { stdoutSink } from './lib/log-sink.js'
import { adminRoutes } from './modules/admin/admin.routes.js'
import { analyticsRoutes } from './modules/analytics/analytics.routes.js'
import { type AnalyticsService, createAnalyticsService } from './modules/analytics/analytics.service.js'
import { authRoutes } from './modules/auth/auth.routes.js'
import { dashboardRoutes } from './modules/dashboard/dashboard.routes.js'
import { type AuthService, createAuthService } from './modules/auth/auth.service.js'
import { eventsRoutes } from './modules/events/events.routes.js'
import { createEventsService, type EventsService } from './modules/events/events.service.js'
import { channelsRoutes } from './modules/notifications/channels.routes.js'
import { contactsRoutes, shopperContactsRoutes } from './modules/notifications/contacts.routes.js'
import { optOutRoutes } from './modules/notifications/opt-out.routes.js'
import { type ChannelsService, createChannelsService } from './modules/notifications/channels.service.js'
import { opsRoutes } from './modules/ops/ops.routes.js'
import { privacyRoutes } from './modules/privacy/privacy.routes.js'
import { createPrivacyService, type PrivacyService } from './modules/privacy/privacy.service.js'
import { invitationsRoutes } from './modules/reviews/invitations.routes.js'
import { createInvitationsService, type InvitationsService, reviewUrlMaker } from './modules/reviews/invitations.service.js'
import { reviewPageRoutes } from './modules/reviews/review-page.routes.js'
import { reviewsRoutes } from './modules/reviews/reviews.routes.js'
import { createReviewsService, type ReviewsService } from './modules/reviews/reviews.service.js'
import { createShopsService, type ShopsService } from './modules/shops/shops.service.js'
import type { Platform } from './platforms/platform.js'
import { createShopifyPlatform } from './platforms/shopify/platform.js'
import { isShopDomain } from './platforms/shopify/signatures.js'
import type { ResolveHost } from './modules/webhooks/ssrf-guard.js'
import { createWebhookSender, type WebhookSender } from './modules/webhooks/webhook-sender.js'
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js'
import { createWebhooksService, type WebhooksService } from './modules/webhooks/webhooks.service.js'
import { storefrontRoutes } from './modules/storefront/storefront.routes.js'
import { createImportService, type ImportService } from './modules/wishlists/import.service.js'
import { importRoutes } from './modules/wishlists/import.routes.js'
import { listRoutes } from './modules/wishlists/lists.routes.js'
import { createListsService, type ListsService } from './modules/wishlists/lists.service.js'
import { shareRoutes } from './modules/wishlists/share.routes.js'
import { createShareService, type ShareService } from './modules/wishlists/share.service.js'
import { wishlistRoutes } from './modules/wishlists/wishlists.routes.js'
import { createPageCache } from './modules/wishlists/page-cache.js'
import { createWishlistsService, type WishlistsService } from './modules/wishlists/wishlists.service.js'
import { accessLogPlugin, serializeRequest } from './plugins/access-log.js'
import { authPlugin } from './plugins/auth.js'
import { cachingPlugin } from './plugins/caching.js'
import { corsPlugin } from './plugins/cors.js'
import { clientErrorHandler, errorsPlugin, sendError } from './plugins/errors.js'
import { metricsPlugin } from './plugins/metrics.js'
import { apiReferenceRoutes } from './plugins/api-reference.js'
import { bodyParsingPlugin } from './plugins/body-parsing.js'
import { connectionLimitPlugin } from './plugins/connection-limit.js'
import { operationDocs, webhookEvents } from './openapi-operations.js'
import { openapiPlugin } from './plugins/openapi.js'
import { rateLimitPlugin } from './plugins/rate-limit.js'

export const BODY_LIMIT_BYTES = 1024 * 1024
/** Characters of one path parameter as sent (percent-escapes included). */
export const MAX_PARAM_LENGTH = 4096

export interface AppDeps {
  config: Config
  storage: Storage
  redis?: Redis | undefined
  /** Redis key prefix of the shared rate-limit budget. */
  rateLimitNamespace?: string
  logger?: FastifyServerOptions['logger']
  /**
   * Serve the demo storefront at /demo and its unauthenticated POST /demo/login: only
   * `wishlist serve --demo` turns it on, whatever NODE_ENV says. Off by default.
   */
  demoPages?: boolean
  /** How long a node may serve a cached shop or API-key status (revocation reaches other nodes within it). */
  credentialCacheTtlMs?: number
  /** Where the built dashboard lives (tests point it elsewhere); defaults to apps/dashboard/dist. */
  dashboardDist?: string
  /** Name resolution behind the webhook SSRF guard (tests map names to loopback with it). */
  webhookResolve?: ResolveHost
}

export interface Services {
  shops: ShopsService
  auth: AuthService
  webhooks: WebhooksService
  /** Outbound HTTP of webhooks; closed with the app. */
  webhookSender: WebhookSender
  events: EventsService
  wishlists: WishlistsService
  lists: ListsService
  share: ShareService
  imports: ImportService
  reviews: ReviewsService
  invitations: InvitationsService
  analytics: AnalyticsService
  privacy: PrivacyService
  /** The merchant's notification channels (Klaviyo). */
  channels: ChannelsService
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
    /** The configured platforms this app registered (their routes, and what they hand the background workers). */
    platforms: readonly Platform[]
  }
}

/**
 * What pino censors. Request lines need nothing: LOG_SERIALIZERS writes no headers and a
 * redacted URL (every credential a URL carries: plugins/access-log.ts). The other lines log ids, statuses and `err`; an error object is the
 * one
 * place a credential could ride along (a library error carrying the request it failed on),
 * so its credential fields are censored. Paths are named, not wildcards: a wildcard makes
 * pino run the censor over every field of every line (bench: 6% of a GET page's CPU).
 */
export const LOG_REDACT = [
  'err.api_secret',
  'err.secret',
  'err.token',
  'err.headers.authorization',
  'err.headers["x-storefront-key"]',
  'err.headers["x-guest-id"]',
  'err.headers.cookie',
  'err.config.headers.authorization',
]

/** Fastify's request serializer, with the URL redacted: the same fields as the access line. */
export const LOG_SERIALIZERS = { req: serializeRequest }

function loggerOptions(deps: AppDeps): FastifyServerOptions['logger'] {
  if (deps.logger === undefined) {
    // Lines go to stdout in batches of 4 KiB, at least every second and at exit (lib/log-sink.ts).
    return { level: deps.config.logLevel, redact: LOG_REDACT, serializers: LOG_SERIALIZERS, stream: stdoutSink() }
  }
  // Callers passing their own options (tests with a stream) get the same URL redaction.
  if (typeof deps.logger === 'object' && deps.logger !== null)
    return { ...deps.logger, serializers: { ...LOG_SERIALIZERS, ...(deps.logger.serializers ?? {}) } }
  return deps.logger
}

function createValidators() {
  // Query strings and paths arrive as text and are coerced to their declared types;
  // bodies are JSON and must already carry the right types ("5" is not a rating).
  const options = { allErrors: false, useDefaults: true, strict: false, removeAdditional: false } as const
  const body = new Ajv({ ...options, coerceTypes: false })
  const text = new Ajv({ ...options, coerceTypes: 'array' })
  addFormats.default(body)
  addFormats.default(text)
  return { body, text }
}

/**
 * The platforms the service runs inside, as its configuration says (Shopify app mode:
 * Shopify); generic code asks this list. A platform is a folder of platforms/ and a line here.
 */
export const configuredPlatforms = (config: Config): Platform[] => [...(config.shopify ? [createShopifyPlatform(config.shopify)] : [])]

export function createServices(deps: AppDeps): Services {
  const cacheTtlMs = deps.credentialCacheTtlMs ?? 5_000
  const shops = createShopsService({ db: deps.storage.db, cacheTtlMs })
  const auth = createAuthService({ db: deps.storage.db, jwtSecret: deps.config.jwtSecret, shops, cacheTtlMs })
  const { webhooks: wh } = deps.config
  const webhookSender = createWebhookSender({
    timeoutMs: wh.timeoutMs,
    allowPrivateTargets: wh.allowPrivateTargets,
    ...(deps.webhookResolve ? { resolve: deps.webhookResolve } : {}),
  })
  const webhooks = createWebhooksService({
    storage: deps.storage,
    policy: { allowInsecure: wh.allowInsecure, allowPrivateTargets: wh.allowPrivateTargets },
    sender: webhookSender,
    retryScheduleSec: wh.retryScheduleSec,
  })
  // `reads`: where the reads that may lag go (the read replica while it keeps up: db/replica.ts).
  const storage = { db: deps.storage.db, backend: deps.storage.backend, reads: deps.storage.reads }
  // One budget for the cached bodies of wishlist pages and shared reads.
  const pages = { pageCache: createPageCache(deps.config.pageCacheMb * 1024 * 1024), changeStamp: deps.storage.changeStamp }
  const wishlists = createWishlistsService({ ...storage, ...pages })
  const lists = createListsService(storage)
  const share = createShareService({ ...storage, ...pages, shops, publicBaseUrl: deps.config.publicBaseUrl })
  const imports = createImportService(storage)
  const reviews = createReviewsService(storage)
  const analytics = createAnalyticsService({ db: deps.storage.db, reads: deps.storage.reads })
  const reviewUrl = reviewUrlMaker(deps.config.publicBaseUrl, configuredPlatforms(deps.config))
  const invitations = createInvitationsService({ db: deps.storage.db, reviewUrl, reviews })
  const events = createEventsService({ ...storage, wishlists, invitations })
  // Exports' queries take at most half the pool (SQLite: half of PostgreSQL's default pool).
  const { database } = deps.config
  const poolSize = database.kind === 'postgres' ? (database.poolMax ?? DEFAULT_PG_POOL_MAX) : DEFAULT_PG_POOL_MAX
  const exportGate = createExportGate({
    connections: Math.floor(poolSize / 2),
    redis: deps.redis,
    namespace: deps.rateLimitNamespace ?? deps.config.rateLimit.redisPrefix,
  })
  const privacy = createPrivacyService({ ...storage, publicBaseUrl: deps.config.publicBaseUrl, reviewUrl, exportGate })
  const channels = createChannelsService({
    db: deps.storage.db,
    config: deps.config.notifications,
    // Shopify Flow: Shopify's shops, in Shopify app mode.
    flowShop: (domain) => deps.config.shopify !== undefined && isShopDomain(domain),
  })
  return {
    shops,
    auth,
    wishlists,
    lists,
    share,
    imports,
    reviews,
    invitations,
    analytics,
    webhooks,
    webhookSender,
    events,
    privacy,
    channels,
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps
  const app = Fastify({
    logger: loggerOptions(deps),
    genReqId: requestIdGenerator(),
    bodyLimit: BODY_LIMIT_BYTES,
    // A request whose headers and body have not all arrived in time is answered 408 and its
    // connection closed (plugins/errors.ts, clientErrorHandler), its buffer freed. Node checks
    // the open requests every `connectionsCheckingInterval` ms (a quarter of the limit here),
    // and enforces the request timeout only when the headers' timeout is not longer.
    requestTimeout: config.requestTimeoutMs,
    // An idle keep-alive connection is closed after 5 s (Fastify's default is 72 s). Node 24.6+
    // closes it a second later (keepAliveTimeoutBuffer), so a client reusing it at 5 s is not cut off.
    keepAliveTimeout: 5_000,
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(config.requestTimeoutMs / 4))),
    },
    // A hop count is valid for proxy-addr though Fastify's types omit it.
    trustProxy: config.trustProxy as boolean | string,
    // A path parameter may be a product handle of 255 characters (delete by handle), which
    // percent-encoded takes up to 12 characters each; each route's schema bounds its own.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Fastify's default logs two lines per request ("incoming request", "request
    // completed"); one line at the end (plugins/access-log.ts) carries the same facts at
    // half the cost (bench). Our error handler (plugins/errors.ts) logs errors itself.
    logController: new LogController({ disableRequestLogging: true }),
    clientErrorHandler,
    // Errors the router raises before any route runs (a malformed %-escape, a path
    // parameter over MAX_PARAM_LENGTH characters) get the documented envelope, not Fastify's own body.
    frameworkErrors: (err, request, reply) => {
      const tooLong = err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      const message = tooLong
        ? `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`
        : 'The URL is not valid (malformed percent-encoding)'
      // No hook runs before these errors, so the request id is set here.
      reply.header('x-request-id', request.id)
      return sendError(
        request,
        reply,
        invalid(
          [{ path: 'params', message: tooLong ? `must be at most ${MAX_PARAM_LENGTH} characters` : 'must be a valid URL component' }],
          message,
        ),
      )
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  const validators = createValidators()
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? validators.body : validators.text).compile(schema))
  // Hooks on every request are synchronous (callback style) where they can be: an async
  // hook costs a promise and a microtask turn per request (bench: the GET page).
  await app.register(bodyParsingPlugin)

  // Set before anything can answer, so every response carries it (a hook on onSend would
  // cost every response a pass through Fastify's onSend runner).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })

  const services = createServices(deps)
  app.decorate('services', services)
  const platforms = configuredPlatforms(config)
  app.decorate('platforms', platforms)
  app.addHook('onClose', async () => {
    await services.webhookSender.close()
  })

  await app.register(errorsPlugin)
  await app.register(accessLogPlugin)
  await app.register(metricsPlugin)
  await app.register(connectionLimitPlugin, { maxPerClient: config.maxConnectionsPerClient })
  await app.register(corsPlugin)
  // Cache-Control and Vary by the route's access rule (before the credentials are read).
  await app.register(cachingPlugin)
  await app.register(authPlugin, { auth: services.auth, shops: services.shops, platforms })
  await app.register(openapiPlugin, {
    publicBaseUrl: config.publicBaseUrl,
    operationDocs: Object.assign({}, operationDocs, ...platforms.map((p) => p.operations)),
    webhookEvents,
  })
  await app.register(rateLimitPlugin, {
    ...config.rateLimit,
    redis: deps.redis,
    namespace: deps.rateLimitNamespace ?? config.rateLimit.redisPrefix,
  })
  // The API reference (/docs), after the limiter: its own bucket per client address.
  await app.register(apiReferenceRoutes, { sendTimeoutMs: config.requestTimeoutMs })

  await app.register(opsRoutes, {
    storage: deps.storage,
    redis: deps.redis,
    metricsToken: config.metricsToken,
    publicBaseUrl: config.publicBaseUrl,
  })
  await app.register(authRoutes, { auth: services.auth })
  await app.register(adminRoutes, { shops: services.shops, auth: services.auth })
  await app.register(webhooksRoutes, { webhooks: services.webhooks })
  await app.register(channelsRoutes, { channels: services.channels })
  // Who may be notified: the merchant's contacts (the shopper's are in the storefront API) and the signed opt-out link's page.
  await app.register(contactsRoutes, { db: deps.storage.db })
  await app.register(optOutRoutes, { db: deps.storage.db, shops: services.shops, config })
  await app.register(eventsRoutes, { events: services.events })
  // The storefront API (wishlists, reviews, the shopper's contact): served here, and through a platform's signed proxy.
  const storefrontApi: FastifyPluginAsync<{ proxied: boolean }> = async (scope, { proxied }) => {
    // The proxy's second registration leaves the page-cache metric to the first.
    await scope.register(wishlistRoutes, { wishlists: services.wishlists, pageCacheMetric: !proxied })
    await scope.register(listRoutes, { lists: services.lists })
    await scope.register(shareRoutes, { share: services.share })
    await scope.register(importRoutes, { imports: services.imports })
    await scope.register(reviewsRoutes, { reviews: services.reviews })
    await scope.register(invitationsRoutes, { invitations: services.invitations })
    // The shopper's e-mail for notifications, with their consent (the widget's notification form).
    await scope.register(shopperContactsRoutes, { db: deps.storage.db })
  }
  await app.register(storefrontApi, { proxied: false })
  await app.register(analyticsRoutes, { analytics: services.analytics })
  await app.register(storefrontRoutes, {
    shops: services.shops,
    auth: services.auth,
    demo: deps.demoPages === true,
  })
  await app.register(privacyRoutes, { privacy: services.privacy })
  await app.register(reviewPageRoutes, { invitations: services.invitations, shops: services.shops })
  // Each platform's own routes (Shopify app mode, with SHOPIFY_API_SECRET: its app proxy, webhooks and admin sign-in).
  for (const platform of platforms) await app.register(platform.routes, { db: deps.storage.db, services, storefrontApi })
  await app.register(dashboardRoutes, { ...(deps.dashboardDist ? { distDir: deps.dashboardDist } : {}), platforms })

  return app
}
