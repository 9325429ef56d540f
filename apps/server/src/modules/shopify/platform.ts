/**
 * Shopify as a platform of the seam (platforms/platform.ts): its shops are the
 * `*.myshopify.com` domains Shopify signs, and a buyer writes a review inside the shop's theme,
 * through the app proxy (`https://{shop}/apps/wishlist/reviews/new?invitation=…`).
 */
import type { Platform } from '../../platforms/platform.js'
import { REVIEW_PAGE_PATH } from '../reviews/invitations.service.js'
import { DEFAULT_PATH_PREFIX, isShopDomain } from './signatures.js'

export const shopifyPlatform: Platform = {
  name: 'shopify',
  ownsShopDomain: isShopDomain,
  reviewPageUrl: (shopDomain, query) => `https://${shopDomain}${DEFAULT_PATH_PREFIX}${REVIEW_PAGE_PATH}${query}`,
}
