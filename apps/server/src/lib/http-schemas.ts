/**
 * Shared TypeBox building blocks for route schemas: the success envelope, the error
 * envelopes and common parameters. One schema validates, types and documents.
 */
import { type TSchema, Type } from 'typebox'
import { ERROR_STATUS } from './errors.js'

/** `{ok: true, data}`: every wishlist-service success response. */
export const Ok = <T extends TSchema>(data: T) => Type.Object({ ok: Type.Literal(true), data }, { additionalProperties: false })

const ErrorBody = Type.Object({
  code: Type.Union(
    (Object.keys(ERROR_STATUS) as (keyof typeof ERROR_STATUS)[]).map((code) => Type.Literal(code)),
    { description: 'Machine-readable error code (docs/api.md, "Errors", lists when each is used)' },
  ),
  message: Type.String({ description: 'Human-readable; may change between versions' }),
  details: Type.Optional(
    Type.Unknown({
      description:
        'VALIDATION_ERROR: an array of `{path, message, index?}` (`path` like `body.items.3.product_id`; `index` for batch entries). PLAN_UPGRADE_REQUIRED: `{required_plan, current_plan}`. ITEM_LIMIT, KEY_LIMIT: `{limit}`',
    }),
  ),
})

const validationExample = {
  code: 'VALIDATION_ERROR',
  message: 'body.events.0 must have exactly one of customer_id and guest_id',
  details: [{ path: 'body.events.0', message: 'must have exactly one of customer_id and guest_id', index: 0 }],
}

export const ErrorEnvelope = Type.Object(
  { ok: Type.Literal(false), error: ErrorBody },
  { $id: 'ErrorEnvelope', description: "The wishlist service's error body (`/v1`)", examples: [{ ok: false, error: validationExample }] },
)
/** The reviews interface (`/api/v1`) has no `ok` envelope. */
export const ReviewsErrorBody = Type.Object(
  { error: ErrorBody },
  {
    $id: 'ReviewsError',
    description: "The reviews interface's error body (`/api/v1`): no `ok` envelope",
    examples: [
      {
        error: {
          code: 'VALIDATION_ERROR',
          message: 'body.rating must be <= 5',
          details: [{ path: 'body.rating', message: 'must be <= 5' }],
        },
      },
    ],
  },
)

/**
 * What the OpenAPI document says about one operation beyond its validation schemas. Each
 * module keeps the entries of its routes in its `*.schemas.ts`, keyed `METHOD /path` (the
 * Fastify path, `:param`); plugins/openapi.ts applies them.
 */
export interface OperationDoc {
  operationId: string
  summary: string
  description: string
  /** The description of each success status (error statuses are described centrally). */
  responses: Record<number, string>
  /** Examples of the success bodies, by status. */
  examples?: Record<number, unknown>
  /** An example request body. */
  requestExample?: unknown
  /**
   * Schemas that replace the validation schemas in the document only, where the document
   * states rules that the service checks after trimming or across fields (a discriminated
   * union of events, a required-one-of). Must accept everything the service accepts.
   */
  document?: { params?: TSchema; querystring?: TSchema; body?: TSchema }
}
export type OperationDocs = Record<string, OperationDoc>

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' })

/**
 * The pattern of a text the service trims (JavaScript's `trim()`, which removes what `\s`
 * matches), then bounds to `min`..`max` characters: a document that says `maxLength` would
 * refuse surrounding whitespace the service accepts and drops. Any leading and trailing
 * whitespace, then nothing (min 0) or a non-space, at most max - 2 characters and a
 * non-space (or the one non-space).
 */
export const trimmedTextPattern = (min: 0 | 1, max: number): string => {
  const text = max === 1 ? '\\S' : `\\S(?:[\\s\\S]{0,${max - 2}}\\S)?`
  return min === 0 ? `^\\s*(?:${text})?\\s*$` : `^\\s*${text}\\s*$`
}

/**
 * A text as the document states it for a service that trims it first: the trimmed bound as a
 * pattern, and `rawMax`, the bound the route's schema puts on the text as sent, if any.
 */
export const TrimmedText = (min: 0 | 1, max: number, description: string, rawMax?: number) =>
  Type.String({
    pattern: trimmedTextPattern(min, max),
    ...(rawMax === undefined ? {} : { maxLength: rawMax }),
    description: `${description} after trimming (surrounding whitespace is accepted and dropped)${rawMax === undefined ? '' : `; at most ${rawMax.toLocaleString('en-US')} characters as sent`}`,
  })

/**
 * An http(s) URL as the document states it: the service trims it and parses it as a browser
 * does (WHATWG URL: any case in the scheme, `https:host` without slashes, spaces and
 * non-ASCII characters escaped), which RFC 3986's `uri` format would refuse; the rules the
 * service checks after parsing are in the description.
 */
export const httpUrlPattern = (insecureToo: boolean): string => `^\\s*[Hh][Tt][Tt][Pp]${insecureToo ? '[Ss]?' : '[Ss]'}:`

const errorRefs =
  (id: string) =>
  (...statuses: number[]): Record<number, TSchema> =>
    Object.fromEntries(statuses.map((s) => [s, Type.Ref(id)]))
/** Error responses for OpenAPI, the statuses a route can produce: the wishlist service's envelope. */
export const errors = errorRefs('ErrorEnvelope')
/** The same for the reviews interface (`{error}`, no `ok`). */
export const reviewErrors = errorRefs('ReviewsError')
