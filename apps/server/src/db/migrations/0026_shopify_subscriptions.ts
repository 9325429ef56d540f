import type { Kysely } from 'kysely'
import type { Backend } from '../types.js'

/**
 * A Shopify shop's app subscriptions made by the service (platforms/shopify/billing.ts,
 * docs/shopify.md "Billing"): the plan each one pays for, kept under Shopify's id of it, and
 * its status as Shopify last answered it (`PENDING` until the merchant approves), when it was
 * first seen `ACTIVE` (a trial is granted once: not after a charged subscription). A shop's
 * plan follows the subscription Shopify says is `ACTIVE`, never a webhook body.
 */
export async function up(db: Kysely<unknown>, _backend: Backend): Promise<void> {
  await db.schema
    .createTable('shopify_subscriptions')
    .addColumn('shop_id', 'text', (c) => c.notNull())
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('activated_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('shopify_subscriptions_pk', ['shop_id', 'subscription_id'])
    .execute()
}
