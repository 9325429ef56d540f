import { randomBytes } from 'node:crypto'

/** Prefixed random ids (`wl_…`, `wh_…`, `ak_…`): opaque, unguessable, never sequential. */
export type IdPrefix = 'shop' | 'ak' | 'sfk' | 'wl' | 'wh' | 'msg' | 'dlv' | 'req' | 'g' | 'evt'

export function newId(prefix: IdPrefix, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`
}

/** A secret with `bits` of entropy, base64url encoded, with a readable prefix. */
export function newSecret(prefix: 'sk' | 'whsec' | 'sfk', bits = 256): string {
  return `${prefix}_${randomBytes(bits / 8).toString('base64url')}`
}
