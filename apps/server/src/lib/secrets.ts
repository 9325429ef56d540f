import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * API-key secrets carry 256 random bits, so a plain SHA-256 is enough to store them
 * (a slow KDF protects low-entropy passwords, which these are not).
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex')
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return presented.length === stored.length && timingSafeEqual(presented, stored)
}
