/**
 * Verifying a webhook delivery as the Standard Webhooks specification says, which is how the
 * service signs them: `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the
 * endpoint's `whsec_` secret. Web Crypto only, so it runs on Node 18+, in browsers and in edge
 * runtimes (and is async).
 */
import type { WebhookEvent } from './generated/webhook-events.js'

/** Why a delivery was not accepted. */
export type WebhookVerificationErrorCode =
  /** The secret is not `whsec_` followed by base64. */
  | 'INVALID_SECRET'
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing or empty. */
  | 'MISSING_HEADERS'
  /** `webhook-timestamp` is not Unix seconds. */
  | 'INVALID_TIMESTAMP'
  /** `webhook-timestamp` is further in the past than the tolerance (a replay, or a clock far behind). */
  | 'TIMESTAMP_TOO_OLD'
  /** `webhook-timestamp` is further in the future than the tolerance. */
  | 'TIMESTAMP_TOO_NEW'
  /** No `v1` signature of `webhook-signature` matches (another secret, or a changed id, timestamp or body). */
  | 'INVALID_SIGNATURE'
  /** The signature matches, but the body is not a JSON event object. */
  | 'INVALID_PAYLOAD'

/** A delivery that {@link verifyWebhook} refused; answer it with 400 (or 401) and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
  readonly code: WebhookVerificationErrorCode

  constructor(code: WebhookVerificationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}

/** The request's headers: a `Headers` instance, or a plain object whose names may be of any case (Node's `req.headers`). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>

/** The body exactly as received: the signature covers its bytes, so never a re-serialized object. */
export type WebhookBody = string | Uint8Array | ArrayBuffer

export interface VerifyWebhookOptions {
  /** The largest distance, either way, between `webhook-timestamp` and the clock, in seconds. Default 300 (5 minutes). */
  toleranceSeconds?: number
  /** The clock (ms since epoch); defaults to `Date.now`. */
  now?: () => number
}

const DEFAULT_TOLERANCE_SECONDS = 5 * 60
const SECRET_PREFIX = 'whsec_'
const encoder = new TextEncoder()

function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | readonly string[] | null | undefined
  if (typeof (headers as Headers).get === 'function') {
    value = (headers as Headers).get(name)
  } else {
    for (const [key, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
      if (key.toLowerCase() === name) {
        value = v
        break
      }
    }
  }
  const text = typeof value === 'string' ? value : Array.isArray(value) ? value.join(' ') : undefined
  return text === undefined || text.trim() === '' ? undefined : text.trim()
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(text)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    return undefined
  }
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

/** Equal in time independent of where they differ (the length, 44 characters for HMAC-SHA256, is public). */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}

/** Web Crypto: the global one, or node:crypto's on Node 18 (global from Node 19 on). */
async function subtleCrypto(): Promise<SubtleCrypto> {
  const global = (globalThis as { crypto?: Crypto }).crypto
  if (global?.subtle) return global.subtle
  // Not a literal, and marked for bundlers: a browser build never resolves node:crypto.
  const specifier = 'node:crypto'
  const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as { webcrypto?: Crypto }
  if (!mod.webcrypto?.subtle) throw new Error('verifyWebhook needs Web Crypto (crypto.subtle)')
  return mod.webcrypto.subtle
}

function bodyBytes(body: WebhookBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body)
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  throw new TypeError('verifyWebhook: the body must be the raw request body (string, Uint8Array or ArrayBuffer)')
}

/**
 * Verifies a webhook delivery and returns its event, typed by `event`. `secret` is the
 * endpoint's `whsec_…` signing secret (shown once by `webhooks.create`), `headers` the
 * request's headers and `rawBody` its body exactly as received. Accepts the delivery when one
 * of the space-separated `v1,<base64>` signatures is the HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{body}` (compared in constant time) and the timestamp is
 * within 5 minutes of the clock; otherwise rejects with a {@link WebhookVerificationError}.
 * Deduplicate on `webhook-id`: a retried delivery keeps it.
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: WebhookBody,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const key =
    typeof secret === 'string' ? fromBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret) : undefined
  if (key === undefined || key.length === 0) {
    throw new WebhookVerificationError('INVALID_SECRET', 'The webhook secret is not `whsec_` followed by base64')
  }

  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError('MISSING_HEADERS', 'The webhook-id, webhook-timestamp and webhook-signature headers are required')
  }

  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('INVALID_TIMESTAMP', 'webhook-timestamp is not Unix seconds')
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000)
  const sentAt = Number(timestamp)
  if (nowSeconds - sentAt > tolerance) throw new WebhookVerificationError('TIMESTAMP_TOO_OLD', 'webhook-timestamp is too old')
  if (sentAt - nowSeconds > tolerance) throw new WebhookVerificationError('TIMESTAMP_TOO_NEW', 'webhook-timestamp is in the future')

  const body = bodyBytes(rawBody)
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + body.length)
  signed.set(prefix)
  signed.set(body, prefix.length)
  const subtle = await subtleCrypto()
  const hmacKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = encoder.encode(toBase64(new Uint8Array(await subtle.sign('HMAC', hmacKey, signed))))

  // Compared as base64 text, as the reference libraries do.
  let matched = false
  for (const entry of signatures.split(/\s+/)) {
    const comma = entry.indexOf(',')
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue
    if (equalBytes(encoder.encode(entry.slice(comma + 1)), expected)) matched = true
  }
  if (!matched) throw new WebhookVerificationError('INVALID_SIGNATURE', 'No webhook signature matches the secret')

  let payload: unknown
  try {
    payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch (err) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The webhook body is not JSON', { cause: err })
  }
  if (
    typeof payload !== 'object' ||
    payload === null ||
    Array.isArray(payload) ||
    typeof (payload as { event?: unknown }).event !== 'string'
  ) {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The webhook body is not an event object')
  }
  return payload as WebhookEvent
}
