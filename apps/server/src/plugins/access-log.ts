/**
 * One "request completed" line per request, at info level, the same JSON record pino writes
 * for `request.log.info({req, res, responseTime}, 'request completed')` (the URL with share
 * tokens redacted, no headers), serialized by a schema compiled once instead of pino's
 * generic walk over the object (bench profile of the GET page: the line cost about 7% of
 * the request's CPU through pino, mostly key-by-key stringification and the request
 * serializer). It goes to the logger's own stream, so it keeps its place among the other
 * lines; a logger without a stream (logging off) or above info writes nothing.
 */
import fastJson from 'fast-json-stringify'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { pino } from 'pino'

const INFO = 30

/**
 * The record after pino's prefix (level, time, the logger's bindings such as pid and
 * hostname, which pino keeps pre-serialized): the request id, the fields, msg.
 */
const serializeFields = fastJson({
  type: 'object',
  properties: {
    reqId: { type: 'string' },
    req: {
      type: 'object',
      properties: {
        method: { type: 'string' },
        url: { type: 'string' },
        host: { type: 'string' },
        remoteAddress: { type: 'string' },
        remotePort: { type: 'integer' },
      },
    },
    res: { type: 'object', properties: { statusCode: { type: 'integer' } } },
    responseTime: { type: 'number' },
    msg: { type: 'string' },
  },
})

/** A share token in a URL is a bearer credential: logged URLs carry a placeholder instead. */
function redactUrl(url: string): string {
  return url.includes('/shared/') ? url.replace(/(\/wishlists\/shared\/)[^/?#]+/, '$1[redacted]') : url
}

interface LoggedRequest {
  method: string
  url: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

/** What a logged request shows (pino's `req` serializer and the access line): no headers, the URL redacted. */
export const serializeRequest = (req: LoggedRequest) => ({ method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort })

interface LineStream {
  write(line: string): unknown
}

/**
 * The pino logger behind Fastify's: its stream and its serialized bindings; none when
 * logging is off (`logger: false`).
 */
function pinoOf(logger: FastifyBaseLogger): { logger: pino.Logger; stream: LineStream; bindings: string } | undefined {
  const own = logger as unknown as Record<symbol, unknown>
  const stream = own[pino.symbols.streamSym] as LineStream | undefined
  const bindings = own[pino.symbols.chindingsSym]
  if (typeof stream?.write !== 'function' || typeof bindings !== 'string') return undefined
  return { logger: logger as pino.Logger, stream, bindings }
}

function accessLine(request: FastifyRequest, reply: FastifyReply, bindings: string): string {
  const fields = serializeFields({
    reqId: request.id,
    req: serializeRequest(request),
    res: { statusCode: reply.statusCode },
    responseTime: reply.elapsedTime,
    msg: 'request completed',
  })
  return `{"level":${INFO},"time":${Date.now()}${bindings},${fields.slice(1)}\n`
}

export const accessLogPlugin = fp(
  async (app: FastifyInstance) => {
    const target = pinoOf(app.log)
    if (target === undefined) return
    const { logger, stream, bindings } = target
    app.addHook('onResponse', (request, reply, done) => {
      if (logger.levelVal <= INFO) stream.write(accessLine(request, reply, bindings))
      done()
    })
  },
  { name: 'access-log' },
)
