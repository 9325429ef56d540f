/**
 * One error type for the whole service. Routes and services throw `AppError(code, …)`;
 * the error plugin maps the code to its status and writes the documented envelope.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  WISHLIST_LIMIT: 400,
  ITEM_LIMIT: 400,
  ITEM_NOT_IN_LIST: 400,
  SAME_LIST: 400,
  DEFAULT_LIST_PROTECTED: 400,
  WEBHOOK_LIMIT: 400,
  KEY_LIMIT: 400,
  UNAUTHORIZED: 401,
  INVALID_TOKEN: 401,
  TOKEN_EXPIRED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  PLAN_UPGRADE_REQUIRED: 403,
  FEATURE_DISABLED: 403,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  LIST_NAME_TAKEN: 409,
  DUPLICATE_REVIEW: 409,
  SHARE_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  UNAVAILABLE: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

export interface ErrorDetail {
  path: string
  message: string
  index?: number
}

export class AppError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly details: unknown
  /** Response headers the error carries (a 429's `retry-after`). */
  readonly headers: Readonly<Record<string, string>> | undefined

  constructor(code: ErrorCode, message: string, details?: unknown, headers?: Record<string, string>) {
    super(message)
    this.name = 'AppError'
    this.code = code
    this.statusCode = ERROR_STATUS[code]
    this.details = details
    this.headers = headers
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`)

export const validationError = (details: ErrorDetail[], message = 'Request validation failed'): AppError =>
  new AppError('VALIDATION_ERROR', message, details)
