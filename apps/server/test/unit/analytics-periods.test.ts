import { describe, expect, it } from 'vitest'
import { conversionRate, dayOf, formatDay, periodDays, windowStart } from '../../src/modules/analytics/analytics.periods.js'

const ms = (iso: string) => Date.parse(iso)

describe('analytics period maths', () => {
  it('maps epoch milliseconds to UTC days at the exact boundary', () => {
    const d = dayOf(ms('2026-03-10T00:00:00.000Z'))
    expect(dayOf(ms('2026-03-09T23:59:59.999Z'))).toBe(d - 1)
    expect(dayOf(ms('2026-03-10T23:59:59.999Z'))).toBe(d)
    expect(formatDay(d)).toBe('2026-03-10')
    expect(formatDay(dayOf(0))).toBe('1970-01-01')
  })

  it('ends every window today and starts it N − 1 days before', () => {
    const today = dayOf(ms('2026-03-10T15:00:00Z'))
    expect(formatDay(windowStart('7d', today, null) as number)).toBe('2026-03-04')
    expect(formatDay(windowStart('14d', today, null) as number)).toBe('2026-02-25')
    expect(formatDay(windowStart('30d', today, null) as number)).toBe('2026-02-09')
    expect(formatDay(windowStart('90d', today, null) as number)).toBe('2025-12-11')
    // 1y is 365 days, whatever the leap years.
    expect(formatDay(windowStart('1y', today, null) as number)).toBe('2025-03-11')
    expect(periodDays('1y')).toBe(365)
    expect(periodDays('all')).toBeNull()
  })

  it('starts `all` at the first fact day, or nowhere without facts', () => {
    const today = dayOf(ms('2026-03-10T15:00:00Z'))
    expect(windowStart('all', today, today - 400)).toBe(today - 400)
    expect(windowStart('all', today, null)).toBeNull()
    // A first day after today cannot happen (facts are clamped to the clock); still safe.
    expect(windowStart('all', today, today + 1)).toBe(today)
  })

  it('rounds the conversion rate to 2 decimals, 0 when nothing was added', () => {
    expect(conversionRate(0, 0)).toBe(0)
    expect(conversionRate(3, 0)).toBe(0)
    expect(conversionRate(1, 3)).toBe(33.33)
    expect(conversionRate(2, 3)).toBe(66.67)
    expect(conversionRate(1, 6)).toBe(16.67)
    expect(conversionRate(1, 8)).toBe(12.5)
    expect(conversionRate(5, 5)).toBe(100)
    expect(conversionRate(1, 10_000)).toBe(0.01)
    // 0.005 % rounds half up to 0.01; just below it rounds to 0.
    expect(conversionRate(1, 20_000)).toBe(0.01)
    expect(conversionRate(1, 20_001)).toBe(0)
  })
})
