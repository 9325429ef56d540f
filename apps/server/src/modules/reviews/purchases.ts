/**
 * Verified purchases (docs/api.md: "Platform events", `order.created`; "Reviews", verified purchase). The platform events intake calls
 * `recordPurchase` inside its own transaction; reviews only ever become verified here or
 * at submit time, never from anything a client sends.
 */
import type { Db } from '../../db/types.js'
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
 * Records the purchase (customer id and/or e-mail), then marks that customer's linked reviews
 * of these products verified (aggregates of approved ones updated). An e-mail never links or
 * verifies a review: anyone may type one. Idempotent; returns how many became verified.
 */
export async function recordPurchase(trx: Db, shopId: string, purchase: Purchase, at: number = now()): Promise<{ verified: number }> {
  const customerId = purchase.customerId ? normalizePlatformId(purchase.customerId, 'Customer') : null
  const email = purchase.email ? normalizeEmail(purchase.email) || null : null
  const productIds = [...new Set(purchase.productIds.map((p) => normalizePlatformId(p, 'Product')).filter((p): p is string => p !== null))]
  if ((customerId === null && email === null) || productIds.length === 0) return { verified: 0 }

  const buyers = [...(customerId ? [`customer:${customerId}`] : []), ...(email ? [`email:${email}`] : [])]
  await reviewsRepo.addPurchases(
    trx,
    productIds.flatMap((productId) =>
      buyers.map((buyer) => ({ shop_id: shopId, product_id: productId, buyer, customer_id: customerId, email, created_at: at })),
    ),
  )
  if (customerId === null) return { verified: 0 }

  const marked = await reviewsRepo.markVerifiedByOrder(trx, shopId, customerId, productIds, at)
  const approvedPerProduct = new Map<string, number>()
  for (const r of marked) {
    if (r.status === 'approved') approvedPerProduct.set(r.product_id, (approvedPerProduct.get(r.product_id) ?? 0) + 1)
  }
  for (const [productId, n] of approvedPerProduct) await reviewsRepo.addVerifiedToAggregate(trx, shopId, productId, n, at)
  return { verified: marked.length }
}
