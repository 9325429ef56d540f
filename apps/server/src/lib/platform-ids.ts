/**
 * Customer, product and variant ids are 1..32 digits. Platform GIDs such as
 * `gid://shopify/Product/123` are accepted on input and stored as `123`.
 */
const DIGITS = /^[0-9]{1,32}$/
const GID = /^gid:\/\/[A-Za-z]+\/[A-Za-z]+\/([0-9]{1,32})$/

/** Returns the bare numeric id, or null when the input is neither digits nor a GID. */
export function normalizePlatformId(input: string): string | null {
  if (DIGITS.test(input)) return input
  const m = GID.exec(input)
  return m ? (m[1] as string) : null
}

/** JSON-schema pattern matching what `normalizePlatformId` accepts. */
export const PLATFORM_ID_PATTERN = '^([0-9]{1,32}|gid://[A-Za-z]+/[A-Za-z]+/[0-9]{1,32})$'

export const GUEST_ID_PATTERN = '^[A-Za-z0-9_-]{8,64}$'
const GUEST_ID = new RegExp(GUEST_ID_PATTERN)
export const isGuestId = (s: string): boolean => GUEST_ID.test(s)
export const isCustomerId = (s: string): boolean => DIGITS.test(s)
