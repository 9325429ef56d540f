/**
 * Customer, product and variant ids are 1..32 digits. Platform GIDs such as
 * `gid://shopify/Product/123` are accepted on input and stored as `123`, when they name the
 * kind of object the field holds: a `gid://shopify/Customer/5` is not a product id.
 */
import { invalid } from './errors.js'

export type PlatformKind = 'Customer' | 'Product' | 'ProductVariant' | 'Order'

/**
 * The longest id text a request may send where a platform id is expected: a GID's platform
 * name is letters of any length, so the pattern alone would not bound it.
 */
export const PLATFORM_ID_MAX_LENGTH = 100

const DIGITS = /^[0-9]{1,32}$/
const GID = /^gid:\/\/[A-Za-z]+\/([A-Za-z]+)\/([0-9]{1,32})$/

/** The bare numeric id, or null when the input is neither digits nor a GID of `kind`. */
export function normalizePlatformId(input: string, kind: PlatformKind): string | null {
  if (DIGITS.test(input)) return input
  const m = GID.exec(input)
  return m && m[1] === kind ? (m[2] as string) : null
}

/** `normalizePlatformId` for a request field: a 400 naming `path` when the id is refused. */
export function platformIdOf(raw: string, kind: PlatformKind, path: string): string {
  const id = normalizePlatformId(raw, kind)
  if (id === null) throw invalid([{ path, message: platformIdRule(kind) }])
  return id
}

/** JSON-schema pattern matching what `normalizePlatformId(…, kind)` accepts. */
export const platformIdPattern = (kind: PlatformKind): string => `^([0-9]{1,32}|gid://[A-Za-z]+/${kind}/[0-9]{1,32})$`

/** How a refused id is described: `must be 1 to 32 digits or a platform GID of a Product`. */
export const platformIdRule = (kind: PlatformKind): string => `must be 1 to 32 digits or a platform GID of a ${kind} (gid://…/${kind}/123)`

/** A guest id, made by the client: GUEST_ID_MIN..GUEST_ID_MAX characters of `[A-Za-z0-9_-]` (the one place this rule lives). */
export const GUEST_ID_MIN = 8
export const GUEST_ID_MAX = 64
/** The guest id's characters and length, unanchored (for patterns that allow other forms too). */
export const GUEST_ID_BODY = `[A-Za-z0-9_-]{${GUEST_ID_MIN},${GUEST_ID_MAX}}`
export const GUEST_ID_PATTERN = `^${GUEST_ID_BODY}$`
/** The rule in words, for descriptions and error messages. */
export const GUEST_ID_RULE = `${GUEST_ID_MIN} to ${GUEST_ID_MAX} characters of A-Z, a-z, 0-9, _ and -`
const GUEST_ID = new RegExp(GUEST_ID_PATTERN)
export const isGuestId = (s: string): boolean => GUEST_ID.test(s)
