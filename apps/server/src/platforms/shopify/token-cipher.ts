/** The cipher of the shops' Admin API tokens at rest: lib/token-cipher.ts (shared with the notification channels' keys). */
export { createTokenCipher, type TokenCipher, type TokenField } from '../../lib/token-cipher.js'
