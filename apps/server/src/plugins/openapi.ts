import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { SERVER_VERSION } from '../lib/assets.js'
import { ErrorEnvelope, type OperationDoc, type OperationDocs, ReviewsErrorBody } from '../lib/http-schemas.js'
import { GUEST_ID_MAX, GUEST_ID_MIN } from '../lib/platform-ids.js'

/**
 * What each error status means, for the responses of every operation (the codes are in
 * docs/api.md, "Errors"). Routes list the statuses their own rules produce; sharedErrorStatuses
 * adds those that follow from what an operation is.
 */
const ERROR_RESPONSES: Record<number, string> = {
  400: "The request is invalid: VALIDATION_ERROR (`details` lists each field; a Shopify webhook body that does not have its topic's shape or names another shop) or INVALID_JSON (not JSON, not UTF-8, or nested deeper than 64 levels), or a rule of the operation was broken (WISHLIST_LIMIT, ITEM_LIMIT, ITEM_NOT_IN_LIST, SAME_LIST, DEFAULT_LIST_PROTECTED, WEBHOOK_LIMIT, KEY_LIMIT), or a notification channel refused the credential given (CHANNEL_KEY_REJECTED)",
  401: 'No credentials (UNAUTHORIZED), or they are not valid: INVALID_TOKEN, TOKEN_EXPIRED, INVALID_CREDENTIALS; with `WWW-Authenticate: Bearer realm="wishlist"`',
  403: "FORBIDDEN: the credentials may not do this, or the app is uninstalled from their shop (a storefront key, a customer token); or the shop's plan is too low (PLAN_UPGRADE_REQUIRED, `details: {required_plan, current_plan}`) or the feature is off (FEATURE_DISABLED)",
  404: 'NOT_FOUND: the resource does not exist in this shop (or is not visible to the caller)',
  409: 'Conflict: LIST_NAME_TAKEN or DUPLICATE_REVIEW',
  410: 'SHARE_EXPIRED: the share link is past its `expires_at`',
  408: 'REQUEST_TIMEOUT: the request (headers and body) did not arrive within REQUEST_TIMEOUT_MS; the connection is closed',
  413: 'PAYLOAD_TOO_LARGE: the body is over its limit: 1 MiB with a bearer token, 256 KiB in guest mode on wishlist routes, 64 KiB otherwise (no credentials, the storefront key); 5 MiB for Shopify webhooks',
  415: 'UNSUPPORTED_MEDIA_TYPE: a body that is not `application/json`, or JSON with a `charset` other than `utf-8`',
  429: "RATE_LIMITED: over a rate limit (the caller's bucket, or the shop's ceiling over all its bearer-token requests), or, on exports, the shop's two exports already running; `Retry-After` says how many seconds to wait",
  431: 'HEADERS_TOO_LARGE: the request line and headers are over 16 KiB; the connection is closed',
  500: 'INTERNAL_ERROR: an unexpected failure (logged with the request id); the body never carries a stack trace or SQL',
  503: 'UNAVAILABLE: the database (or Redis) cannot be reached, or (Shopify webhooks) too many bodies are being received at once, or the Admin API that must prove one cannot be reached, or Klaviyo (a notification channel) cannot be reached; with `Retry-After`',
}

const BODY_METHODS = ['post', 'put', 'patch', 'delete']
/** Operations that answer without the database. */
const NO_STORAGE = ['/healthz', '/widget.js']
/** Statuses written before routing, on the bare connection: no rate-limit headers. */
const CONNECTION_LEVEL = [408, 431]

/**
 * The one list of error statuses that follow from what an operation is rather than from
 * what it does, added to every operation they apply to (routes list only their own):
 * 400 for anything with input (a path or query parameter over its limit, a body that is not
 * JSON), 408 and 431 for every request, 413 and 415 for every method that carries a body, 429
 * for everything rate limited, 500 for everything, 503 for everything that reads the database.
 */
