/**
 * Fair shares of a worker's in-flight slots between shops, as the webhook and notification
 * workers apply them: a shop may have an equal part of the slots for it, each other shop with
 * attempts in flight, and one shop more, so there are always slots left for a shop that has
 * none (a shop alone gets half). `perShop` counts each shop's attempts in flight.
 */

/** How many attempts `shopId` may have in flight. */
export function shareOf(perShop: ReadonlyMap<string, number>, shopId: string, maxInFlight: number): number {
  const others = perShop.size - (perShop.has(shopId) ? 1 : 0)
  return Math.max(1, Math.floor(maxInFlight / (others + 2)))
}

/** The shops a claim skips: those at their share, or every shop in flight when all slots are taken. */
export function shopsAtShare(perShop: ReadonlyMap<string, number>, maxInFlight: number, inFlight: number): string[] {
  const full = inFlight >= maxInFlight
  return [...perShop].filter(([shop, n]) => full || n >= shareOf(perShop, shop, maxInFlight)).map(([shop]) => shop)
}

/**
 * Whether one more attempt of a shop that has `ofShop` in flight may start while `busy` slots
 * are taken: within its share while slots are free, and its first one even when none is.
 */
export function shopHasRoom(
  perShop: ReadonlyMap<string, number>,
  shopId: string,
  ofShop: number,
  busy: number,
  maxInFlight: number,
): boolean {
  return busy < maxInFlight ? ofShop < shareOf(perShop, shopId, maxInFlight) : ofShop === 0
}

/** Adds `by` to `key`'s count, forgetting the key at zero. */
export function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by
  if (n <= 0) counts.delete(key)
  else counts.set(key, n)
}
