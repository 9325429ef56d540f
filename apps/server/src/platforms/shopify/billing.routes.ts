/**
 * The embedded admin's plan page (docs/shopify.md, "Billing"): the shop's plan as Shopify's
 * subscriptions say, and the merchant's choice of plan (billing.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ShopifyBillingConfig } from '../../config.js'
import type { Plan } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import { BILLING_CURRENCY, BILLING_INTERVAL, PAID_PLANS, type ShopifyBilling, subscriptionOf } from './billing.js'
import { ChoosePlanBody, ChosenPlan, ShopifyBilling as ShopifyBillingSchema } from './billing.schemas.js'
import { isShopDomain } from './signatures.js'

export interface BillingRoutesOptions {
  billing: ShopifyBilling
  config: ShopifyBillingConfig
  shops: Pick<ShopsService, 'get'>
}

export const billingRoutes: FastifyPluginAsyncTypebox<BillingRoutesOptions> = async (app, opts) => {
  const shopifyShop = (shop: Shop): Shop => {
    if (!isShopDomain(shop.domain)) throw new AppError('NOT_FOUND', 'This shop is not a Shopify shop: its plan is set by the operator')
    return shop
  }

  /** The plan page's state: `plan` as confirmed (or the stored one), the newest subscription, the offers. */
  async function stateOf(shop: Shop, plan: Plan, confirmed: boolean) {
    const [latest, trialDays] = await Promise.all([opts.billing.latest(shop.id), opts.billing.trialDaysFor(shop.id)])
    const offer = (p: Plan) => ({
      plan: p,
      price: p === 'free' ? null : opts.config.prices[p],
      currencyCode: BILLING_CURRENCY,
      interval: BILLING_INTERVAL,
      trialDays: p === 'free' ? 0 : trialDays,
    })
    return {
      plan,
      confirmed,
      subscription: subscriptionOf(latest),
      test: opts.config.test,
      plans: (['free', ...PAID_PLANS] as const).map(offer),
    }
  }

  app.get(
    '/v1/platforms/shopify/billing',
    {
      config: { access: ['admin'] },
      schema: { tags: ['shopify'], response: { 200: Ok(ShopifyBillingSchema), ...errors(401, 403, 404, 429) } },
    },
    async (request) => {
      const shop = shopifyShop(request.ctx.shop)
      let plan = shop.plan
      let confirmed = true
      try {
        plan = await opts.billing.confirm(shop)
      } catch (err) {
        confirmed = false
        const message = err instanceof Error ? err.message : String(err)
        request.log.warn({ shop: shop.domain, err: message }, 'Shopify Billing not confirmed: the stored plan is shown')
      }
      return { ok: true as const, data: await stateOf(shop, plan, confirmed) }
    },
  )

  app.post(
    '/v1/platforms/shopify/billing/subscription',
    {
      config: { access: ['admin'] },
      schema: { tags: ['shopify'], body: ChoosePlanBody, response: { 200: Ok(ChosenPlan), ...errors(400, 401, 403, 404, 429, 503) } },
    },
    async (request) => {
      const shop = shopifyShop(request.ctx.shop)
      const { confirmationUrl } = await opts.billing.choose(shop, request.body.plan)
      const current = (await opts.shops.get(shop.id)) ?? shop
      return { ok: true as const, data: { confirmationUrl, billing: await stateOf(current, current.plan, true) } }
    },
  )
}
