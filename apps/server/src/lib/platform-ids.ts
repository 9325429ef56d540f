/**
 * Customer, product and variant ids are 1..32 digits. Platform GIDs such as
 * `gid://shopify/Product/123` are accepted on input and stored as `123`, when they name the
 * kind of object the field holds: a `gid://shopify/Customer/5` is not a product id.
 */
import { invalid } from './errors.js'

export type PlatformKind = 'Customer' | 'Product' | 'ProductVariant' | 'Order'

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

export const GUEST_ID_PATTERN = '^[A-Za-z0-9_-]{8,64}$'
const GUEST_ID = new RegExp(GUEST_ID_PATTERN)
export const isGuestId = (s: string): boolean => GUEST_ID.test(s)
