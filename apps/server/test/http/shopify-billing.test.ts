/**
 * Shopify Billing of the plans (docs/shopify.md, "Billing") against the local Shopify
 * emulator: a paid plan is an app subscription at the configured price, trial and test flag,
 * approved at Shopify's confirmation page; the plan changes only when the Admin API says the
 * subscription is ACTIVE (its webhook, or the merchant's return to the plan page), never on a
 * webhook body's word; cancelled, declined, expired or frozen is Free; choosing Free cancels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createTestApp, type TestApp } from '../helpers/app.js'
import { newShopDomain, sendShopifyWebhook, sessionToken } from '../helpers/shopify.js'
import { type ShopifyEmulator, startShopifyEmulator, type SubscriptionStatus } from '../helpers/shopify-emulator.js'

let emulator: ShopifyEmulator
let t: TestApp

beforeAll(async () => {
  emulator = await startShopifyEmulator()
  t = await createTestApp({
    env: { ...emulator.env, SHOPIFY_PLAN_PRICES: 'growth=29,starter=12.50', SHOPIFY_TRIAL_DAYS: '14', SHOPIFY_BILLING_TEST: 'true' },
  })
})
afterAll(async () => {
  await t?.close()
  await emulator?.close()
})

/** A shop installed through its first session (the embedded admin's), holding its Admin API tokens. */
async function installed(): Promise<string> {
  const domain = newShopDomain()
  emulator.addShop(domain)
  const res = await t.call('POST', '/v1/auth/shopify-session', { body: { session_token: await sessionToken(domain) } })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  await emulator.until(() => emulator.tokens.some((x) => x.shop === domain), 'the exchange')
  return domain
}

/** The embedded admin's calls: a fresh session token each. */
const billing = async (domain: string) => t.call('GET', '/v1/platforms/shopify/billing', { token: await sessionToken(domain) })
const choose = async (domain: string, plan: string) =>
  t.call('POST', '/v1/platforms/shopify/billing/subscription', { token: await sessionToken(domain), body: { plan } })
const planOf = async (domain: string) => (await t.app.services.shops.byDomain(domain))!.plan
const requestsOf = (domain: string, field: string) => emulator.graphqlRequests.filter((r) => r.shop === domain && r.fields.includes(field))

/** The `app_subscriptions/update` body Shopify sends, claiming `status`. */
const subscriptionUpdate = (domain: string, id: string, status: string, name = 'Wishlist Growth') => ({
  app_subscription: {
    admin_graphql_api_id: id,
    name,
    status,
    admin_graphql_api_shop_id: `gid://shopify/Shop/${emulator.shop(domain).id}`,
    created_at: '2026-11-29T10:00:00-05:00',
    updated_at: new Date().toISOString(),
    currency: 'USD',
    capped_amount: null,
    price: '29.00',
    interval: 'every_30_days',
    plan_handle: null,
  },
})
const webhook = (domain: string, id: string, status: string) =>
  sendShopifyWebhook(t, subscriptionUpdate(domain, id, status), { topic: 'app_subscriptions/update', shop: domain })

/** Subscribes the shop to `plan` through the route; the new subscription's id. */
async function subscribed(domain: string, plan = 'growth'): Promise<string> {
  const res = await choose(domain, plan)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return emulator.shop(domain).subscriptions.at(-1)!.id as string
}

/** A shop on `plan` through a subscription Shopify says is ACTIVE. */
async function paying(plan = 'growth'): Promise<{ domain: string; id: string }> {
  const domain = await installed()
  const id = await subscribed(domain, plan)
  emulator.setSubscriptionStatus(domain, id, 'ACTIVE')
  expect((await webhook(domain, id, 'ACTIVE')).body).toEqual({ ok: true, data: { result: 'processed' } })
  expect(await planOf(domain)).toBe(plan)
  return { domain, id }
}

