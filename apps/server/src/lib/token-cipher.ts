/**
 * Secrets the service keeps in its database, at rest: the shops' Admin API tokens
 * (platforms/shopify) and the merchants' notification channel keys (modules/notifications),
 * AES-256-GCM with SHOPIFY_TOKEN_KEY (config.ts). A sealed token is `v1.` and the base64url of
 * its 12-byte nonce, 16-byte tag and ciphertext; the shop and the column are its associated
 * data, so a sealed value copied to another shop or column does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 'v1.'
const NONCE_BYTES = 12
const TAG_BYTES = 16

/** The column a sealed value belongs to: a Shopify token's, or a notification channel's credential (`channel:klaviyo`). */
export type TokenField = 'access_token' | 'refresh_token' | `channel:${string}`

export function createTokenCipher(key: Buffer) {
  const context = (shopId: string, field: TokenField) => Buffer.from(`${shopId}\n${field}`, 'utf8')
  return {
    seal(shopId: string, field: TokenField, token: string): string {
      const nonce = randomBytes(NONCE_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(context(shopId, field))
      const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()])
      return VERSION + Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64url')
    },

    /** The token; throws when the value was sealed with another key, for another shop or column, or altered. */
    open(shopId: string, field: TokenField, sealed: string): string {
      if (!sealed.startsWith(VERSION)) throw new Error('not a sealed token')
      const bytes = Buffer.from(sealed.slice(VERSION.length), 'base64url')
      // The tag's length fixed: GCM would otherwise take a shortened (forgeable) tag.
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES })
        .setAAD(context(shopId, field))
        .setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES))
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
    },
  }
}

export type TokenCipher = ReturnType<typeof createTokenCipher>
