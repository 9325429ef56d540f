/**
 * Period maths for analytics (pure), in UTC epoch days. "The last N days" is today and the
 * N − 1 days before it (`1y` is 365); `all` starts at the shop's first wishlist event.
 */
import { DAY_MS } from '../../lib/time.js'

export const PERIODS = ['7d', '14d', '30d', '90d', '1y', 'all'] as const
export type Period = (typeof PERIODS)[number]
export const DEFAULT_PERIOD: Period = '30d'

const PERIOD_DAYS: Record<Exclude<Period, 'all'>, number> = { '7d': 7, '14d': 14, '30d': 30, '90d': 90, '1y': 365 }

export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS)

/** `YYYY-MM-DD` of a UTC epoch day. */
export const formatDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10)

/** Number of days a fixed period covers, or null for `all`. */
export const periodDays = (period: Period): number | null => (period === 'all' ? null : PERIOD_DAYS[period])

/**
 * First day of the window; the window always ends with `today`. For `all`: the shop's first
 * fact day, or null when the shop has none (then the window is empty).
 */
export function windowStart(period: Period, today: number, firstDay: number | null): number | null {
  const n = periodDays(period)
  if (n === null) return firstDay === null ? null : Math.min(firstDay, today)
  return today - (n - 1)
}

/** 100 × converted ÷ added, rounded half up to 2 decimals; 0 when nothing was added. */
export function conversionRate(converted: number, added: number): number {
  if (added <= 0) return 0
  return Math.round((converted * 10_000) / added) / 100
}