function sharedErrorStatuses(method: string, path: string, parameterCount: number, limited: boolean): number[] {
  const takesBody = BODY_METHODS.includes(method)
  return [
    ...(takesBody || parameterCount > 0 ? [400] : []),
    408,
    ...(takesBody ? [413, 415] : []),
    ...(limited ? [429] : []),
    431,
    500,
    ...(NO_STORAGE.includes(path) ? [] : [503]),
  ]
}

const HEADERS: Record<string, JsonObject> = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the current one-minute window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer' } },
  'WWW-Authenticate': { description: '`Bearer realm="wishlist"`', schema: { type: 'string' } },
}
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })
const RATE_LIMIT_HEADER_REFS = {
  'X-RateLimit-Limit': ref('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': ref('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': ref('X-RateLimit-Reset'),
}

function errorHeaders(code: number, limited: boolean): JsonObject {
  return {
    ...(limited ? RATE_LIMIT_HEADER_REFS : {}),
    ...(code === 429 || code === 503 ? { 'Retry-After': ref('Retry-After') } : {}),
    ...(code === 401 ? { 'WWW-Authenticate': ref('WWW-Authenticate') } : {}),
  }
}

type JsonObject = Record<string, unknown>

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** `:param` to `{param}`, as the document writes paths. */
const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}')

/**
 * Completes the generated document: descriptions of every response, error responses as
 * named components, the rate-limit, `Retry-After` and `WWW-Authenticate` headers, examples,
 * query parameters that have a default marked optional, discriminated unions with named
 * members, and the outbound webhook events (OpenAPI 3.1 `webhooks`).
 */
function complete(
  document: JsonObject,
  operationDocs: OperationDocs,
  webhooks: JsonObject,
  routes: { unlimited: ReadonlySet<string>; optionalBodies: ReadonlySet<string> },
): JsonObject {
  const paths = (document.paths ?? {}) as Record<string, Record<string, JsonObject>>
  const responseComponents: Record<string, JsonObject> = {}
  const docsByPath = new Map<string, OperationDoc>()
  for (const [key, doc] of Object.entries(operationDocs)) {
    const [method, url] = key.split(' ') as [string, string]
    docsByPath.set(`${method.toLowerCase()} ${openapiPath(url)}`, doc)
  }
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      const doc = docsByPath.get(`${method} ${path}`)
      const parameters = (op.parameters ?? []) as JsonObject[]
      for (const param of parameters) {
        const schema = param.schema as JsonObject | undefined
        // The server fills in a missing parameter that has a default: optional for callers.
        if (param.in === 'query' && schema?.default !== undefined) param.required = false
      }
      const responses = (op.responses ??= {}) as Record<string, JsonObject>
      const limited = !routes.unlimited.has(`${method} ${path}`)
      if (routes.optionalBodies.has(`${method} ${path}`) && isObject(op.requestBody)) op.requestBody.required = false
      const errorSchema = { $ref: `#/components/schemas/${path.startsWith('/api/') ? 'ReviewsError' : 'ErrorEnvelope'}` }
      for (const code of sharedErrorStatuses(method, path, parameters.length, limited)) {
        responses[code] ??= { description: ERROR_RESPONSES[code], content: { 'application/json': { schema: errorSchema } } }
      }
      for (const [status, response] of Object.entries(responses)) {
        const code = Number(status)
        if (response.$ref !== undefined) continue
        if (code >= 400) {
          // One named response per error status and body shape, with its headers.
          const schema = (response.content as Record<string, JsonObject> | undefined)?.['application/json']?.schema as
            JsonObject | undefined
          const shape = String(schema?.$ref ?? '').endsWith('/ReviewsError') ? 'ReviewsError' : 'Error'
          const withLimitHeaders = limited && !CONNECTION_LEVEL.includes(code)
          const name = `${shape}${code}${withLimitHeaders || CONNECTION_LEVEL.includes(code) ? '' : 'Unlimited'}`
          responseComponents[name] ??= {
            ...response,
            description: ERROR_RESPONSES[code] ?? response.description,
            headers: errorHeaders(code, withLimitHeaders),
          }
          responses[status] = { $ref: `#/components/responses/${name}` }
          continue
        }
        if (doc?.responses[code]) response.description = doc.responses[code]
        // A route without an operation doc: its summary describes its success.
        else if (response.description === 'Default Response' && typeof op.summary === 'string') response.description = op.summary
        if (limited) response.headers = { ...RATE_LIMIT_HEADER_REFS, ...(response.headers as JsonObject | undefined) }
        const example = doc?.examples?.[code]
        const content = response.content as Record<string, JsonObject> | undefined
        if (example !== undefined && content?.['application/json']) content['application/json'].example = example
      }
      if (doc?.requestExample !== undefined) {
        const body = (op.requestBody as JsonObject | undefined)?.content as Record<string, JsonObject> | undefined
        if (body?.['application/json']) body['application/json'].example = doc.requestExample
      }
    }
  }
  hoistDiscriminatedUnions(document)
  const components = document.components as JsonObject
  components.responses = Object.fromEntries(Object.entries(responseComponents).sort(([a], [b]) => a.localeCompare(b)))
  components.headers = HEADERS
  return { ...document, webhooks }
}

