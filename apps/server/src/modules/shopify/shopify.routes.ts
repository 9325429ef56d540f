/**
 * Shopify app mode's own routes (docs/api.md, "Shopify app mode"): the webhook intake, the
 * session-token exchange of the embedded admin, and the privacy requests Shopify's
 * `customers/data_request` records. Registered only when SHOPIFY_API_SECRET is set.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { notFound } from '../../lib/errors.js'
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
import type { ShopifyWebhooks } from './shopify-webhooks.service.js'

/** The admin key session tokens mint from, made on a shop's first session-token exchange (its secret is never shown). */
export const SESSION_KEY_NAME = 'Shopify embedded admin'
/** Shopify's webhook bodies (a product with many variants, a large order) may be larger than the API's 1 MiB. */
const WEBHOOK_BODY_LIMIT = 5 * 1024 * 1024

export interface ShopifyRoutesOptions {
  db: Db
  secret: string
  apiKey: string | undefined
  defaultPlan: Plan
  webhooks: ShopifyWebhooks
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
        config: { access: ['public'], rateLimit: false },
        schema: {
          tags,
          response: { 200: Ok(DeliveryAnswer), ...errors(400, 401, 404) },
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
      return { ok: true as const, data: await opts.privacy.exportCustomer(request.ctx, { customerId: row.customer_id, email: row.email ?? undefined }) }
    },
  )
}

