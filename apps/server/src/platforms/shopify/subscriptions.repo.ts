/**
 * The app subscriptions the service made for a shop (`shopify_subscriptions`): which plan
 * each pays for, and its status as Shopify last answered it.
 */
import type { Selectable } from 'kysely'
import type { ShopifySubscriptionsTable } from '../../db/schema.js'
import type { Db } from '../../db/types.js'

export type SubscriptionRow = Selectable<ShopifySubscriptionsTable>

/** Statuses a subscription does not leave (Shopify's AppSubscriptionStatus): no need to ask about it again. */
export const FINAL_STATUSES: readonly string[] = ['CANCELLED', 'DECLINED', 'EXPIRED']

/** The most subscriptions of a shop asked about at once (the newest not final): pending ones expire at Shopify within days. */
const OPEN_LIMIT = 50

export const subscriptionsRepo = {
  async add(db: Db, row: Pick<SubscriptionRow, 'shop_id' | 'subscription_id' | 'plan' | 'status' | 'created_at'>): Promise<void> {
    await db
      .insertInto('shopify_subscriptions')
      .values({ ...row, activated_at: null, updated_at: row.created_at })
      .execute()
  },

  /** The shop's subscriptions whose status may still change, newest first. */
  open(db: Db, shopId: string): Promise<SubscriptionRow[]> {
    return db
      .selectFrom('shopify_subscriptions')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('status', 'not in', FINAL_STATUSES)
      .orderBy('created_at', 'desc')
      .orderBy('subscription_id', 'desc')
      .limit(OPEN_LIMIT)
      .execute()
  },

  /** The shop's newest subscription, any status. */
  latest(db: Db, shopId: string): Promise<SubscriptionRow | undefined> {
    return db
      .selectFrom('shopify_subscriptions')
      .selectAll()
      .where('shop_id', '=', shopId)
      .orderBy('created_at', 'desc')
      .orderBy('subscription_id', 'desc')
      .limit(1)
      .executeTakeFirst()
  },

  /** Whether the shop ever had a subscription Shopify charged (a trial is granted once). */
  async everPaid(db: Db, shopId: string): Promise<boolean> {
    const row = await db
      .selectFrom('shopify_subscriptions')
      .select('subscription_id')
      .where('shop_id', '=', shopId)
      .where('activated_at', 'is not', null)
      .limit(1)
      .executeTakeFirst()
    return row !== undefined
  },

  async setStatus(db: Db, shopId: string, subscriptionId: string, status: string, at: number): Promise<void> {
    await db
      .updateTable('shopify_subscriptions')
      .set((eb) => ({
        status,
        updated_at: at,
        ...(status === 'ACTIVE' ? { activated_at: eb.fn.coalesce('activated_at', eb.val(at)) } : {}),
      }))
      .where('shop_id', '=', shopId)
      .where('subscription_id', '=', subscriptionId)
      .where('status', '!=', status)
      .execute()
  },
}
