/**
 * Shopify Flow's trigger lifecycle callback (docs/shopify.md, "Shopify Flow"; the extension
 * extensions/wishlist-flow-lifecycle; recorded by modules/notifications/flow.ts): Flow POSTs whether a shop has an enabled workflow that
 * starts with one of the wishlist's triggers, signed as Shopify signs webhooks
 * (`X-Shopify-Hmac-Sha256`, the raw body with the app secret: platforms/shopify/signatures.ts).
 * Flow lets the merchant enable the workflow only once this answers 2xx, so every well-formed,
 * signed callback is answered 200, with what it did. Registered in Shopify app mode.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Db } from '../../db/types.js'
import { AppError, invalid } from '../../lib/errors.js'
import { errors, type OperationDocs, Ok } from '../../lib/http-schemas.js'
import { applyLifecycle, lifecycleBody } from '../../modules/notifications/flow.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import { header } from '../../plugins/auth.js'
import { isShopDomain, webhookHmacValid } from './signatures.js'

export const FLOW_LIFECYCLE_PATH = '/v1/platforms/shopify/flow/lifecycle'
/** A lifecycle callback is a few hundred bytes. */
const LIFECYCLE_BODY_LIMIT = 16 * 1024

export const LifecycleAnswer = Type.Object({
  result: Type.Union([Type.Literal('recorded'), Type.Literal('stale'), Type.Literal('ignored')], {
    description:
      "`recorded`: the trigger's status in the shop is the callback's; `stale`: a callback with a newer `timestamp` was recorded before, nothing changed; `ignored`: a trigger that is not the wishlist's, or a shop the app does not know",
  }),
})

export const flowLifecycleOperations: OperationDocs = {
  [`POST ${FLOW_LIFECYCLE_PATH}`]: {
    operationId: 'receiveShopifyFlowLifecycle',
    summary: "Receive Shopify Flow's trigger lifecycle callback",
    description:
      'Signed with `X-Shopify-Hmac-Sha256` (base64 HMAC-SHA256 of the raw body with the app secret); a missing or wrong one is 401 INVALID_SIGNATURE. ' +
      "The body is Flow's: `{flow_trigger_definition_id, has_enabled_flow, shop_id, shopify_domain, timestamp}`; another shape, a domain that is not `*.myshopify.com`, or a `shop_id` that is not the shop's Shopify id (once known) is 400 VALIDATION_ERROR. " +
      'The status of the trigger (named by its handle or its name) in the shop becomes `has_enabled_flow` unless a callback with a newer `timestamp` was recorded; the wishlist fires a trigger only while it is enabled. Bodies up to 16 KiB.',
    responses: { 200: "Receive Shopify Flow's trigger lifecycle callback" },
  },
}

export interface FlowLifecycleRoutesOptions {
  db: Db
  secret: string
  shops: Pick<ShopsService, 'byDomain'>
}

export const flowLifecycleRoutes: FastifyPluginAsyncTypebox<FlowLifecycleRoutesOptions> = async (app, opts) => {
  // The HMAC covers the raw bytes: this route's body is kept as bytes, parsed after the check.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: LIFECYCLE_BODY_LIMIT }, (_request, body, done) => done(null, body))
  app.post(
    FLOW_LIFECYCLE_PATH,
    {
      bodyLimit: LIFECYCLE_BODY_LIMIT,
      // Shopify's own calls: not a storefront client, not counted in its bucket.
      config: { access: ['public'], rateLimit: false },
      schema: { tags: ['shopify'], response: { 200: Ok(LifecycleAnswer), ...errors(400, 401, 413) } },
    },
    async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      if (!webhookHmacValid(raw, header(request, 'x-shopify-hmac-sha256'), opts.secret))
        throw new AppError('INVALID_SIGNATURE', 'X-Shopify-Hmac-Sha256 is not the HMAC of this body with the app secret')
      let parsed: unknown
      try {
        parsed = JSON.parse(raw.toString('utf8'))
      } catch {
        throw invalid([{ path: '/', message: 'must be JSON' }])
      }
      const body = lifecycleBody(parsed)
      if (body === undefined)
        throw invalid(
          [{ path: '/', message: 'must be {flow_trigger_definition_id, has_enabled_flow, shop_id, shopify_domain, timestamp}' }],
          'The body is not a Flow lifecycle callback',
        )
      const domain = body.shopify_domain.toLowerCase()
      if (!isShopDomain(domain)) throw invalid([{ path: '/shopify_domain', message: 'must be a *.myshopify.com domain' }])
      const shop = await opts.shops.byDomain(domain)
      let result: 'recorded' | 'stale' | 'ignored' = 'ignored'
      if (shop !== undefined) {
        if (shop.shopifyShopId !== null && shop.shopifyShopId !== String(body.shop_id))
          throw invalid([{ path: '/shop_id', message: "is not the shop's Shopify id" }])
        result = await applyLifecycle(opts.db, shop.id, body)
      }
      request.log.info(
        { shop: domain, trigger: body.flow_trigger_definition_id, enabled: body.has_enabled_flow, result },
        'Shopify Flow lifecycle callback',
      )
      return { ok: true as const, data: { result } }
    },
  )
}
