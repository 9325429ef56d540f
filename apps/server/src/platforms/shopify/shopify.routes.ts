/**
 * Shopify app mode's own routes (docs/api.md, "Shopify app mode"): the webhook intake, the
 * session-token exchange of the embedded admin, and the privacy requests Shopify's
 * `customers/data_request` records. Registered only when SHOPIFY_API_SECRET is set.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Counter, Gauge } from 'prom-client'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { AppError, notFound } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import type { AuthService } from '../../modules/auth/auth.service.js'
import { CustomerExport } from '../../modules/privacy/privacy.schemas.js'
import type { PrivacyService } from '../../modules/privacy/privacy.service.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Plan } from '../../db/schema.js'
import { header } from '../../plugins/auth.js'
import { privacyRequestsRepo } from './privacy-requests.repo.js'
import type { ShopifyAdmin } from './admin-api.js'
import { createEmbeddedAdmin } from './embedded-admin.service.js'
import { DeliveryAnswer, PrivacyRequest, PrivacyRequestParams, SessionRequest, SessionToken } from './shopify.schemas.js'
import { WEBHOOK_DOMAIN_MESSAGE, type ShopifyWebhooks } from './shopify-webhooks.service.js'
import { isShopDomain, isWebhookHmacHeader } from './signatures.js'
import { WEBHOOK_BODY_LIMIT, WebhookIntake } from './webhook-intake.js'

export interface ShopifyRoutesOptions {
  db: Db
  secret: string
  apiKey: string | undefined
  defaultPlan: Plan
  webhooks: ShopifyWebhooks
  /** Bytes of webhook bodies received at once, together (SHOPIFY_WEBHOOK_BUFFER_MB). */
  webhookBufferBytes: number
  shops: ShopsService
  auth: AuthService
  privacy: PrivacyService
  /** The shops' Admin API access, granted at their sessions. */
  adminApi: ShopifyAdmin
}

export const shopifyRoutes: FastifyPluginAsyncTypebox<ShopifyRoutesOptions> = async (app, opts) => {
  const tags = ['shopify']
  const embeddedAdmin = createEmbeddedAdmin({
    secret: opts.secret,
    apiKey: opts.apiKey,
    defaultPlan: opts.defaultPlan,
    shops: opts.shops,
    auth: opts.auth,
    adminApi: opts.adminApi,
  })

  // The webhook's HMAC covers the raw bytes: this route reads its body itself, as bytes kept
  // aside (a Buffer as the body would be walked byte by byte by the NUL check of every body),
  // counting what arrives against the budget of bodies in flight.
  await app.register(async (raw) => {
    const intake = new WebhookIntake(opts.webhookBufferBytes)
    new Gauge({
      name: 'wishlist_shopify_webhook_body_bytes',
      help: 'Bytes of Shopify webhook bodies received and not yet answered (their budget: SHOPIFY_WEBHOOK_BUFFER_MB)',
      registers: [app.metrics],
      collect() {
        this.set(intake.receivedBytes)
      },
    })
    new Counter({
      name: 'wishlist_shopify_webhook_refused_total',
      help: 'Shopify webhook bodies refused before they were whole, by reason (per_client: 429, budget: 503, slow: 408, too_large: 413)',
      labelNames: ['reason'] as const,
      registers: [app.metrics],
      collect() {
        this.reset()
        for (const [reason, n] of Object.entries(intake.refused)) this.inc({ reason }, n)
      },
    })
    raw.removeAllContentTypeParsers()
    raw.addContentTypeParser('*', (request, payload, done) => intake.read(request, payload, done))
    raw.post(
      '/v1/platforms/shopify/webhooks',
      {
        bodyLimit: WEBHOOK_BODY_LIMIT,
        // Shopify's own calls: not a storefront client, not counted in its bucket.
        config: { access: ['public'], rateLimit: false, ownBodyLimit: true },
        schema: {
          tags,
          response: { 200: Ok(DeliveryAnswer), ...errors(400, 401, 404, 408, 413, 429, 503) },
        },
        // Before a byte of the body is read: the unsigned headers must be well-formed, and the
        // sender and the bodies in flight within their bounds (each request is unauthenticated
        // until its HMAC is checked, which needs the whole body).
        onRequest: (request, reply, done) => {
          if (!isWebhookHmacHeader(header(request, 'x-shopify-hmac-sha256')))
            return done(new AppError('INVALID_SIGNATURE', 'X-Shopify-Hmac-Sha256 must be the base64 of a 32-byte HMAC'))
          const domain = header(request, 'x-shopify-shop-domain')?.toLowerCase()
          if (domain === undefined || !isShopDomain(domain)) return done(new AppError('INVALID_SIGNATURE', WEBHOOK_DOMAIN_MESSAGE))
          done(intake.admit(request, reply))
        },
      },
      async (request) => {
        // The payload's shape is that of the API version Shopify says it used: kept in the log
        // with each delivery, so a subscription left on an old version shows.
        const apiVersion = header(request, 'x-shopify-api-version')
        const shop = header(request, 'x-shopify-shop-domain')
        const topic = header(request, 'x-shopify-topic')
        const result = await opts.webhooks.receive({
          rawBody: intake.bodyOf(request),
          hmac: header(request, 'x-shopify-hmac-sha256'),
          shopDomain: shop,
          topic,
          eventId: header(request, 'x-shopify-event-id') ?? header(request, 'x-shopify-webhook-id'),
          requestId: request.id,
          warn: (fields, message) => request.log.warn({ ...fields, apiVersion }, message),
        })
        request.log.info({ shop, topic, apiVersion, result }, 'Shopify webhook')
        return { ok: true as const, data: { result } }
      },
    )
  })

  app.post(
    '/v1/auth/shopify-session',
    {
      // An admin token: `private, no-store` (plugins/caching.ts).
      config: { access: ['public'], cache: 'private' },
      schema: {
        tags: ['auth'],
        body: SessionRequest,
        response: { 200: Ok(SessionToken), ...errors(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({
      ok: true as const,
      data: { ...(await embeddedAdmin.exchange(request.body.session_token)), scope: 'admin' as const },
    }),
  )

  const admin = { access: ['admin' as const] }

  app.get(
    '/v1/admin/privacy-requests',
    {
      config: admin,
      schema: {
        tags: ['privacy'],
        response: { 200: Ok(Type.Object({ privacyRequests: Type.Array(PrivacyRequest) })), ...errors(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const rows = await privacyRequestsRepo.newestFirst(opts.db, request.ctx.shop.id)
      return {
        ok: true as const,
        data: {
          privacyRequests: rows.map((r) => ({
            id: r.id,
            customerId: r.customer_id,
            email: r.email,
            receivedAt: isoMillis(Number(r.received_at)),
          })),
        },
      }
    },
  )

  app.get(
    '/v1/admin/privacy-requests/:id/export',
    {
      config: admin,
      schema: {
        tags: ['privacy'],
        params: PrivacyRequestParams,
        response: { 200: Ok(CustomerExport), ...errors(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const row = await privacyRequestsRepo.byId(opts.db, request.ctx.shop.id, request.params.id)
      if (!row) throw notFound('Privacy request')
      const leave = await opts.privacy.enterExport(request.ctx.shop.id)
      try {
        return {
          ok: true as const,
          data: await opts.privacy.exportCustomer(request.ctx, { customerId: row.customer_id, email: row.email ?? undefined }),
        }
      } finally {
        leave()
      }
    },
  )
}