describe('choosing a paid plan', () => {
  it('creates a subscription at the configured price, trial and test flag; the plan stays Free until Shopify says ACTIVE', async () => {
    const domain = await installed()
    const res = await choose(domain, 'growth')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const [created] = requestsOf(domain, 'appSubscriptionCreate')
    expect(created!.variables).toEqual({
      name: 'Wishlist Growth',
      returnUrl: `https://${domain}/admin/apps/${emulator.apiKey}`,
      trialDays: 14,
      test: true,
      lineItems: [{ plan: { appRecurringPricingDetails: { price: { amount: '29', currencyCode: 'USD' }, interval: 'EVERY_30_DAYS' } } }],
    })
    const subscription = emulator.shop(domain).subscriptions[0]!
    expect(res.body.data.confirmationUrl).toMatch(
      new RegExp(`^https://${domain.replaceAll('.', '\\.')}/admin/charges/${emulator.apiKey}/[0-9]+/RecurringApplicationCharge/`),
    )
    expect(res.body.data.billing).toMatchObject({
      plan: 'free',
      test: true,
      subscription: { id: subscription.id, plan: 'growth', status: 'PENDING' },
      plans: [
        { plan: 'free', price: null, trialDays: 0 },
        { plan: 'starter', price: '12.50', currencyCode: 'USD', interval: 'EVERY_30_DAYS', trialDays: 14 },
        { plan: 'growth', price: '29', trialDays: 14 },
        // Not named by SHOPIFY_PLAN_PRICES: its default.
        { plan: 'scale', price: '79.99', trialDays: 14 },
      ],
    })
    expect(await planOf(domain)).toBe('free')
    // The setup guide's plan step shows the subscription waiting for approval.
    const setup = await t.call('GET', '/v1/admin/platform-setup', { token: await sessionToken(domain) })
    expect(setup.body.data.plan).toEqual({ current: 'free', subscription: { id: subscription.id, plan: 'growth', status: 'PENDING' } })
  })

  it('charges without trial or test flag by default, at the default prices', () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', SHOPIFY_API_SECRET: 's', JWT_SECRET: 'x'.repeat(32) })
    expect(config.shopify!.billing).toEqual({ prices: { starter: '9.99', growth: '29.99', scale: '79.99' }, trialDays: 7, test: false })
    expect(() => loadConfig({ DATABASE_URL: 'sqlite::memory:', SHOPIFY_API_SECRET: 's', SHOPIFY_PLAN_PRICES: 'gold=5' })).toThrow(
      /SHOPIFY_PLAN_PRICES/,
    )
  })

  it('makes no new charge for the plan already active', async () => {
    const { domain } = await paying('starter')
    const res = await choose(domain, 'starter')
    expect(res.body.data).toMatchObject({ confirmationUrl: null, billing: { plan: 'starter', subscription: { status: 'ACTIVE' } } })
    expect(requestsOf(domain, 'appSubscriptionCreate')).toHaveLength(1)
  })

  it('answers 404 for a shop outside Shopify (its plan is the operator’s) and 400 for a plan that does not exist', async () => {
    const { apiKey } = await t.app.services.shops.create({ domain: `billing-elsewhere-${Date.now()}.example.com`, plan: 'free' })
    const signedIn = await t.call('POST', '/v1/auth/token', { body: { api_key: apiKey.keyId, api_secret: apiKey.secret } })
    const token = signedIn.body.data.token as string
    expect((await t.call('GET', '/v1/platforms/shopify/billing', { token })).status).toBe(404)
    expect((await t.call('POST', '/v1/platforms/shopify/billing/subscription', { token, body: { plan: 'starter' } })).status).toBe(404)
    const domain = await installed()
    expect((await choose(domain, 'gold')).body.error.code).toBe('VALIDATION_ERROR')
  })
})

