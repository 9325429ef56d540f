/**
 * One "request completed" line per request, at info level, the same JSON record pino writes
 * for `request.log.info({req, res, responseTime}, 'request completed')` (the URL with share
 * tokens and guest ids redacted, no headers), written field by field into one template: its shape is
 * fixed, strings that may need escaping go through JSON.stringify (JSON's quoting and
 * escapes), numbers are finite. Through pino's generic walk over the object the line cost
 * about 7% of a GET page's CPU (bench profile); a compiled fast-json-stringify schema took
 * 0.62 µs per line, this template less than half of that. A test compares the line with
 * pino's own, key order included. It goes to the logger's own stream, so it keeps its place
 * among the other lines; a logger without a stream (logging off) or above info writes
 * nothing.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { type Bindings, type ChildLoggerOptions, pino } from 'pino'

const INFO = 30

const REDACTED = '[redacted]'
/** The segment after `/wishlists/`: an owner (customer id, guest id, `me`), `shared` or `import`. */
const OWNER_SEGMENT = /(\/wishlists\/)([^/?#]+)(\/[^/?#]+)?/
/** `guest_id=` in a query string, also with its underscore percent-encoded. */
const GUEST_ID_QUERY = /([?&]guest(?:_|%5[Ff])id=)[^&#]*/g
const INVITATION_TOKEN = /(\/review-invitations\/)[^/?#]+/
/** The app proxy's shared page token, and its `signature=` (a signed URL replays for 300 s). */
const PROXY_SHARED_TOKEN = /^(\/proxy\/shared\/)[^/?#]+/
const SIGNATURE_QUERY = /([?&]signature=)[^&#]*/g
const DIGITS = /^\d+$/

/**
 * Share tokens, review-invitation tokens and guest ids are bearer credentials (a guest id is
 * all a merge needs to take a guest's items): logged URLs carry a placeholder instead. The
 * owner segment of a wishlist path is kept only when it is `me` or a customer id (digits)
 * that is not the request's own guest id; guest ids, GIDs and anything else are redacted,
 * like the value of every `guest_id=` in the query. Through the Shopify app proxy, the shared
 * page's token and the query's `signature` too.
 */
export function redactUrl(url: string, guestId?: string): string {
  let out = url
  if (out.startsWith('/proxy/')) out = out.replace(PROXY_SHARED_TOKEN, `$1${REDACTED}`).replace(SIGNATURE_QUERY, `$1${REDACTED}`)
  // exec and slices rather than replace() with a callback: a third of the time per line.
  const owner = out.includes('/wishlists/') ? OWNER_SEGMENT.exec(out) : null
  if (owner !== null) {
    const [whole, prefix, segment, next] = owner as unknown as [string, string, string, string | undefined]
    const kept =
      segment === 'shared'
        ? `shared${next === undefined ? '' : `/${REDACTED}`}`
        : `${segment === 'me' || segment === 'import' || (DIGITS.test(segment) && segment !== guestId) ? segment : REDACTED}${next ?? ''}`
    out = out.slice(0, owner.index) + prefix + kept + out.slice(owner.index + whole.length)
  } else if (out.includes('/review-invitations/')) {
    out = out.replace(INVITATION_TOKEN, `$1${REDACTED}`)
  }
  return out.includes('id=') ? out.replace(GUEST_ID_QUERY, `$1${REDACTED}`) : out
}

interface LoggedRequest {
  method: string
  url: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
  headers?: Record<string, string | string[] | undefined>
  query?: unknown
}

/** The guest id a request names (header or query), compared with a digits-only owner segment. */
const guestIdOf = (req: LoggedRequest): string | undefined => {
  const value = req.headers?.['x-guest-id'] ?? (req.query as Record<string, unknown> | undefined)?.guest_id
  return typeof value === 'string' ? value : undefined
}

/** What a logged request shows (pino's `req` serializer; the access line writes the same fields): no headers, the URL redacted. */
export const serializeRequest = (req: LoggedRequest) => ({ method: req.method, url: redactUrl(req.url, guestIdOf(req)), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort })

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

const str = JSON.stringify

function accessLine(request: FastifyRequest, reply: FastifyReply, bindings: string): string {
  // Written without JSON.stringify where the value cannot need escaping: the request id
  // is ours (`requestIdGenerator` in lib/ids.ts: base64url and base-36 digits) and Node only accepts methods made of
  // token characters. The URL, the Host header and the client address (from
  // X-Forwarded-For behind a trusted proxy) can hold anything.
  let line = `{"level":${INFO},"time":${Date.now()}${bindings},"reqId":"${request.id}","req":{"method":"${request.method}","url":${str(redactUrl(request.url, guestIdOf(request)))}`
  // Like pino (and JSON.stringify), fields without a value are left out.
  const host = request.host
  if (host !== undefined) line += `,"host":${str(host)}`
  const ip = request.ip
  if (ip !== undefined) line += `,"remoteAddress":${str(ip)}`
  const port = request.socket?.remotePort
  if (port !== undefined) line += `,"remotePort":${port}`
  return `${line}},"res":{"statusCode":${reply.statusCode}},"responseTime":${milliseconds(reply.elapsedTime)},"msg":"request completed"}\n`
}

/**
 * The response time in milliseconds to the microsecond, as a JSON number: printing the
 * full double (0.12345678901) took V8 about ten times as long as a three-decimal one.
 */
function milliseconds(took: number): string {
  return Number.isFinite(took) ? String(Math.round(took * 1000) / 1000) : 'null'
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
type Level = (typeof LEVELS)[number]

/**
 * `request.log`: pino's child with the request id, made when the request first logs
 * something. Most requests log nothing but their access line (written above, without a
 * child), and the child Fastify makes for every request (an object on the logger's
 * prototype, its formatters rebuilt, the id serialized) is work for nothing then: about
 * 4,300 instructions per GET page on the floor with the access line (`npm run bench --
 * --floor-concerns 1 --instructions`, then with 4,000 requests of warm-up, whose counts
 * still held V8's compilation; docs/performance.md, "Changes for reads").
 */
class RequestLogger {
  #parent: FastifyBaseLogger
  #bindings: Bindings
  #options: ChildLoggerOptions
  #child: FastifyBaseLogger | undefined
  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }
  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }
  #log(level: Level, args: unknown[]): void {
    const child = this.#real()
    ;(child[level] as (...a: unknown[]) => void).apply(child, args)
  }
  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level
  }
  set level(level: string) {
    this.#real().level = level
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options)
  }
  static {
    // fatal … silent: each makes the child if need be and logs through it.
    for (const level of LEVELS) {
      Object.defineProperty(RequestLogger.prototype, level, {
        value(this: RequestLogger, ...args: unknown[]) {
          this.#log(level, args)
        },
      })
    }
  }
}

export const accessLogPlugin = fp(
  async (app: FastifyInstance) => {
    const target = pinoOf(app.log)
    if (target === undefined) return
    const { logger, stream, bindings } = target
    app.setChildLoggerFactory((parent, childBindings, options) => new RequestLogger(parent, childBindings, options) as unknown as FastifyBaseLogger)
    app.addHook('onResponse', (request, reply, done) => {
      if (logger.levelVal <= INFO) stream.write(accessLine(request, reply, bindings))
      done()
    })
  },
  { name: 'access-log' },
)
