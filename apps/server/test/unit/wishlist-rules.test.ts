import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/lib/errors.js'
import { listName } from '../../src/modules/wishlists/lists.service.js'
import { newShareToken } from '../../src/modules/wishlists/share.service.js'
import { serializeMetadata } from '../../src/modules/wishlists/wishlists.service.js'

describe('listName', () => {
  it('trims and keys names case-insensitively', () => {
    expect(listName('  Gift Ideas ')).toEqual({ name: 'Gift Ideas', key: 'gift ideas' })
  })
  it('refuses names that are empty after trimming or longer than 100 characters', () => {
    expect(() => listName('   ')).toThrow(AppError)
    expect(() => listName('x'.repeat(101))).toThrow(AppError)
    expect(listName(` ${'x'.repeat(100)} `).name).toHaveLength(100)
  })
})

describe('serializeMetadata', () => {
  it('accepts up to 200 serialized characters and names the failing index', () => {
    expect(serializeMetadata({ a: 'x'.repeat(192) }, 'body.metadata')).toHaveLength(200)
    let caught: unknown
    try {
      serializeMetadata({ a: 'x'.repeat(193) }, 'body.items.3.metadata', 3)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(AppError)
    expect((caught as AppError).details).toEqual([{ path: 'body.items.3.metadata', message: expect.any(String), index: 3 }])
    expect(serializeMetadata(undefined, 'body.metadata')).toBeNull()
  })
})

describe('newShareToken', () => {
  it('carries at least 128 random bits in base64url', () => {
    const a = newShareToken()
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(Buffer.from(a, 'base64url').length).toBeGreaterThanOrEqual(16)
    expect(newShareToken()).not.toBe(a)
  })
})