/**
 * A discriminator can select only named schemas: each inline member of a discriminated
 * union (named by its `title`) becomes a component, with the mapping from its `type`.
 */
function hoistDiscriminatedUnions(document: JsonObject): void {
  const components = document.components as { schemas?: Record<string, unknown> }
  const schemas = (components.schemas ??= {})
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!isObject(node)) return
    for (const value of Object.values(node)) visit(value)
    const discriminator = node.discriminator as { propertyName: string; mapping?: Record<string, string> } | undefined
    const members = (node.oneOf ?? node.anyOf) as JsonObject[] | undefined
    if (!discriminator || !members) return
    const mapping: Record<string, string> = {}
    const refs = members.map((member) => {
      const name = member.title
      if (typeof name !== 'string') return member
      schemas[name] = member
      const ref = `#/components/schemas/${name}`
      const tag = (
        (member.properties as Record<string, JsonObject> | undefined)?.[discriminator.propertyName]?.enum as string[] | undefined
      )?.[0]
      if (tag !== undefined) mapping[tag] = ref
      return { $ref: ref }
    })
    delete node.anyOf
    node.oneOf = refs
    discriminator.mapping = mapping
  }
  visit(document.paths)
}

/**
 * OpenAPI 3.1 generated from the route schemas that also validate requests; its browsable reference at /docs is plugins/api-reference.ts.
 */
