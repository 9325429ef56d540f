import { randomBytes } from 'node:crypto'

/** Prefixed random ids (`wl_…`, `wh_…`, `ak_…`): opaque, unguessable, never sequential. */
export type IdPrefix = 'shop' | 'ak' | 'sfk' | 'wl' | 'wh' | 'msg' | 'dlv' | 'req' | 'g' | 'evt'

// Ids draw from a pool of CSPRNG bytes refilled 4 KiB at a time, each byte used once: as
// unguessable as a randomBytes() call per id, without a call into the CSPRNG per request
// (every request gets an id; bench: 5% of a GET page's CPU went to randomBytes).
const POOL_BYTES = 4096
let pool = Buffer.alloc(0)
let offset = 0

function poolBytes(n: number): Buffer {
  if (offset + n > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, n))
    offset = 0
  }
  const out = pool.subarray(offset, offset + n)
  offset += n
  return out
}

export function newId(prefix: IdPrefix, bytes = 12): string {
  return `${prefix}_${poolBytes(bytes).toString('base64url')}`
}

/** A secret with `bits` of entropy, base64url encoded, with a readable prefix. */
export function newSecret(prefix: 'sk' | 'whsec' | 'sfk', bits = 256): string {
  return `${prefix}_${randomBytes(bits / 8).toString('base64url')}`
}
