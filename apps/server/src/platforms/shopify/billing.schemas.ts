/**
 * Shopify Billing of the plans (docs/shopify.md, "Billing"): the schemas and operation docs of
 * the embedded admin's plan page.
 */
import { Type } from 'typebox'
import type { OperationDocs } from '../../lib/http-schemas.js'

const planName = (description: string) =>
  Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('growth'), Type.Literal('scale')], { description })

export const ShopifySubscription = Type.Object(
  {
    id: Type.String({ description: "Shopify's id of the app subscription (`gid://shopify/AppSubscription/…`)" }),
    plan: Type.Union([Type.Literal('starter'), Type.Literal('growth'), Type.Literal('scale')], { description: 'The plan it pays for' }),
    status: Type.String({
      description:
        "Shopify's status of it as last confirmed with the Admin API: `PENDING` (waiting for the merchant's approval), `ACTIVE`, `FROZEN`, `CANCELLED`, `DECLINED`, `EXPIRED` (`ACCEPTED` in passing)",
    }),
  },
  { additionalProperties: false },
)

const PlanOffer = Type.Object(
  {
    plan: planName('The plan'),
    price: Type.Union([Type.String({ pattern: '^[0-9]+(\\.[0-9]{1,2})?$' }), Type.Null()], {
      description: 'Price per interval in `currencyCode` (SHOPIFY_PLAN_PRICES); null for Free, which is not charged',
    }),
    currencyCode: Type.Literal('USD'),
    interval: Type.Literal('EVERY_30_DAYS'),
    trialDays: Type.Integer({
      minimum: 0,
      description: 'Free days a new subscription of this shop starts with (SHOPIFY_TRIAL_DAYS; 0 once the shop was charged, and for Free)',
    }),
  },
  { additionalProperties: false },
)

export const ShopifyBilling = Type.Object(
  {
    plan: planName("The shop's plan"),
    confirmed: Type.Boolean({
      description:
        'Whether Shopify was asked for this answer (the plan follows the subscription Shopify says is ACTIVE); false: Shopify could not be reached, the stored state is shown',
    }),
    subscription: Type.Union([ShopifySubscription, Type.Null()], {
      description: "The shop's newest app subscription; null before the first",
    }),
    test: Type.Boolean({ description: "New subscriptions are Shopify's test charges, never billed (SHOPIFY_BILLING_TEST)" }),
    plans: Type.Array(PlanOffer, { description: 'Every plan, Free first, with its price and trial' }),
  },
  { additionalProperties: false },
)

export const ChoosePlanBody = Type.Object({ plan: planName('The plan chosen') }, { additionalProperties: false })

export const ChosenPlan = Type.Object(
  {
    confirmationUrl: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description:
        "Shopify's approval page of the new subscription: open it in the top frame (the plan changes once Shopify says the subscription is ACTIVE); null when there is nothing to approve (Free, or that plan's subscription already active)",
    }),
    billing: ShopifyBilling,
  },
  { additionalProperties: false },
)

const example = {
  plan: 'free',
  confirmed: true,
  subscription: { id: 'gid://shopify/AppSubscription/1029266', plan: 'growth', status: 'PENDING' },
  test: false,
  plans: [
    { plan: 'free', price: null, currencyCode: 'USD', interval: 'EVERY_30_DAYS', trialDays: 0 },
    { plan: 'starter', price: '9.99', currencyCode: 'USD', interval: 'EVERY_30_DAYS', trialDays: 7 },
    { plan: 'growth', price: '29.99', currencyCode: 'USD', interval: 'EVERY_30_DAYS', trialDays: 7 },
    { plan: 'scale', price: '79.99', currencyCode: 'USD', interval: 'EVERY_30_DAYS', trialDays: 7 },
  ],
}

const ACCESS =
  "Shopify app mode, admin tokens and Shopify session tokens of a `*.myshopify.com` shop (another shop: 404 NOT_FOUND; its plan is the operator's)."

export const billingOperations: OperationDocs = {
  'GET /v1/platforms/shopify/billing': {
    operationId: 'getShopifyBilling',
    summary: "The shop's plan and Shopify subscription (the embedded admin's plan page)",
    description: `${ACCESS} Asks Shopify first (\`currentAppInstallation { activeSubscriptions }\`), so a merchant coming back from the approval page sees the plan they approved: the plan is the one of the subscription Shopify says is ACTIVE, Free once the subscription that set it is cancelled, declined, expired or frozen. When Shopify cannot be reached, the stored state with \`confirmed: false\`.`,
    responses: { 200: "The shop's plan, newest subscription, and the plans with their prices" },
    examples: { 200: { ok: true, data: example } },
  },
  'POST /v1/platforms/shopify/billing/subscription': {
    operationId: 'chooseShopifyPlan',
    summary: 'Choose a plan, charged through Shopify Billing',
    description: `${ACCESS} Starter, Growth, Scale: a Shopify app subscription at the plan's price (trial days for a shop never charged, a test charge under SHOPIFY_BILLING_TEST), whose \`confirmationUrl\` the merchant approves; the plan changes only once Shopify says it is ACTIVE (its \`app_subscriptions/update\` webhook, or the merchant's return to the plan page). Free: the active subscription is cancelled and the plan is Free at once (data kept, features gated). 503 UNAVAILABLE when Shopify cannot be reached or refuses.`,
    responses: { 200: 'Where to approve the subscription, and the billing state' },
    requestExample: { plan: 'growth' },
    examples: {
      200: {
        ok: true,
        data: {
          confirmationUrl:
            'https://example.myshopify.com/admin/charges/0123456789abcdef0123456789abcdef/1029266/RecurringApplicationCharge/confirm_recurring_application_charge?signature=BAh7BzoHaWQ',
          billing: example,
        },
      },
    },
  },
}
