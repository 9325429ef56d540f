/**
 * The add-remove load of the benches (bench/run.ts, bench/round-trips.ts): one add and its
 * remove per cycle, each cycle on the next of the customers' `authorizations` (one per
 * connection, more or less) with a product id of its own; req/s counts both requests.
 */
import type { RequestSpec } from 'autocannon'

export function addRemoveRequests(authorizations: string[]): RequestSpec[] {
  let cycle = 0
  return [
    {
      method: 'POST',
      path: '/v1/wishlists/me/items',
      setupRequest: (req, context) => {
        const n = cycle++
        context.auth = authorizations[n % authorizations.length]
        context.product = String(100_000 + (n % 1_000_000))
        return {
          ...req,
          headers: { 'content-type': 'application/json', authorization: context.auth as string },
          body: JSON.stringify({ product_id: context.product, variant_id: '42' }),
        }
      },
    },
    {
      method: 'DELETE',
      setupRequest: (req, context) => ({
        ...req,
        path: `/v1/wishlists/me/items/${context.product as string}`,
        headers: { authorization: context.auth as string },
      }),
    },
  ]
}
