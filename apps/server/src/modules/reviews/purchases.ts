/**
 * Verified purchases (DECISIONS §9 `order.created`, §11). The platform events intake calls
 * `recordPurchase` inside its own transaction; reviews only ever become verified here or
 * at submit time, never from anything a client sends.
 */
import type { Db } from '../../db/connect.js'
import { normalizePlatformId } from '../../lib/platform-ids.js'
import { now } from '../../lib/time.js'
import { reviewsRepo } from './reviews.repo.js'

export interface Purchase {
  customerId?: string | null | undefined
  email?: string | null | undefined
  productIds: string[]
}

export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

/**
 * Records that the buyer (customer id and/or e-mail) bought these products, then:
 * 1. links the shop's reviews written with that e-mail to that customer id, when both are given
 *    and the review has no customer yet;
 * 2. marks the buyer's existing reviews of these products (by linked customer id or e-mail)
 *    `verifiedPurchase`, updating the aggregates of approved ones.
 * Reviews submitted later for a recorded purchase are verified at submit time.
 * Returns the number of reviews newly marked verified. Idempotent.
 */
export async function recordPurchase(trx: Db, shopId: string, purchase: Purchase, at: number = now()): Promise<{ verified: number }> {
  const customerId = purchase.customerId ? normalizePlatformId(purchase.customerId, 'Customer') : null
  const email = purchase.email ? normalizeEmail(purchase.email) || null : null
  const productIds = [...new Set(purchase.productIds.map((p) => normalizePlatformId(p, 'Product')).filter((p): p is string => p !== null))]
  if ((customerId === null && email === null) || productIds.length === 0) return { verified: 0 }

  const buyers = [...(customerId ? [`customer:${customerId}`] : []), ...(email ? [`email:${email}`] : [])]
  for (const productId of productIds) {
    for (const buyer of buyers) {
      await trx
        .insertInto('purchases')
        .values({ shop_id: shopId, product_id: productId, buyer, customer_id: customerId, email, created_at: at })
        .onConflict((oc) =>
          oc.columns(['shop_id', 'product_id', 'buyer']).doUpdateSet((eb) => ({
            customer_id: eb.fn.coalesce('purchases.customer_id', eb.ref('excluded.customer_id')),
            email: eb.fn.coalesce('purchases.email', eb.ref('excluded.email')),
          })),
        )
        .execute()
    }
  }

  if (customerId !== null && email !== null) {
    await trx
      .updateTable('reviews')
      .set({ customer_id: customerId, updated_at: at })
      .where('shop_id', '=', shopId)
      .where('customer_email', '=', email)
      .where('customer_id', 'is', null)
      .execute()
  }

  const marked = await trx
    .updateTable('reviews')
    .set({ verified: 1, updated_at: at })
    .where('shop_id', '=', shopId)
    .where('product_id', 'in', productIds)
    .where('verified', '=', 0)
    .where((eb) =>
      eb.or([
        ...(email !== null ? [eb('customer_email', '=', email)] : []),
        ...(customerId !== null ? [eb('customer_id', '=', customerId)] : []),
      ]),
    )
    .returning(['product_id', 'status'])
    .execute()

  const approvedPerProduct = new Map<string, number>()
  for (const r of marked) {
    if (r.status === 'approved') approvedPerProduct.set(r.product_id, (approvedPerProduct.get(r.product_id) ?? 0) + 1)
  }
  for (const [productId, n] of approvedPerProduct) await reviewsRepo.addVerifiedToAggregate(trx, shopId, productId, n, at)
  return { verified: marked.length }
}

/** At submit time: has this buyer (e-mail, or the customer the review is linked to) bought the product? */
export async function hasPurchased(db: Db, shopId: string, productId: string, buyer: { email: string; customerId: string | null }): Promise<boolean> {
  const keys = [`email:${buyer.email}`, ...(buyer.customerId ? [`customer:${buyer.customerId}`] : [])]
  const row = await db
    .selectFrom('purchases')
    .select('buyer')
    .where('shop_id', '=', shopId)
    .where('product_id', '=', productId)
    .where('buyer', 'in', keys)
    .executeTakeFirst()
  return row !== undefined
}

/** The customer an order tied this e-mail to, if any (links a review submitted without a token). */
export async function customerForEmail(db: Db, shopId: string, email: string): Promise<string | null> {
  const row = await db
    .selectFrom('purchases')
    .select('customer_id')
    .where('shop_id', '=', shopId)
    .where('email', '=', email)
    .where('customer_id', 'is not', null)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row?.customer_id ?? null
}
