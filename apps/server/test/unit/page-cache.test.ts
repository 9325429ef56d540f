import { describe, expect, it } from 'vitest'
import { createPageCache } from '../../src/modules/wishlists/page-cache.js'

// sizeOf: 2 × (key + version characters) + body bytes + 64; keys 'a'…'d' and version 'v'
// make every 100-byte body an entry of 168 bytes.
const body = (c: string) => Buffer.alloc(100, c)
const ENTRY = 168

describe('page cache', () => {
  it('serves a body at its version and stamp, and forgets it at another version', () => {
    const cache = createPageCache(10 * ENTRY)
    cache.set('a', 'v', body('a'), 's1')
    expect(cache.fresh('a', 's1')).toEqual(body('a'))
    expect(cache.fresh('a', 's2')).toBeUndefined()
    expect(cache.get('a', 'v', 's2')).toEqual(body('a'))
    expect(cache.fresh('a', 's2')).toEqual(body('a'))
    expect(cache.get('a', 'w')).toBeUndefined()
    expect(cache.get('a', 'v')).toBeUndefined()
    expect(cache.stats).toEqual({ hits: 3, misses: 2 })
  })

  it('stays within its bytes: the least recently read entries go first', () => {
    const cache = createPageCache(3 * ENTRY)
    cache.set('a', 'v', body('a'), 's')
    cache.set('b', 'v', body('b'), 's')
    cache.set('c', 'v', body('c'), 's')
    expect(cache.fresh('a', 's')).toBeDefined()
    cache.set('d', 'v', body('d'), 's') // a was read: b (the oldest unread) goes
    expect(cache.fresh('b', 's')).toBeUndefined()
    expect(cache.fresh('a', 's')).toBeDefined()
    expect(cache.fresh('c', 's')).toBeDefined()
    expect(cache.fresh('d', 's')).toBeDefined()
    // Every entry read: the least recently read of them goes; the entry just filed stays.
    cache.set('b', 'v', body('b'), 's')
    expect(cache.fresh('b', 's')).toBeDefined()
    expect([cache.fresh('a', 's'), cache.fresh('c', 's'), cache.fresh('d', 's')].filter(Boolean)).toHaveLength(2)
  })

  it('keeps nothing larger than its bound, and nothing at all at 0 bytes', () => {
    const small = createPageCache(ENTRY - 1)
    small.set('a', 'v', body('a'), 's')
    expect(small.fresh('a', 's')).toBeUndefined()
    const off = createPageCache(0)
    expect(off.enabled).toBe(false)
    off.set('a', 'v', body('a'), 's')
    expect(off.fresh('a', 's')).toBeUndefined()
  })
})
