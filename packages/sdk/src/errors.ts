/**
 * The error every failed call rejects with. Both error bodies of docs/api.md, "Errors", are read:
 * `{ok: false, error: {code, message, details?}}` (/v1) and `{error: {…}}` (/api/v1).
 */

/**
 * Error codes the service documents (docs/api.md, "Errors"; the `code` of the OpenAPI
 * document's error envelope: test/error-codes.test.ts keeps this list equal to it).
 */
export const SERVER_ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_JSON',
  'WISHLIST_LIMIT',
  'ITEM_LIMIT',
  'ITEM_NOT_IN_LIST',
  'SAME_LIST',
  'DEFAULT_LIST_PROTECTED',
  'WEBHOOK_LIMIT',
  /** A 51st active API key of a shop (`details.limit`: 50). */
  'KEY_LIMIT',
  /** Connecting a notification channel: the channel refused the key (e.g. Klaviyo answered 401/403). */
  'CHANNEL_KEY_REJECTED',
  'UNAUTHORIZED',
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'INVALID_CREDENTIALS',
  /** Shopify app mode: a proxy signature, webhook HMAC or session token that fails its check. */
  'INVALID_SIGNATURE',
  'FORBIDDEN',
  'PLAN_UPGRADE_REQUIRED',
  'FEATURE_DISABLED',
  'NOT_FOUND',
  /** 405: the path exists under other methods (the `Allow` header lists them). */
  'METHOD_NOT_ALLOWED',
  /** 408: the request was not received in time. */
  'REQUEST_TIMEOUT',
  'LIST_NAME_TAKEN',
  'DUPLICATE_REVIEW',
  'SHARE_EXPIRED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  /** 431: the request line and headers are over 16 KiB. */
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
  'UNAVAILABLE',
] as const

/** The codes the SDK itself gives a failure that has no documented error body. */
export const CLIENT_ERROR_CODES = [
  /** The request never got an HTTP answer (network failure, abort). */
  'NETWORK_ERROR',
  /** An error status whose body was not one of the documented envelopes. */
  'HTTP_ERROR',
] as const

/** Error codes a call can fail with: the service's and the SDK's own; other strings may appear. */
export type KnownErrorCode = (typeof SERVER_ERROR_CODES)[number] | (typeof CLIENT_ERROR_CODES)[number]

export type ErrorCode = KnownErrorCode | (string & {})

export interface WishlistApiErrorInit {
  code: ErrorCode
  message: string
  status: number
  details?: unknown
  retryAfter?: number | undefined
  requestId?: string | undefined
  cause?: unknown
}

/** A failed API call: the server's error code, HTTP status, details and `Retry-After`. */
export class WishlistApiError extends Error {
  override readonly name = 'WishlistApiError'
  /** Machine-readable code, e.g. `WISHLIST_LIMIT` or `RATE_LIMITED`. */
  readonly code: ErrorCode
  /** HTTP status; 0 when no response arrived. */
  readonly status: number
  /** The `details` of the error body (validation issues, plan requirements …). */
  readonly details: unknown
  /** Seconds to wait before retrying (from `Retry-After`), when the server sent it. */
  readonly retryAfter: number | undefined
  /** The server's `x-request-id`, useful in support requests. */
  readonly requestId: string | undefined

  constructor(init: WishlistApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = init.code
    this.status = init.status
    this.details = init.details
    this.retryAfter = init.retryAfter
    this.requestId = init.requestId
  }
}

/** True when `err` is a {@link WishlistApiError}, optionally with the given code. */
export function isWishlistApiError(err: unknown, code?: ErrorCode): err is WishlistApiError {
  return err instanceof WishlistApiError && (code === undefined || err.code === code)
}

/** Parses `Retry-After` (delta seconds or an HTTP date) into seconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000))
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

/** Builds the error of a non-2xx response from its status, headers and parsed body. */
export function errorFromResponse(status: number, headers: Headers, body: unknown): WishlistApiError {
  const retryAfter = parseRetryAfter(headers.get('retry-after'))
  const requestId = headers.get('x-request-id') ?? undefined
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined
  if (error && typeof error.code === 'string') {
    return new WishlistApiError({
      code: error.code,
      message: typeof error.message === 'string' ? error.message : error.code,
      status,
      details: error.details,
      retryAfter,
      requestId,
    })
  }
  return new WishlistApiError({ code: 'HTTP_ERROR', message: `HTTP ${status}`, status, details: body, retryAfter, requestId })
}
