import type { Plan } from '../../db/schema.js'
import { AppError } from '../../lib/errors.js'
import type { Shop } from './shops.types.js'

export const PLANS: readonly Plan[] = ['free', 'starter', 'growth', 'scale']
const RANK: Record<Plan, number> = { free: 0, starter: 1, growth: 2, scale: 3 }

export const isPlan = (s: string): s is Plan => (PLANS as readonly string[]).includes(s)

export const planAtLeast = (current: Plan, required: Plan): boolean => RANK[current] >= RANK[required]

/** 403 PLAN_UPGRADE_REQUIRED with `{required_plan, current_plan}` when the shop's plan is too low. */
export function requirePlan(shop: Shop, required: Plan): void {
  if (!planAtLeast(shop.plan, required)) {
    throw new AppError('PLAN_UPGRADE_REQUIRED', `This feature needs the ${required} plan or above`, {
      required_plan: required,
      current_plan: shop.plan,
    })
  }
}

/** Multi-wishlist: growth or above (PLAN_UPGRADE_REQUIRED), and the shop setting on (FEATURE_DISABLED). */
export function requireMultiWishlist(shop: Shop): void {
  requirePlan(shop, 'growth')
  if (!shop.settings.multi_wishlist_enabled) {
    throw new AppError('FEATURE_DISABLED', 'Multi-wishlist is disabled in the shop settings')
  }
}

export const multiWishlistActive = (shop: Shop): boolean => planAtLeast(shop.plan, 'growth') && shop.settings.multi_wishlist_enabled
