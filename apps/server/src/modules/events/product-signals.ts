/**
 * docs/api.md, "Platform events": what a `product.updated` means for a variant's holders:
 * back_in_stock (inventory ≤ 0 → > 0), price_dropped (price falls), low_stock (≥ 5 → 1..4).
 * A variant seen for the first time only sets the baseline.
 */
export interface VariantState {
  variant_id: string
  /** Normalised decimal string. */
  price: string
  inventory_quantity: number
}

export type ProductSignal = 'wishlist.product.back_in_stock' | 'wishlist.product.price_dropped' | 'wishlist.product.low_stock'

export interface VariantChange {
  event: ProductSignal
  variantId: string
  before: VariantState
  after: VariantState
}

export const LOW_STOCK_THRESHOLD = 5

/**
 * A price as the service stores and sends it: at least two decimals, as a shop writes
 * money, and no trailing zero past them. "19.990" → "19.99", "007" → "7.00", 20 → "20.00",
 * "0.5" → "0.50", "7.125" → "7.125". Input already matched the price pattern (a decimal
 * string or a non-negative number); a stored price of an older version ("39") comes out "39.00".
 */
export function normalizePrice(input: string | number): string {
  const raw = typeof input === 'number' ? input.toFixed(6) : input
  const [int = '0', frac = ''] = raw.split('.')
  const i = int.replace(/^0+(?=\d)/, '')
  const f = frac.replace(/0+$/, '').padEnd(2, '0')
  return `${i}.${f}`
}

/** Exact comparison of two normalised non-negative decimal strings. */
export function comparePrices(a: string, b: string): number {
  const [ai = '0', af = ''] = a.split('.')
  const [bi = '0', bf = ''] = b.split('.')
  const width = Math.max(af.length, bf.length)
  const x = BigInt(ai + af.padEnd(width, '0'))
  const y = BigInt(bi + bf.padEnd(width, '0'))
  return x < y ? -1 : x > y ? 1 : 0
}

export function productSignals(previous: VariantState[] | null, next: VariantState[]): VariantChange[] {
  if (previous === null) return []
  const known = new Map(previous.map((v) => [v.variant_id, v]))
  const out: VariantChange[] = []
  for (const after of next) {
    const before = known.get(after.variant_id)
    if (before === undefined) continue
    const change = { variantId: after.variant_id, before, after }
    if (before.inventory_quantity <= 0 && after.inventory_quantity > 0) out.push({ event: 'wishlist.product.back_in_stock', ...change })
    if (comparePrices(after.price, before.price) < 0) out.push({ event: 'wishlist.product.price_dropped', ...change })
    if (
      before.inventory_quantity >= LOW_STOCK_THRESHOLD &&
      after.inventory_quantity >= 1 &&
      after.inventory_quantity < LOW_STOCK_THRESHOLD
    ) {
      out.push({ event: 'wishlist.product.low_stock', ...change })
    }
  }
  return out
}
