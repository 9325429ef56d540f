/**
 * Shopify Billing of the plans (docs/shopify.md, "Billing"). Free needs no charge; Starter,
 * Growth and Scale are app subscriptions (`appSubscriptionCreate`: a recurring price per 30
 * days from SHOPIFY_PLAN_PRICES, the trial of SHOPIFY_TRIAL_DAYS for a shop never charged
 * before, `test` under SHOPIFY_BILLING_TEST) that the merchant approves at Shopify's
 * confirmation page.
 *
 * A shop's plan follows only what the Admin API answers (`confirm`): the newest subscription
 * the service made that `currentAppInstallation { activeSubscriptions }` lists as ACTIVE sets
 * it; once the subscription that set it is no longer active (cancelled, declined, expired,
 * frozen), the plan is Free: the shop's data stays, the plan's features are gated. A shop
 * that never had an active subscription keeps the plan it was given (SHOPIFY_DEFAULT_PLAN, or
 * the operator's). Webhook bodies and return visits only ask for a confirmation, so a stale or
 * replayed body grants nothing.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { PaidPlan, ShopifyBillingConfig } from '../../config.js'
import type { Plan } from '../../db/schema.js'
import type { Db } from '../../db/types.js'
import { AppError } from '../../lib/errors.js'
import { now } from '../../lib/time.js'
import type { ShopsService } from '../../modules/shops/shops.service.js'
import type { Shop } from '../../modules/shops/shops.types.js'
import { type ShopifyAdmin, ShopifyAdminError } from './admin-api.js'
import { type SubscriptionRow, subscriptionsRepo } from './subscriptions.repo.js'

export const PAID_PLANS: readonly PaidPlan[] = ['starter', 'growth', 'scale']
/** Shopify bills app subscriptions in USD here, every 30 days. */
export const BILLING_CURRENCY = 'USD' as const
export const BILLING_INTERVAL = 'EVERY_30_DAYS' as const

const SUBSCRIPTIONS_QUERY = `query Subscriptions($ids: [ID!]!) {
  currentAppInstallation { activeSubscriptions { id status } }
  nodes(ids: $ids) { ... on AppSubscription { id status } }
}`

const CREATE_MUTATION = `mutation CreateSubscription($name: String!, $returnUrl: URL!, $trialDays: Int, $test: Boolean, $lineItems: [AppSubscriptionLineItemInput!]!) {
  appSubscriptionCreate(name: $name, returnUrl: $returnUrl, trialDays: $trialDays, test: $test, lineItems: $lineItems) {
    appSubscription { id status }
    confirmationUrl
    userErrors { field message }
  }
}`

const CANCEL_MUTATION = `mutation CancelSubscription($id: ID!) {
  appSubscriptionCancel(id: $id) {
    appSubscription { id status }
    userErrors { field message }
  }
}`

interface SubscriptionNode {
  id: string
  status: string
}
interface UserError {
  field: string[] | null
  message: string
}

/** The name a subscription carries at Shopify (the merchant reads it on the approval page and the bill). */
export const subscriptionName = (plan: PaidPlan): string => `Wishlist ${plan[0]!.toUpperCase()}${plan.slice(1)}`

/** A stored subscription as the admin routes show it; null for none. */
export const subscriptionOf = (row: SubscriptionRow | undefined) =>
  row === undefined ? null : { id: row.subscription_id, plan: row.plan as PaidPlan, status: row.status }

/** The shop's plan and subscriptions after asking Shopify. */
interface Confirmed {
  plan: Plan
  /** Shopify's ids of the shop's ACTIVE subscriptions. */
  active: string[]
  /** The plan of the service's subscription Shopify says is ACTIVE, if any. */
  activePlan: Plan | undefined
}

export interface ShopifyBillingDeps {
  db: Db
  billing: ShopifyBillingConfig
  /** The app's client id: the admin's address of the app, where Shopify sends the merchant back. */
  apiKey: string | undefined
  shops: Pick<ShopsService, 'setPlan'>
  adminApi: Pick<ShopifyAdmin, 'graphql'>
  log: FastifyBaseLogger
}

/** An Admin API failure as the answer of an admin route: Shopify could not be asked. */
export function billingUnavailable(err: unknown): AppError {
  if (err instanceof AppError) return err
  if (err instanceof ShopifyAdminError && err.reason === 'no-token')
    return new AppError('UNAVAILABLE', 'The shop holds no Shopify Admin API access yet: open the app from Shopify admin again')
  const message = err instanceof Error ? err.message : String(err)
  return new AppError('UNAVAILABLE', `Shopify Billing could not be reached: ${message}`)
}

function refusedBy(what: string, userErrors: UserError[]): AppError {
  return new AppError('UNAVAILABLE', `Shopify refused ${what}: ${userErrors.map((e) => e.message).join('; ')}`)
}

