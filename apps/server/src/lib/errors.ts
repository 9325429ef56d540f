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
  CHANNEL_KEY_REJECTED: 400,
  UNAUTHORIZED: 401,
  INVALID_TOKEN: 401,
  TOKEN_EXPIRED: 401,
  INVALID_CREDENTIALS: 401,
  INVALID_SIGNATURE: 401,
  FORBIDDEN: 403,
  PLAN_UPGRADE_REQUIRED: 403,
  FEATURE_DISABLED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
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

/**
 * A VALIDATION_ERROR with these details, the one way every module builds it; its message is
 * `message`, else the first detail's `path message`.
 */
export const invalid = (details: ErrorDetail[], message?: string): AppError =>
  new AppError(
    'VALIDATION_ERROR',
    message ?? (details[0] ? `${details[0].path} ${details[0].message}` : 'Request validation failed'),
    details,
  )

export interface AjvError {
  instancePath: string
  message?: string
  keyword: string
  params: Record<string, unknown>
}

/**
 * A value outside a set of literals (`Type.Union` of `Type.Literal`s: a period, a sort, an
 * event name) fails each literal's `const` and then the `anyOf`: one detail naming the
 * allowed values says it better than one per literal.
 */
function collapseLiteralChoices(errors: AjvError[]): AjvError[] {
  const allowed = new Map<string, unknown[]>()
  for (const e of errors)
    if (e.keyword === 'const') allowed.set(e.instancePath, [...(allowed.get(e.instancePath) ?? []), e.params.allowedValue])
  if (allowed.size === 0) return errors
  const choices = new Set(errors.filter((e) => e.keyword === 'anyOf' && allowed.has(e.instancePath)).map((e) => e.instancePath))
  return errors.flatMap((e) => {
    if (!choices.has(e.instancePath)) return [e]
    if (e.keyword === 'const') return []
    if (e.keyword !== 'anyOf') return [e]
    return [{ ...e, message: `must be one of: ${(allowed.get(e.instancePath) ?? []).join(', ')}` }]
  })
}

/** A value outside an `enum`: its values when they are few, else how many there are (the API reference lists them). */
function enumMessage(e: AjvError): string | undefined {
  const values = e.keyword === 'enum' ? e.params.allowedValues : undefined
  if (!Array.isArray(values)) return undefined
  const shown = values.map((v) => (v === null ? 'null' : String(v)))
  return shown.length <= 12
    ? `must be one of: ${shown.join(', ')}`
    : `must be one of the ${shown.length} values the API reference lists for it`
}

/**
 * `{path, message, index?}` per schema failure. `batches` names the top-level arrays whose
 * elements are the items of a batch (the route or module says which: `config.batches`); a
 * failure inside one of them carries the element's `index`.
 */
export function validationDetails(errors: AjvError[], context: string | undefined, batches: readonly string[] = []): ErrorDetail[] {
  return collapseLiteralChoices(errors).map((e) => {
    const segments = e.instancePath.split('/').filter(Boolean)
    if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') segments.push(e.params.missingProperty)
    if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') segments.push(e.params.additionalProperty)
    const location = context === 'querystring' ? 'query' : (context ?? 'body')
    const path = [location, ...segments].join('.')
    const detail: ErrorDetail = { path, message: enumMessage(e) ?? e.message ?? 'is invalid' }
    const first = segments[0]
    const second = segments[1]
    if (first !== undefined && batches.includes(first) && second !== undefined && /^\d+$/.test(second)) detail.index = Number(second)
    return detail
  })
}
