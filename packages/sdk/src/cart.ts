/**
 * Cart lines from wishlist items, for headless storefronts ("add all to cart"): one line per
 * variant, in the list's order, quantities of the same variant summed. Items whose variant is
 * not known (`variantId: null`: no variant given and the catalog does not know the product
 * yet) cannot be bought as they are and are left out.
 */
export interface CartLine {
  /** The variant id as the service stores it (digits): Shopify's AJAX cart takes it as `id`. */
  variantId: string
  /** The same variant as a Shopify GID: the Storefront API's `CartLineInput.merchandiseId`. */
  merchandiseId: string
  quantity: number
}

/** What `toCartLines` reads of an item (a wishlist page's or a shared list's items fit). */
export interface CartItemLike {
  productId: string
  variantId: string | null
  /** When the item carries a wanted quantity; 1 otherwise. */
  quantity?: number | null
}

export function toCartLines(items: readonly CartItemLike[]): CartLine[] {
  const lines = new Map<string, CartLine>()
  for (const item of items) {
    if (!item.variantId) continue
    const quantity = Number.isInteger(item.quantity) && (item.quantity ?? 0) > 0 ? (item.quantity as number) : 1
    const line = lines.get(item.variantId)
    if (line) line.quantity += quantity
    else lines.set(item.variantId, { variantId: item.variantId, merchandiseId: `gid://shopify/ProductVariant/${item.variantId}`, quantity })
  }
  return [...lines.values()]
}
