import { describe, expect, it } from 'vitest'
import { comparePrices, normalizePrice, productSignals, type VariantState } from '../../src/modules/events/product-signals.js'

const v = (variant_id: string, price: string, inventory_quantity: number): VariantState => ({ variant_id, price, inventory_quantity })
const events = (before: VariantState[] | null, after: VariantState[]) =>
  productSignals(before, after).map((c) => `${c.event.replace('wishlist.product.', '')}:${c.variantId}`)

describe('prices', () => {
  it('normalises spellings of one amount', () => {
    expect(['19.99', '019.990', 19.99].map(normalizePrice)).toEqual(['19.99', '19.99', '19.99'])
    expect([20, '20.00', '0', 0, '0.50', '39', '7.125', 7.1234567].map(normalizePrice)).toEqual([
      '20.00',
      '20.00',
      '0.00',
      '0.00',
      '0.50',
      '39.00',
      '7.125',
      '7.123457',
    ])
  })
  it('compares exactly, without floating point', () => {
    expect(comparePrices('19.99', '20')).toBe(-1)
    expect(comparePrices('0.3', '0.1')).toBe(1)
    expect(comparePrices('100000000000000.000001', '100000000000000')).toBe(1)
    expect(comparePrices('5', '5')).toBe(0)
  })
})

describe('productSignals', () => {
  it('first sight is only the baseline', () => {
    expect(events(null, [v('1', '1', 5)])).toEqual([])
  })
  it('back_in_stock from ≤ 0 to > 0', () => {
    expect(events([v('1', '1', 0), v('2', '1', -3), v('3', '1', 1)], [v('1', '1', 1), v('2', '1', 9), v('3', '1', 2)])).toEqual([
      'back_in_stock:1',
      'back_in_stock:2',
    ])
    expect(events([v('1', '1', 0)], [v('1', '1', 0)])).toEqual([])
  })
  it('price_dropped only when the price falls', () => {
    expect(events([v('1', '10', 3)], [v('1', '9.99', 3)])).toEqual(['price_dropped:1'])
    expect(events([v('1', '10', 3)], [v('1', '10', 3)])).toEqual([])
    expect(events([v('1', '10', 3)], [v('1', '10.01', 3)])).toEqual([])
  })
  it('low_stock from ≥ 5 into 1..4', () => {
    expect(events([v('1', '1', 5)], [v('1', '1', 4)])).toEqual(['low_stock:1'])
    expect(events([v('1', '1', 50)], [v('1', '1', 1)])).toEqual(['low_stock:1'])
    expect(events([v('1', '1', 4)], [v('1', '1', 2)])).toEqual([])
    expect(events([v('1', '1', 9)], [v('1', '1', 0)])).toEqual([])
    expect(events([v('1', '1', 9)], [v('1', '1', 5)])).toEqual([])
  })
  it('judges each variant against its own last state; new variants set their baseline', () => {
    expect(events([v('1', '5', 0)], [v('2', '1', 3), v('1', '4', 2)])).toEqual(['back_in_stock:1', 'price_dropped:1'])
  })
})
