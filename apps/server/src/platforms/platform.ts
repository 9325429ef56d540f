/**
 * The seam between the service and the commerce platforms it runs inside (docs/architecture.md,
 * "Platforms"). A platform the service is configured for (Shopify app mode) registers one
 * adapter in the list app.ts builds (`configuredPlatforms`); generic code asks the list, never
 * a platform by name. A second platform is an adapter of its own and one more line in that list.
 */
import type { Backend, Db } from '../db/types.js'

/** Rows a platform keeps for a while (Shopify: its webhook receipts), purged by the delivery worker's hourly housekeeping. */
export interface PlatformHousekeeping {
  /** What is purged, as the log line names it. */
  readonly what: string
  /** Whether any row is due at `at` (a read, so an idle worker writes nothing). */
  due(db: Db, at: number): Promise<boolean>
  /** Deletes up to `limit` rows due at `at`, oldest first, in one statement; returns how many. */
  purge(db: Db, backend: Backend, at: number, limit: number): Promise<number>
}

export interface Platform {
  readonly name: string
  /** Whether a shop domain is one of this platform's shops (its one rule for them). */
  ownsShopDomain(domain: string): boolean
  /**
   * Where a buyer of this platform's shop writes a review, for the invitation `query`
   * (`?invitation=…`): a page inside the shop's own storefront.
   */
  reviewPageUrl(shopDomain: string, query: string): string
  readonly housekeeping?: PlatformHousekeeping
}

/** The platform whose shop `domain` is, among those configured; undefined for a shop outside them. */
export const platformOf = (platforms: readonly Platform[], domain: string): Platform | undefined => platforms.find((p) => p.ownsShopDomain(domain))
