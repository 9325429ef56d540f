/**
 * The days-to-purchase histogram of one day's adds, packed into its `analytics_daily` row
 * (`purchase_lags`, migration 0020): `lag:count` pairs joined by commas, `35:2,150:1`, where
 * the lag is in tenths of a day (the median's precision) and the count is the number of that
 * day's items bought that long after their add; each lag once, in no particular order; null
 * when none was bought. The order intake merges into a row inside its upsert
 * (analytics.repo.ts), the conversions read merges the period's rows here.
 *
 * Lags are not bounded by the attribution window (a hold that began before it still counts)
 * but an item added on day d and bought by now has a lag of at most (today − d + 1) × 10, so
 * a period's merged histogram has at most one entry per tenth of a day of the period. Text
 * scanned by hand rather than JSON: the read goes through every pair of 30 rows (thousands of
 * pairs in the bench's shop) and parsing JSON objects into numbers cost several times more.
 */

/** A histogram (lag → count) as `purchase_lags` keeps it, lags ascending; null when empty. */
export function packLags(histogram: Map<number, number>): string | null {
  const entries = [...histogram].filter(([, count]) => count > 0).sort((a, b) => a[0] - b[0])
  return entries.length === 0 ? null : entries.map(([lag, count]) => `${lag}:${count}`).join(',')
}

const COLON = 58
const COMMA = 44
const SEMICOLON = 59
const ZERO = 48
const NINE = 57

/**
 * Counts by lag (index: lag in tenths of a day) in a typed array that grows as lags arrive:
 * a period's thousands of pairs are summed without boxing or holes.
 */
export class LagCounts {
  counts: Float64Array
  constructor(expectedLags = 1024) {
    this.counts = new Float64Array(Math.max(16, expectedLags))
  }
  add(lag: number, n: number): void {
    if (lag >= this.counts.length) {
      const grown = new Float64Array(Math.max(lag + 1, 2 * this.counts.length))
      grown.set(this.counts)
      this.counts = grown
    }
    this.counts[lag] = (this.counts[lag] as number) + n
  }
}

/** Adds a packed histogram into `into`: one day's, or several days' joined by `;`. */
export function unpackLagsInto(into: LagCounts, packed: string | null): void {
  if (packed === null) return
  let lag = -1
  let n = 0
  let digits = 0
  for (let i = 0; i <= packed.length; i++) {
    const c = i === packed.length ? COMMA : packed.charCodeAt(i)
    if (c >= ZERO && c <= NINE) {
      n = n * 10 + (c - ZERO)
      digits++
    } else if (c === COLON && lag < 0 && digits > 0) {
      lag = n
      n = 0
      digits = 0
    } else if ((c === COMMA || c === SEMICOLON) && lag >= 0 && digits > 0) {
      into.add(lag, n)
      lag = -1
      n = 0
      digits = 0
    } else {
      throw new Error(`purchase_lags: unexpected ${JSON.stringify(packed[i] ?? 'end')} at ${i} of ${JSON.stringify(packed.slice(0, 40))}`)
    }
  }
}

/**
 * The median of the counted lags in days, 1 decimal: the middle lag (the middle two
 * averaged, rounded half up) in tenths of a day, divided by ten; null when nothing was counted.
 */
export function medianDaysOf(lags: LagCounts): number | null {
  const { counts } = lags
  let n = 0
  for (let lag = 0; lag < counts.length; lag++) n += counts[lag] as number
  if (n === 0) return null
  // The lags at sorted positions `low` and `high` (equal when n is odd).
  const low = Math.floor((n - 1) / 2)
  const high = Math.floor(n / 2)
  let seen = 0
  let lowLag = -1
  for (let lag = 0; lag < counts.length; lag++) {
    seen += counts[lag] as number
    if (lowLag < 0 && low < seen) lowLag = lag
    if (high < seen) return Math.round((lowLag + lag) / 2) / 10
  }
  return null
}
