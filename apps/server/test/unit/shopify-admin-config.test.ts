/**
 * Shopify app mode's Admin API settings (docs/shopify.md, "Admin API access"): the token key
 * (required with PostgreSQL, generated beside the SQLite file otherwise), the pinned API
 * version, the test-only emulator setting; and the sealing of tokens at rest.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { createTokenCipher } from '../../src/platforms/shopify/token-cipher.js'

const APP = { SHOPIFY_API_SECRET: 'secret', SHOPIFY_API_KEY: 'client-id' }
const PG = { DATABASE_URL: 'postgres://u@h/db', JWT_SECRET: 'x'.repeat(32) }
const MEMORY = { DATABASE_URL: 'sqlite::memory:' }
const dir = mkdtempSync(join(tmpdir(), 'shopify-token-key-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('SHOPIFY_TOKEN_KEY', () => {
  it('is required with PostgreSQL in Shopify app mode, and only there', () => {
    expect(() => loadConfig({ ...PG, ...APP })).toThrow(ConfigError)
    expect(() => loadConfig({ ...PG, ...APP })).toThrow(/SHOPIFY_TOKEN_KEY is required with PostgreSQL in Shopify app mode/)
    expect(loadConfig(PG).shopify).toBeUndefined()
  })

  it('takes 32 bytes as 64 hex digits or base64, and refuses anything else', () => {
    const key = randomBytes(32)
    expect(loadConfig({ ...PG, ...APP, SHOPIFY_TOKEN_KEY: key.toString('hex') }).shopify?.tokenKey).toEqual(key)
    expect(loadConfig({ ...PG, ...APP, SHOPIFY_TOKEN_KEY: key.toString('base64') }).shopify?.tokenKey).toEqual(key)
    expect(loadConfig({ ...PG, ...APP, SHOPIFY_TOKEN_KEY: key.toString('base64url') }).shopify?.tokenKey).toEqual(key)
    for (const bad of [randomBytes(16).toString('base64'), randomBytes(31).toString('hex'), 'a passphrase that is long enough to be 32'])
      expect(() => loadConfig({ ...PG, ...APP, SHOPIFY_TOKEN_KEY: bad })).toThrow(/must be 32 bytes/)
  })

  it('is generated beside the SQLite file (0600) when unset, and read back at the next start', () => {
    const env = { ...APP, DATABASE_URL: `sqlite:${join(dir, 'wishlist.db')}` }
    const first = loadConfig(env).shopify!.tokenKey
    const file = join(dir, 'shopify-token-key')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toEqual(first)
    expect(first).toHaveLength(32)
    expect(loadConfig(env).shopify!.tokenKey).toEqual(first)
    // Not made outside Shopify app mode.
    rmSync(file)
    loadConfig({ DATABASE_URL: env.DATABASE_URL })
    expect(() => statSync(file)).toThrow()
  })
})

describe('SHOPIFY_API_VERSION', () => {
  it("is Shopify's newest stable release by default, and a quarterly release name when set", () => {
    expect(loadConfig({ ...MEMORY, ...APP }).shopify?.apiVersion).toBe('2026-10')
    expect(loadConfig({ ...MEMORY, ...APP, SHOPIFY_API_VERSION: '2027-01' }).shopify?.apiVersion).toBe('2027-01')
    for (const bad of ['2026-11', 'unstable', 'latest'])
      expect(() => loadConfig({ ...MEMORY, ...APP, SHOPIFY_API_VERSION: bad })).toThrow(/SHOPIFY_API_VERSION/)
  })
})

describe('SHOPIFY_API_EMULATOR_URL (test-only)', () => {
  it('is off by default', () => {
    expect(loadConfig({ ...MEMORY, ...APP }).shopify?.apiEmulatorUrl).toBeUndefined()
  })

  it('is refused when NODE_ENV=production, in Shopify app mode or not', () => {
    for (const env of [{ ...MEMORY, ...APP }, MEMORY])
      expect(() => loadConfig({ ...env, NODE_ENV: 'production', SHOPIFY_API_EMULATOR_URL: 'http://127.0.0.1:4000' })).toThrow(
        /SHOPIFY_API_EMULATOR_URL is a test-only setting .* refused with NODE_ENV=production/,
      )
  })

  it('points only at a loopback address', () => {
    expect(loadConfig({ ...MEMORY, ...APP, SHOPIFY_API_EMULATOR_URL: 'http://127.0.0.1:4000/' }).shopify?.apiEmulatorUrl).toBe(
      'http://127.0.0.1:4000',
    )
    for (const bad of ['https://emulator.example.com', 'ftp://127.0.0.1:21', 'not a url'])
      expect(() => loadConfig({ ...MEMORY, ...APP, SHOPIFY_API_EMULATOR_URL: bad })).toThrow(/loopback/)
  })
})

describe('tokens sealed at rest', () => {
  const cipher = createTokenCipher(randomBytes(32))
  const token = 'shpat_0123456789abcdef'

  it('opens what it sealed, each time under a new nonce, for that shop and column only', () => {
    const a = cipher.seal('shop-1', 'access_token', token)
    const b = cipher.seal('shop-1', 'access_token', token)
    expect(a).not.toBe(b)
    expect(a).not.toContain(token)
    expect(cipher.open('shop-1', 'access_token', a)).toBe(token)
    expect(() => cipher.open('shop-2', 'access_token', a)).toThrow()
    expect(() => cipher.open('shop-1', 'refresh_token', a)).toThrow()
  })

  it('refuses another key, an altered value and a shortened tag', () => {
    const sealed = cipher.seal('shop-1', 'refresh_token', token)
    expect(() => createTokenCipher(randomBytes(32)).open('shop-1', 'refresh_token', sealed)).toThrow()
    const bytes = Buffer.from(sealed.slice(3), 'base64url')
    bytes[bytes.length - 1]! ^= 1
    expect(() => cipher.open('shop-1', 'refresh_token', `v1.${bytes.toString('base64url')}`)).toThrow()
    // Nonce, then 4 of the tag's 16 bytes, then nothing: GCM must not take a short tag.
    expect(() => cipher.open('shop-1', 'refresh_token', `v1.${bytes.subarray(0, 16).toString('base64url')}`)).toThrow()
    expect(() => cipher.open('shop-1', 'refresh_token', token)).toThrow()
  })
})
