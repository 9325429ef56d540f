/**
 * PROVISIONAL shapes, transcribed from SPEC.md + DECISIONS.md, for routes that the server
 * on this branch does not have yet (they are being built on other branches). They are
 * used ONLY as the fallback of `ResponseData`/`RequestBody`/`RequestQuery` in types.ts:
 * as soon as a route appears in the generated OpenAPI document, its generated type wins
 * and the entry here is dead. Delete entries as their routes land.
 */

/** Fallbacks keyed by `"METHOD path"` (the OpenAPI path template). */
export interface Pending {
  'get /v1/admin/customers/{customerId}/export': { data: Record<string, unknown> }
  'delete /v1/admin/customers/{customerId}': { data: Record<string, unknown> }
}