export function createShopifyBilling(deps: ShopifyBillingDeps) {
  const { db, billing, log } = deps

  /** Where Shopify sends the merchant after the approval page: the app in the shop's admin (the dashboard opens its plan page). */
  const returnUrlOf = (shop: Shop): string => {
    if (deps.apiKey === undefined)
      throw new AppError('UNAVAILABLE', "Shopify Billing needs the app's client id (SHOPIFY_API_KEY), which is not set")
    return `https://${shop.domain}/admin/apps/${encodeURIComponent(deps.apiKey)}`
  }

  async function setPlan(shop: Shop, plan: Plan, why: string): Promise<void> {
    if (plan === shop.plan) return
    await deps.shops.setPlan(shop.id, plan)
    log.info({ shop: shop.domain, from: shop.plan, to: plan }, why)
  }

  async function confirm(shop: Shop): Promise<Confirmed> {
    const rows = await subscriptionsRepo.open(db, shop.id)
    const data = await deps.adminApi.graphql<{
      currentAppInstallation: { activeSubscriptions: SubscriptionNode[] }
      nodes: (SubscriptionNode | null)[]
    }>(shop.id, SUBSCRIPTIONS_QUERY, { ids: rows.map((r) => r.subscription_id) })
    const active = data.currentAppInstallation.activeSubscriptions.filter((s) => s.status === 'ACTIVE').map((s) => s.id)
    const statusOf = new Map(data.nodes.flatMap((n) => (n?.id === undefined ? [] : [[n.id, n.status] as const])))
    const at = now()
    let activeRow: SubscriptionRow | undefined
    let ended = false
    // Newest first: of two active ones (a plan changed before Shopify replaced the older one), the newer decides.
    for (const row of rows) {
      const isActive = active.includes(row.subscription_id)
      const status = isActive ? 'ACTIVE' : (statusOf.get(row.subscription_id) ?? row.status)
      await subscriptionsRepo.setStatus(db, shop.id, row.subscription_id, status === 'ACTIVE' && !isActive ? row.status : status, at)
      if (isActive) activeRow ??= row
      else if (row.status === 'ACTIVE') ended = true
    }
    const unknown = active.filter((id) => !rows.some((r) => r.subscription_id === id))
    if (unknown.length > 0)
      log.warn({ shop: shop.domain, subscriptions: unknown }, 'active Shopify subscriptions the service did not make: no plan from them')
    const plan = activeRow?.plan ?? (ended ? 'free' : shop.plan)
    await setPlan(
      shop,
      plan,
      activeRow === undefined ? 'Shopify subscription no longer active: plan is Free' : 'Shopify subscription active: plan set',
    )
    return { plan, active, activePlan: activeRow?.plan }
  }

  async function cancelAll(shop: Shop, ids: string[]): Promise<void> {
    for (const id of ids) {
      const { appSubscriptionCancel: res } = await deps.adminApi.graphql<{
        appSubscriptionCancel: { appSubscription: SubscriptionNode | null; userErrors: UserError[] }
      }>(shop.id, CANCEL_MUTATION, { id })
      if (res.userErrors.length > 0 || res.appSubscription === null) throw refusedBy('to cancel the subscription', res.userErrors)
      await subscriptionsRepo.setStatus(db, shop.id, id, res.appSubscription.status, now())
    }
  }

  async function subscribe(shop: Shop, plan: PaidPlan): Promise<string> {
    const trialDays = (await subscriptionsRepo.everPaid(db, shop.id)) ? 0 : billing.trialDays
    const { appSubscriptionCreate: res } = await deps.adminApi.graphql<{
      appSubscriptionCreate: { appSubscription: SubscriptionNode | null; confirmationUrl: string | null; userErrors: UserError[] }
    }>(shop.id, CREATE_MUTATION, {
      name: subscriptionName(plan),
      returnUrl: returnUrlOf(shop),
      trialDays,
      test: billing.test,
      lineItems: [
        {
          plan: {
            appRecurringPricingDetails: {
              price: { amount: billing.prices[plan], currencyCode: BILLING_CURRENCY },
              interval: BILLING_INTERVAL,
            },
          },
        },
      ],
    })
    if (res.userErrors.length > 0 || res.appSubscription === null || res.confirmationUrl === null)
      throw refusedBy('the subscription', res.userErrors)
    await subscriptionsRepo.add(db, {
      shop_id: shop.id,
      subscription_id: res.appSubscription.id,
      plan,
      status: res.appSubscription.status,
      created_at: now(),
    })
    log.info(
      { shop: shop.domain, plan, subscription: res.appSubscription.id, test: billing.test },
      'Shopify subscription created: waiting for approval',
    )
    return res.confirmationUrl
  }

  return {
    /**
     * The shop's plan as Shopify's subscriptions say (above); the shop's subscriptions' statuses
     * stored. Throws ShopifyAdminError when Shopify cannot be asked.
     */
    confirm: async (shop: Shop): Promise<Plan> => (await confirm(shop)).plan,

    /**
     * The merchant's choice. A paid plan: a new subscription, whose `confirmationUrl` the
     * merchant approves (the plan is unchanged until Shopify says it is ACTIVE); none when
     * that plan's subscription is already active. Free: the active subscriptions cancelled and
     * the plan Free at once. Throws AppError (UNAVAILABLE) when Shopify cannot be asked.
     */
    async choose(shop: Shop, plan: Plan): Promise<{ confirmationUrl: string | null }> {
      try {
        const confirmed = await confirm(shop)
        if (plan === 'free') {
          await cancelAll(shop, confirmed.active)
          await setPlan({ ...shop, plan: confirmed.plan }, 'free', 'Shopify subscription cancelled by the merchant: plan is Free')
          return { confirmationUrl: null }
        }
        if (confirmed.activePlan === plan) return { confirmationUrl: null }
        return { confirmationUrl: await subscribe(shop, plan) }
      } catch (err) {
        throw billingUnavailable(err)
      }
    },

    /** The shop's newest subscription, as last confirmed. */
    latest: (shopId: string) => subscriptionsRepo.latest(db, shopId),

    /** The trial a new subscription of the shop gets, in days (none once the shop was charged). */
    trialDaysFor: async (shopId: string): Promise<number> => ((await subscriptionsRepo.everPaid(db, shopId)) ? 0 : billing.trialDays),
  }
}

export type ShopifyBilling = ReturnType<typeof createShopifyBilling>
