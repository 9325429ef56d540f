/**
 * When a failed delivery is tried again. `scheduleSec[n - 1]` is the wait after the n-th
 * failed attempt; after the last entry the delivery is failed for good. With the default
 * schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h) a delivery gets 8 attempts.
 */
export function nextAttemptAt(failedAttempts: number, scheduleSec: readonly number[], at: number): number | null {
  const wait = scheduleSec[failedAttempts - 1]
  return wait === undefined ? null : at + Math.round(wait * 1000)
}
