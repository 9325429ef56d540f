/**
 * Shared TypeBox building blocks for route schemas: the success envelope, the error
 * envelopes and common parameters. One schema validates, types and documents.
 */
import { type TSchema, Type } from 'typebox'
import { ERROR_STATUS } from './errors.js'

/** `{ok: true, data}`: every wishlist-service success response. */
export const Ok = <T extends TSchema>(data: T) =>
  Type.Object({ ok: Type.Literal(true), data }, { additionalProperties: false })

const ErrorBody = Type.Object({
  code: Type.String({ description: `Machine-readable error code, one of: ${Object.keys(ERROR_STATUS).join(', ')}` }),
  message: Type.String(),
  details: Type.Optional(Type.Unknown()),
})

export const ErrorEnvelope = Type.Object({ ok: Type.Literal(false), error: ErrorBody }, { $id: 'ErrorEnvelope' })
/** The reviews interface (`/api/v1`) has no `ok` envelope. */
export const ReviewsErrorBody = Type.Object({ error: ErrorBody }, { $id: 'ReviewsError' })

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' })

/** Standard error responses for OpenAPI; statuses are the ones a route can produce. */
export function errors(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {}
  for (const s of statuses) out[s] = Type.Ref('ErrorEnvelope')
  return out
}
