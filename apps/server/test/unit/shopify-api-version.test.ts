import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SHOPIFY_API_VERSION } from '../../src/config.js'
import { SHOPIFY_WEBHOOK_API_VERSION } from '../helpers/shopify.js'

/**
 * Shopify supports each API version (named YYYY-MM for the month it is released) for 12 months:
 * the app's webhook subscriptions and its Admin API calls must name one still supported. This
 * fails at build time once a pinned version is older than that, so it is moved before Shopify
 * stops serving it.
 */
const SUPPORT_MONTHS = 12

const releasedAt = (version: string): Date => {
  const m = /^(\d{4})-(01|04|07|10)$/.exec(version)
  if (m === null) throw new Error(`${version} is not a Shopify release (YYYY-01, -04, -07 or -10)`)
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1))
}
const monthsSince = (from: Date, to: Date): number =>
  (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + (to.getUTCMonth() - from.getUTCMonth())

const tomlVersion = (): string => {
  const toml = readFileSync(resolve(import.meta.dirname, '../../../../shopify.app.toml.example'), 'utf8')
  const m = /^\[webhooks\]\s*\n(?:#.*\n)*api_version = "([^"]+)"/m.exec(toml)
  if (m?.[1] === undefined) throw new Error('shopify.app.toml.example has no [webhooks] api_version')
  return m[1]
}

describe('the pinned Shopify API version', () => {
  it("is the same for the Admin API (SHOPIFY_API_VERSION's default), the webhooks of shopify.app.toml.example and the test deliveries", () => {
    expect(tomlVersion()).toBe(DEFAULT_SHOPIFY_API_VERSION)
    expect(SHOPIFY_WEBHOOK_API_VERSION).toBe(DEFAULT_SHOPIFY_API_VERSION)
  })

  it(`is a release Shopify still supports (at most ${SUPPORT_MONTHS} months old)`, () => {
    for (const version of [tomlVersion(), DEFAULT_SHOPIFY_API_VERSION]) {
      const age = monthsSince(releasedAt(version), new Date())
      expect(age, `${version} was released ${age} months ago: move to a newer version`).toBeLessThan(SUPPORT_MONTHS)
      expect(age, `${version} is not released yet`).toBeGreaterThanOrEqual(0)
    }
  })

  it('the check refuses a version past its support and a name that is not a release', () => {
    expect(monthsSince(releasedAt('2025-10'), new Date(Date.UTC(2026, 10, 29)))).toBeGreaterThanOrEqual(SUPPORT_MONTHS)
    expect(monthsSince(releasedAt('2026-10'), new Date(Date.UTC(2026, 10, 29)))).toBeLessThan(SUPPORT_MONTHS)
    expect(() => releasedAt('2026-11')).toThrow(/not a Shopify release/)
    expect(() => releasedAt('unstable')).toThrow(/not a Shopify release/)
  })
})
