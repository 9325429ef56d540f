import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import FindMyWay from 'find-my-way'
import fp from 'fastify-plugin'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { sqliteResultCode } from '../db/sqlite-file.js'
import { type AjvError, AppError, ERROR_STATUS, type ErrorCode, invalid, validationDetails } from '../lib/errors.js'

/** Seconds a client should wait before retrying when the database is unreachable. */
const UNAVAILABLE_RETRY_AFTER_S = 5

// Connection-level failures of pg / node sockets, and PostgreSQL's SQLSTATE classes 08
// (connection exception; PgBouncer's own errors, "server conn crashed?", "server login has
// been failing", are 08P01) and 57P (operator intervention: shutdown, crash recovery), and
// 25006 read_only_sql_transaction: a write that reached a standby not yet promoted (during a
// failover) is refused until the promotion, never an internal error.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '53300', '25006'])
const UNAVAILABLE_SQLITE_CODES = new Set(['SQLITE_BUSY', 'SQLITE_CANTOPEN'])

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true
  if (UNAVAILABLE_SQLITE_CODES.has(sqliteResultCode(err) ?? '')) return true
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)/i.test(
    err.message,
  )
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The top-level arrays of the route's body whose elements are the items of a batch
     * (`items` of an import): a schema failure inside one carries the element's `index`.
     */
    batches?: readonly string[]
  }
}

function fromFastifyError(err: FastifyError, batches: readonly string[] | undefined): AppError {
  if (err.validation) return invalid(validationDetails(err.validation as AjvError[], err.validationContext, batches))
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than 1 MiB')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('INVALID_JSON', 'The request body is not valid JSON')
  }
  if (err instanceof SyntaxError && err.statusCode === 400) return new AppError('INVALID_JSON', 'The request body is not valid JSON')
  const byStatus: Record<number, ErrorCode> = {
    400: 'VALIDATION_ERROR',
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
    429: 'RATE_LIMITED',
  }
  const code = err.statusCode !== undefined ? byStatus[err.statusCode] : undefined
  if (code) return new AppError(code, err.message)
  if (isDatabaseUnavailable(err)) return new AppError('UNAVAILABLE', 'The database is unavailable; retry shortly')
  return new AppError('INTERNAL_ERROR', 'Internal server error')
}

/** Reviews (`/api/…`, also through the app proxy) answer `{error}`; the wishlist service answers `{ok: false, error}`. */
const errorPayload = (url: string, error: { code: ErrorCode; message: string; details?: unknown }) =>
  url.startsWith('/api/') || url.startsWith('/proxy/api/') ? { error } : { ok: false, error }

/** Writes `error` in the documented shape of the request's interface. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const body = { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) }
  if (error.statusCode === 401) {
    const param = error.code === 'INVALID_TOKEN' || error.code === 'TOKEN_EXPIRED' ? ', error="invalid_token"' : ''
    reply.header('www-authenticate', `Bearer realm="wishlist"${param}`)
  }
  if (error.code === 'UNAVAILABLE') reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S))
  if (error.headers) reply.headers(error.headers)
  reply.code(error.statusCode).type('application/json; charset=utf-8')
  // Errors bypass response schemas: a route's 2xx schema must never reshape an error.
  return reply.serializer(JSON.stringify).send(errorPayload(request.url, body))
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses before any route can
 * see it (headers over 16 KiB, a malformed request line or Content-Length, a client too slow
 * to send its headers, a body not received within REQUEST_TIMEOUT_MS: 408 REQUEST_TIMEOUT)
 * still gets the documented error shape, `{error}` under `/api/`; the connection is closed.
 */
export function clientErrorHandler(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  // An answer already started on this connection (a refusal sent before its body was read,
  // whose body then never finished arriving): nothing more can be written, only closed.
  const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (started) {
    socket.destroy()
    return
  }
  const [code, message]: [ErrorCode, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ['HEADERS_TOO_LARGE', 'The request line and headers are larger than 16 KiB']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', 'The request was not received in time']
        : ['VALIDATION_ERROR', 'The HTTP request is malformed']
  const status = ERROR_STATUS[code]
  const raw: unknown = err.rawPacket // a Buffer at run time, whatever Fastify's types say
  // The target of the request line: from the raw packet of a parse error, or (a request that timed out) the request in flight.
  const inFlight = (socket as Socket & { parser?: { incoming?: { url?: string } | null } | null }).parser?.incoming?.url
  const target = Buffer.isBuffer(raw) ? (raw.toString('latin1', 0, 64).split(' ')[1] ?? '') : (inFlight ?? '')
  const body = JSON.stringify(errorPayload(target, { code, message }))
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(err)
}

export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = err instanceof AppError ? err : fromFastifyError(err, request.routeOptions.config?.batches)
    if (appError.statusCode >= 500) {
      // An outage says which (the database, a platform's API) in its own message.
      request.log.error({ err }, appError.code === 'UNAVAILABLE' ? `unavailable: ${appError.message}` : 'unhandled error')
    }
    return sendError(request, reply, appError)
  })

  // Which methods each path has: a request whose path exists under another method answers
  // 405 METHOD_NOT_ALLOWED with `Allow`; an unknown path stays 404. Fastify has no such
  // answer built in, so its routes are mirrored into a path-only router (find-my-way, the
  // router Fastify itself uses, with the same options) as they are added.
  const paths = FindMyWay<FindMyWay.HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 1_000_000 })
  const methodsOf = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    // The OPTIONS catch-all (plugins/cors.ts) answers preflights for every path: not a resource.
    if (route.url === '/*' || route.url === '*') return
    // '/a' and '/a/' are one path (ignoreTrailingSlash): the first one declared keeps the methods.
    const key = (paths.findRoute('GET', route.url)?.store as string | undefined) ?? route.url
    if (!methodsOf.has(key)) paths.on('GET', route.url, () => undefined, key)
    const methods = methodsOf.get(key) ?? new Set<string>()
    methodsOf.set(key, methods)
    for (const method of [route.method].flat()) methods.add(method)
  })
  const allowedMethods = (url: string): string[] => {
    const path = url.split('?')[0] ?? url
    const found = paths.find('GET', path)
    const methods = found ? methodsOf.get(found.store as string) : undefined
    if (!methods) return []
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods].sort()
  }

  app.setNotFoundHandler((request, reply) => {
    const allow = request.method === 'OPTIONS' ? [] : allowedMethods(request.url)
    if (allow.length > 0 && !allow.includes(request.method)) {
      reply.header('allow', allow.join(', '))
      return sendError(
        request,
        reply,
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${request.method} is not allowed on ${request.url.split('?')[0]}; allowed: ${allow.join(', ')}`,
        ),
      )
    }
    return sendError(request, reply, new AppError('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`))
  })
})
