/**
 * The seam between the service and the commerce platforms it runs inside (docs/architecture.md,
 * "Platforms"). A platform the service is configured for (Shopify app mode) registers one
 * adapter in the list app.ts builds; generic code asks the list, never a platform by name.
 * A second platform is an adapter of its own and one more line in that list.
 */
export interface Platform {
  readonly name: string
  /** Whether a shop domain is one of this platform's shops (its one rule for them). */
  ownsShopDomain(domain: string): boolean
  /**
   * Where a buyer of this platform's shop writes a review, for the invitation `query`
   * (`?invitation=…`): a page inside the shop's own storefront.
   */
  reviewPageUrl(shopDomain: string, query: string): string
}

/** The platform whose shop `domain` is, among those configured; undefined for a shop outside them. */
export const platformOf = (platforms: readonly Platform[], domain: string): Platform | undefined => platforms.find((p) => p.ownsShopDomain(domain))
