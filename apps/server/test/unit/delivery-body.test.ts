import { describe, expect, it } from 'vitest'
import { deliveryBody, MAX_DELIVERY_BODY_BYTES } from '../../src/modules/webhooks/webhook-worker.js'

describe('deliveryBody', () => {
  const at = Date.UTC(2026, 0, 2)

  it('keeps a body that fits as it is', () => {
    const data = { productId: '1', customerIds: ['1', '2'], truncated: false }
    expect(JSON.parse(deliveryBody('wishlist.product.low_stock', 'a.myshopify.com', at, data))).toEqual({
      event: 'wishlist.product.low_stock',
      shopDomain: 'a.myshopify.com',
      occurredAt: '2026-01-02T00:00:00.000Z',
      data,
    })
  })

  it('cuts customerIds to fit 64 KiB and says so', () => {
    const ids = Array.from({ length: 3_000 }, (_, i) => String(10 ** 31 + i).padStart(32, '9'))
    const body = deliveryBody('wishlist.product.price_dropped', 'a.myshopify.com', at, {
      productId: '1',
      wishlistCount: 3_000,
      customerIds: ids,
      truncated: false,
    })
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_DELIVERY_BODY_BYTES)
    const { data } = JSON.parse(body) as { data: { customerIds: string[]; truncated: boolean; wishlistCount: number } }
    expect(data.truncated).toBe(true)
    expect(data.wishlistCount).toBe(3_000)
    expect(data.customerIds).toEqual(ids.slice(0, data.customerIds.length))
    // Cut to fit, not far below it.
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_DELIVERY_BODY_BYTES - 100)
  })
})
