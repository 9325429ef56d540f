/**
 * Shopify as a platform of the seam (platforms/platform.ts): its shops are the
 * `*.myshopify.com` domains Shopify signs, and a buyer writes a review inside the shop's theme,
 * through the app proxy (`https://{shop}/apps/wishlist/reviews/new?invitation=…`); the
 * delivery worker's housekeeping deletes its expired webhook receipts.
 */
import type { Platform } from '../../platforms/platform.js'
import { REVIEW_PAGE_PATH } from '../reviews/invitations.service.js'
import { DEFAULT_PATH_PREFIX, isShopDomain } from './signatures.js'
import { hasReceiptsBefore, purgeReceiptsBefore, RECEIPT_RETENTION_MS } from './webhook-receipts.js'

export const shopifyPlatform: Platform = {
  name: 'shopify',
  ownsShopDomain: isShopDomain,
  reviewPageUrl: (shopDomain, query) => `https://${shopDomain}${DEFAULT_PATH_PREFIX}${REVIEW_PAGE_PATH}${query}`,
  // The webhook receipts that expire (webhook-receipts.ts: RECEIPT_RETENTION_MS after they were taken).
  housekeeping: {
    what: 'Shopify webhook receipts',
    due: (db, at) => hasReceiptsBefore(db, at - RECEIPT_RETENTION_MS),
    purge: (db, backend, at, limit) => purgeReceiptsBefore(db, backend, at - RECEIPT_RETENTION_MS, limit),
  },
}
