import { describe, expect, it } from 'vitest'
import { localCounter, RATE_WINDOW_MS } from '../../src/plugins/rate-limit.js'

describe('in-process rate-limit windows', () => {
  it('count per key within a minute, then start a new window', () => {
    const count = localCounter()
    expect(count('a', 1_000)).toEqual({ current: 1, ttlMs: RATE_WINDOW_MS })
    expect(count('a', 31_000)).toEqual({ current: 2, ttlMs: 30_000 })
    expect(count('b', 31_000)).toEqual({ current: 1, ttlMs: RATE_WINDOW_MS })
    expect(count('a', 60_999)).toEqual({ current: 3, ttlMs: 1 })
    expect(count('a', 61_000)).toEqual({ current: 1, ttlMs: RATE_WINDOW_MS })
  })

  it('past the key bound, drop the window that ends first', () => {
    const count = localCounter(2)
    count('a', 0)
    count('b', 10)
    count('a', 60_000) // a's window ended: a new one, now the later of the two
    count('c', 60_001) // full: b's window (ends first) goes
    expect(count('a', 60_002).current).toBe(2)
    expect(count('b', 60_003).current).toBe(1)
  })
})