export const openapiPlugin = fp(
  async (app: FastifyInstance, opts: { publicBaseUrl: string; operationDocs: OperationDocs; webhookEvents: JsonObject }) => {
    const unlimited = new Set<string>()
    const optionalBodies = new Set<string>()
    app.addSchema(ErrorEnvelope)
    app.addSchema(ReviewsErrorBody)
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Wishlist service',
          version: SERVER_VERSION,
          description:
            'Wishlists, named lists, share links, bulk import, platform events, analytics and outbound webhooks under `/v1` (success bodies `{ok: true, data}`, errors `{ok: false, error}`), and product reviews under `/api/v1` (bare bodies, errors `{error}`). Credentials, plans, limits and the behaviour the schemas cannot state are described in docs/api.md in the repository.',
          license: { name: 'MIT', identifier: 'MIT' },
        },
        servers: [{ url: opts.publicBaseUrl, description: 'This server (PUBLIC_BASE_URL)' }],
        tags: [
          { name: 'auth', description: 'Access tokens from API keys' },
          { name: 'wishlists', description: "Items of a customer's or guest's wishlist: read, add, remove, bulk delete, merge" },
          { name: 'lists', description: 'Named lists (multi-wishlist: growth plan and the shop setting)' },
          { name: 'share', description: 'Read-only share links' },
          { name: 'import', description: 'Bulk import (growth plan)' },
          { name: 'events', description: 'The platform events intake: carts, products, orders' },
          { name: 'analytics', description: 'Admin analytics' },
          { name: 'webhooks', description: 'Outbound webhook endpoints and their deliveries' },
          { name: 'admin', description: 'The shop, its settings and its API keys (the dashboard)' },
          { name: 'privacy', description: "Customer data requests, erasure and the shop's CSV export" },
          { name: 'reviews', description: 'Product reviews (`/api/v1`): listing, summary, submission, helpful votes, invitations' },
          {
            name: 'reviews moderation',
            description: "The merchant's moderation of reviews, and the review invitations of its orders (admin token)",
          },
          { name: 'shopify', description: "Shopify app mode (on when SHOPIFY_API_SECRET is set, else 404): Shopify's webhooks" },
          { name: 'storefront', description: 'The embeddable widget' },
          { name: 'operations', description: 'Health and readiness' },
        ],
        components: {
          securitySchemes: {
            bearer: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: 'An access token from `POST /v1/auth/token` (admin or customer scope)',
            },
            storefrontKey: {
              type: 'apiKey',
              in: 'header',
              name: 'X-Storefront-Key',
              description: "The shop's public storefront key (`sfk_…`)",
            },
            guestId: {
              type: 'apiKey',
              in: 'header',
              name: 'X-Guest-Id',
              description: `Guest mode: an id the client made (${GUEST_ID_MIN}..${GUEST_ID_MAX} of \`[A-Za-z0-9_-]\`), with the storefront key`,
            },
            guestIdQuery: {
              type: 'apiKey',
              in: 'query',
              name: 'guest_id',
              description: 'Guest mode: the guest id as a query parameter instead of `X-Guest-Id`',
            },
          },
        },
      },
      // Component names are the schemas' $id (ErrorEnvelope, ReviewsError), not def-N.
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
      // Security requirements follow each route's declared access; metadata and the
      // document-only schemas come from the modules' operation docs.
      transform: ({ schema, url, route }) => {
        const access = route.config?.access ?? []
        const security: Record<string, string[]>[] = []
        if (access.includes('admin') || access.includes('customer')) security.push({ bearer: [] })
        if (access.includes('guest')) security.push({ storefrontKey: [], guestId: [] }, { storefrontKey: [], guestIdQuery: [] })
        if (access.includes('storefront')) security.push({ storefrontKey: [] })
        const hide = url.startsWith('/docs')
        const method = [route.method].flat()[0] as string
        // Routes outside the rate limiter (`config.rateLimit: false`): no 429, no rate-limit headers.
        const key = `${method.toLowerCase()} ${openapiPath(url)}`
        if ((route.config as { rateLimit?: unknown } | undefined)?.rateLimit === false) unlimited.add(key)
        // A body schema marked Type.Optional: the request may leave the body out.
        if ((schema.body as { '~optional'?: unknown } | undefined)?.['~optional'] === true) optionalBodies.add(key)
        const doc = opts.operationDocs[`${method} ${url}`]
        // An operation's summary and description live in its operation docs only: a route schema
        // that sets one too would be silently overwritten here.
        const duplicated = doc ? (['summary', 'description'] as const).filter((k) => schema[k] !== undefined && doc[k] !== undefined) : []
        if (duplicated.length > 0)
          throw new Error(
            `${method} ${url}: the route schema sets ${duplicated.join(' and ')}, which its operation docs also set; keep them in the operation docs only`,
          )
        const described = doc ? { operationId: doc.operationId, summary: doc.summary, description: doc.description, ...doc.document } : {}
        return { schema: { ...schema, ...described, security, ...(hide ? { hide: true } : {}) } as typeof schema, url }
      },
      transformObject: (documentObject) =>
        complete((documentObject as { openapiObject: JsonObject }).openapiObject, opts.operationDocs, opts.webhookEvents, {
          unlimited,
          optionalBodies,
        }) as never,
    })
  },
  { name: 'openapi' },
)
