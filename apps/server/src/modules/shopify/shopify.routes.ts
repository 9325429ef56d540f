/**
 * Shopify app mode's own routes (docs/api.md, "Shopify app mode"): the webhook intake, the
 * session-token exchange of the embedded admin, and the privacy requests Shopify's
 * `customers/data_request` records. Registered only when SHOPIFY_API_SECRET is set.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { AppError, notFound } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { isoMillis } from '../../lib/time.js'
import type { AuthService } from '../auth/auth.service.js'
import { CustomerExport } from '../privacy/privacy.schemas.js'
import type { PrivacyService } from '../privacy/privacy.service.js'
import type { ShopsService } from '../shops/shops.service.js'
import type { Plan } from '../../db/schema.js'
import { header } from '../../plugins/auth.js'
import { privacyRequestsRepo } from './privacy-requests.repo.js'
import { verifySessionToken } from './session-token.js'
import { DeliveryAnswer, PrivacyRequest, PrivacyRequestParams, SessionRequest, SessionToken } from './shopify.schemas.js'
import { WEBHOOK_DOMAIN_MESSAGE, type ShopifyWebhooks } from './shopify-webhooks.service.js'
import { isShopDomain, isWebhookHmacHeader } from './signatures.js'

/** The admin key session tokens mint from, made on a shop's first session-token exchange (its secret is never shown). */
export const SESSION_KEY_NAME = 'Shopify embedded admin'
/** Shopify's webhook bodies (a product with many variants, a large order) may be larger than the API's 1 MiB. */
export const WEBHOOK_BODY_LIMIT = 5 * 1024 * 1024
/** Seconds Shopify (or anyone) is asked to wait when the webhook bodies in flight fill their budget. */
const WEBHOOK_BUSY_RETRY_AFTER_S = 5

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
}

export const shopifyRoutes: FastifyPluginAsyncTypebox<ShopifyRoutesOptions> = async (app, opts) => {
  const tags = ['shopify']

  // The webhook's HMAC covers the raw bytes: this route reads its body as bytes, kept aside
  // (a Buffer as the body would be walked byte by byte by the NUL check of every body).
  await app.register(async (raw) => {
    const bodies = new WeakMap<FastifyRequest, Buffer>()
    // Bytes reserved by the bodies being received: the Content-Length, or the route's limit
    // for a chunked body; given back when the response ends or the connection closes.
    let inFlight = 0
    raw.removeAllContentTypeParsers()
    raw.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (request, body: Buffer, done) => {
      bodies.set(request, body)
      done(null, undefined)
    })
    raw.post(
      '/v1/platforms/shopify/webhooks',
      {
        bodyLimit: WEBHOOK_BODY_LIMIT,
        // Shopify's own calls: not a storefront client, not counted in its bucket.
        config: { access: ['public'], rateLimit: false, ownBodyLimit: true },
        schema: {
          tags,
          response: { 200: Ok(DeliveryAnswer), ...errors(400, 401, 404, 408, 413, 503) },
        },
        // Before a byte of the body is read: the unsigned headers must be well-formed, and the
        // bodies in flight must fit their budget (each request is unauthenticated until its
        // HMAC is checked, which needs the whole body).
        onRequest: (request, reply, done) => {
          if (!isWebhookHmacHeader(header(request, 'x-shopify-hmac-sha256'))) return done(new AppError('INVALID_SIGNATURE', 'X-Shopify-Hmac-Sha256 must be the base64 of a 32-byte HMAC'))
          const domain = header(request, 'x-shopify-shop-domain')?.toLowerCase()
          if (domain === undefined || !isShopDomain(domain)) return done(new AppError('INVALID_SIGNATURE', WEBHOOK_DOMAIN_MESSAGE))
          const declared = request.headers['content-length']
          const reserved = declared === undefined ? WEBHOOK_BODY_LIMIT : Math.min(Number(declared) || 0, WEBHOOK_BODY_LIMIT)
          if (inFlight + reserved > opts.webhookBufferBytes) {
            reply.header('connection', 'close')
            return done(new AppError('UNAVAILABLE', 'Too many webhook bodies are being received; retry shortly', undefined, { 'retry-after': String(WEBHOOK_BUSY_RETRY_AFTER_S) }))
          }
          inFlight += reserved
          let released = false
          reply.raw.once('close', () => {
            if (released) return
            released = true
            inFlight -= reserved
          })
          done()
        },
      },
      async (request) => {
        const result = await opts.webhooks.receive({
          rawBody: bodies.get(request) ?? Buffer.alloc(0),
          hmac: header(request, 'x-shopify-hmac-sha256'),
          shopDomain: header(request, 'x-shopify-shop-domain'),
          topic: header(request, 'x-shopify-topic'),
          eventId: header(request, 'x-shopify-event-id') ?? header(request, 'x-shopify-webhook-id'),
          requestId: request.id,
          warn: (fields, message) => request.log.warn(fields, message),
        })
        return { ok: true as const, data: { result } }
      },
    )
  })

  app.post(
    '/v1/auth/shopify-session',
    {
      config: { access: ['public'] },
      schema: {
        tags: ['auth'],
        body: SessionRequest,
        response: { 200: Ok(SessionToken), ...errors(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      const domain = await verifySessionToken(request.body.session_token, { secret: opts.secret, apiKey: opts.apiKey })
      let shop = await opts.shops.ensureByDomain(domain, opts.defaultPlan)
      if (shop.uninstalledAt !== null) shop = await opts.shops.setUninstalled(shop.id, null)
      const keys = await opts.shops.listApiKeys(shop.id)
      const keyId = keys.find((k) => k.name === SESSION_KEY_NAME && k.scope === 'admin')?.id ?? (await opts.shops.createApiKey(shop.id, { name: SESSION_KEY_NAME, scope: 'admin' })).keyId
      const issued = await opts.auth.issueAdminToken(shop.id, keyId)
      return { ok: true as const, data: { ...issued, scope: 'admin' as const } }
    },
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
        data: { privacyRequests: rows.map((r) => ({ id: r.id, customerId: r.customer_id, email: r.email, receivedAt: isoMillis(Number(r.received_at)) })) },
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
    async (request, reply) => {
      const row = await privacyRequestsRepo.byId(opts.db, request.ctx.shop.id, request.params.id)
      if (!row) throw notFound('Privacy request')
      reply.header('cache-control', 'no-store')
      const leave = await opts.privacy.enterExport(request.ctx.shop.id)
      try {
        return { ok: true as const, data: await opts.privacy.exportCustomer(request.ctx, { customerId: row.customer_id, email: row.email ?? undefined }) }
      } finally {
        leave()
      }
    },
  )
}

