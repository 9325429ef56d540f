/**
 * The embedded admin's session token (Shopify App Bridge): an HS256 JWT signed with the
 * app's secret. `aud` is the app's client id, `dest` the shop (`https://{shop}`), `iss` its
 * admin (`https://{shop}/admin`); `exp` and `nbf` are checked with 5 s of leeway.
 */
import { jwtVerify } from 'jose'
import { AppError } from '../../lib/errors.js'
import { isShopDomain } from './signatures.js'

export const SESSION_TOKEN_LEEWAY_SECONDS = 5

const refused = (message: string) => new AppError('INVALID_SIGNATURE', message)

/** The shop domain a valid session token names; throws 401 INVALID_SIGNATURE otherwise. */
export async function verifySessionToken(token: string, opts: { secret: string; apiKey: string | undefined }): Promise<string> {
  if (opts.apiKey === undefined) throw refused('Session tokens need SHOPIFY_API_KEY (the app\'s client id) to be configured')
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
  if (payload.iss !== `${dest}/admin`) throw refused('The session token\'s issuer is not the shop\'s admin')
  return shop
}
