/**
 * The embedded admin's session token (Shopify App Bridge): an HS256 JWT signed with the
 * app's secret. `aud` is the app's client id, `dest` the shop (`https://{shop}`), `iss` its
 * admin (`https://{shop}/admin`); `exp` and `nbf` are checked with 5 s of leeway.
 */
import { decodeJwt, jwtVerify } from 'jose'
import { AppError } from '../../lib/errors.js'
import { isShopDomain, verifyAdminQuery } from './signatures.js'

export const SESSION_TOKEN_LEEWAY_SECONDS = 5

const refused = (message: string) => new AppError('INVALID_SIGNATURE', message)

/** What a valid session token proves: its shop's domain, when it was issued and until when it holds (seconds). */
export interface SessionProof {
  shop: string
  issuedAt: number
  expiresAt: number
}

/**
 * Whether a bearer token has a session token's shape (a JWT naming a `dest`), read without
 * verifying it: such a token is answered as a session token, valid or not.
 */
export function isSessionTokenShaped(token: string): boolean {
  try {
    return typeof decodeJwt(token).dest === 'string'
  } catch {
    return false
  }
}

/** The shop a valid session token names, and when; throws 401 INVALID_SIGNATURE otherwise. */
export async function verifySessionToken(token: string, opts: { secret: string; apiKey: string | undefined }): Promise<SessionProof> {
  if (opts.apiKey === undefined) throw refused("Session tokens need SHOPIFY_API_KEY (the app's client id) to be configured")
  let payload: Record<string, unknown>
  try {
    ;({ payload } = await jwtVerify(token, new TextEncoder().encode(opts.secret), {
      algorithms: ['HS256'],
      audience: opts.apiKey,
      clockTolerance: SESSION_TOKEN_LEEWAY_SECONDS,
      requiredClaims: ['exp', 'nbf', 'iss', 'dest'],
    }))
  } catch {
    throw refused('The session token is invalid or expired')
  }
  const dest = payload.dest
  if (typeof dest !== 'string' || !dest.startsWith('https://')) throw refused('The session token names no shop')
  const shop = dest.slice('https://'.length).toLowerCase()
  if (!isShopDomain(shop)) throw refused('The session token names no *.myshopify.com shop')
  if (payload.iss !== `${dest}/admin`) throw refused("The session token's issuer is not the shop's admin")
  // `nbf` is required; `iat`, which Shopify sets to the same second, is preferred when present.
  return { shop, issuedAt: typeof payload.iat === 'number' ? payload.iat : (payload.nbf as number), expiresAt: payload.exp as number }
}

/**
 * The shop that Shopify admin's request for the embedded page proves (its URL carries
 * `shop`, `timestamp`, `hmac` and, for embedded apps, `id_token`): a valid session token
 * naming that shop, or a valid fresh `hmac`. Undefined when neither proves it: the page may
 * then be framed by nobody.
 */
export async function provenAdminShop(
  rawQuery: string,
  opts: { secret: string; apiKey: string | undefined; nowSeconds: number },
): Promise<string | undefined> {
  const params = new URLSearchParams(rawQuery)
  const shops = params.getAll('shop')
  const shop = shops.length === 1 ? shops[0]!.toLowerCase() : undefined
  if (shop === undefined || !isShopDomain(shop)) return undefined
  const tokens = params.getAll('id_token')
  if (tokens.length === 1) {
    const proof = await verifySessionToken(tokens[0]!, opts).catch(() => undefined)
    if (proof?.shop === shop) return shop
  }
  return verifyAdminQuery(params, opts.secret, opts.nowSeconds) ?? undefined
}
