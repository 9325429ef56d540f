/**
 * Type-level access to the generated OpenAPI `paths`: request bodies, query parameters and
 * the `data` of success responses of one operation. Every exported shape of the SDK is
 * derived through these helpers, so it follows the server's schemas.
 */
import type { paths } from './generated/openapi.js'

export type Paths = paths
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'

/** The operation object of `M P`, or `never` when the server does not (yet) have it. */
export type Operation<P extends string, M extends HttpMethod> = P extends keyof Paths
  ? M extends keyof Paths[P]
    ? NonNullable<Paths[P][M]>
    : never
  : never

type JsonContent<R> = R extends { content: { 'application/json': infer J } } ? J : never
type SuccessStatus = 200 | 201 | 202

/** The JSON body of the operation's 200/201/202 response. */
export type SuccessBody<O> = O extends { responses: infer R } ? JsonContent<R[Extract<keyof R, SuccessStatus>]> : never

/** Unwraps the `{ok: true, data}` envelope of the wishlist service; reviews bodies pass through. */
export type Unwrap<B> = B extends { ok: true; data: infer D } ? D : B

/** The JSON request body of the operation. */
export type BodyOf<O> = O extends { requestBody?: infer RB } ? JsonContent<NonNullable<RB>> : never

/** The query parameters of the operation. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never

type IsNever<T> = [T] extends [never] ? true : false

/**
 * The `data` of `M P`; `Fallback` only while the server has no such route (a route of a
 * branch not merged yet). Once the route exists the fallback is ignored.
 */
export type ResponseData<P extends string, M extends HttpMethod, Fallback = never> =
  IsNever<Operation<P, M>> extends true ? Fallback : Unwrap<SuccessBody<Operation<P, M>>>

/** The request body of `M P`, with the same fallback rule. */
export type RequestBody<P extends string, M extends HttpMethod, Fallback = never> =
  IsNever<Operation<P, M>> extends true ? Fallback : BodyOf<Operation<P, M>>

/** The query of `M P`, with the same fallback rule. */
export type RequestQuery<P extends string, M extends HttpMethod, Fallback = never> =
  IsNever<Operation<P, M>> extends true ? Fallback : QueryOf<Operation<P, M>>