describe('the plan follows what the Admin API says', () => {
  it('sets the plan when the webhook says ACTIVE and the Admin API confirms it', async () => {
    const domain = await installed()
    const id = await subscribed(domain)
    emulator.setSubscriptionStatus(domain, id, 'ACTIVE')
    const before = requestsOf(domain, 'currentAppInstallation').length
    expect((await webhook(domain, id, 'ACTIVE')).body.data.result).toBe('processed')
    expect(requestsOf(domain, 'currentAppInstallation')).toHaveLength(before + 1)
    expect(await planOf(domain)).toBe('growth')
    const shop = await t.call('GET', '/v1/admin/shop', { token: await sessionToken(domain) })
    expect(JSON.stringify(shop.body)).toContain('"plan":"growth"')
    expect((await billing(domain)).body.data).toMatchObject({ plan: 'growth', confirmed: true, subscription: { id, status: 'ACTIVE' } })
  })

  it('grants nothing for a body claiming ACTIVE while the Admin API says the subscription is not (forged state, or a replay)', async () => {
    const domain = await installed()
    const id = await subscribed(domain)
    // Signed by Shopify, but its word is not taken: the subscription is still waiting for approval.
    expect((await webhook(domain, id, 'ACTIVE')).body.data.result).toBe('processed')
    expect(await planOf(domain)).toBe('free')
    // A body of another subscription (another shop's, or made up) grants nothing either.
    expect((await webhook(domain, 'gid://shopify/AppSubscription/999999', 'ACTIVE')).status).toBe(200)
    expect(await planOf(domain)).toBe('free')

    // A shop whose subscription ended: its old ACTIVE body, replayed under a new event id, brings nothing back.
    const paid = await paying('scale')
    const activeBody = subscriptionUpdate(paid.domain, paid.id, 'ACTIVE')
    emulator.setSubscriptionStatus(paid.domain, paid.id, 'CANCELLED')
    expect((await webhook(paid.domain, paid.id, 'CANCELLED')).body.data.result).toBe('processed')
    expect(await planOf(paid.domain)).toBe('free')
    const replayed = await sendShopifyWebhook(t, activeBody, { topic: 'app_subscriptions/update', shop: paid.domain, eventId: 'new-id' })
    expect(replayed.status).toBe(200)
    expect(await planOf(paid.domain)).toBe('free')
  })

  it('keeps the plan while the Admin API says ACTIVE, whatever a body claims', async () => {
    const { domain, id } = await paying()
    expect((await webhook(domain, id, 'CANCELLED')).body.data.result).toBe('processed')
    expect(await planOf(domain)).toBe('growth')
  })

  it.each<SubscriptionStatus>(['CANCELLED', 'EXPIRED', 'FROZEN'])('makes the plan Free once the subscription is %s', async (status) => {
    const { domain, id } = await paying()
    emulator.setSubscriptionStatus(domain, id, status)
    expect((await webhook(domain, id, status)).body.data.result).toBe('processed')
    expect(await planOf(domain)).toBe('free')
    expect((await billing(domain)).body.data).toMatchObject({ plan: 'free', subscription: { id, plan: 'growth', status } })
  })

  it('leaves a declined subscription on Free, and a frozen one that comes back restores its plan', async () => {
    const domain = await installed()
    const declined = await subscribed(domain, 'starter')
    emulator.setSubscriptionStatus(domain, declined, 'DECLINED')
    await webhook(domain, declined, 'DECLINED')
    expect((await billing(domain)).body.data).toMatchObject({ plan: 'free', subscription: { status: 'DECLINED' } })

    const { domain: frozen, id } = await paying()
    emulator.setSubscriptionStatus(frozen, id, 'FROZEN')
    await webhook(frozen, id, 'FROZEN')
    expect(await planOf(frozen)).toBe('free')
    emulator.setSubscriptionStatus(frozen, id, 'ACTIVE')
    await webhook(frozen, id, 'ACTIVE')
    expect(await planOf(frozen)).toBe('growth')
  })

  it("confirms at the merchant's return to the plan page, without a webhook", async () => {
    const domain = await installed()
    const id = await subscribed(domain, 'starter')
    expect((await billing(domain)).body.data).toMatchObject({ plan: 'free', subscription: { status: 'PENDING' } })
    emulator.setSubscriptionStatus(domain, id, 'ACTIVE')
    expect((await billing(domain)).body.data).toMatchObject({ plan: 'starter', confirmed: true, subscription: { id, status: 'ACTIVE' } })
    expect(await planOf(domain)).toBe('starter')
  })
})

describe('choosing Free', () => {
  it('cancels the active subscription at Shopify and makes the plan Free; a later subscription gets no second trial', async () => {
    const { domain, id } = await paying()
    const res = await choose(domain, 'free')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data).toMatchObject({ confirmationUrl: null, billing: { plan: 'free', subscription: { id, status: 'CANCELLED' } } })
    expect(requestsOf(domain, 'appSubscriptionCancel').map((r) => r.variables)).toEqual([{ id }])
    expect(emulator.shop(domain).subscriptions.find((s) => s.id === id)!.status).toBe('CANCELLED')
    expect(await planOf(domain)).toBe('free')

    expect(res.body.data.billing.plans[1]).toMatchObject({ plan: 'starter', trialDays: 0 })
    await subscribed(domain, 'starter')
    expect(requestsOf(domain, 'appSubscriptionCreate').at(-1)!.variables.trialDays).toBe(0)
  })
})

describe('when Shopify cannot be reached', () => {
  it('shows the stored plan unconfirmed, refuses a choice with 503, and leaves the plan as it is on a webhook (Shopify retries)', async () => {
    const { domain, id } = await paying('starter')
    await emulator.goDown()
    try {
      expect((await billing(domain)).body.data).toMatchObject({ plan: 'starter', confirmed: false, subscription: { id, status: 'ACTIVE' } })
      const chosen = await choose(domain, 'free')
      expect(chosen.status).toBe(503)
      expect(chosen.body.error.code).toBe('UNAVAILABLE')
      const delivered = await webhook(domain, id, 'CANCELLED')
      expect(delivered.status).toBe(503)
    } finally {
      await emulator.comeBack()
    }
    expect(await planOf(domain)).toBe('starter')
  })
})
