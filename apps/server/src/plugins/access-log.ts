/**
 * One "request completed" line per request, at info level, the same JSON record pino writes
 * for `request.log.info({req, res, responseTime}, 'request completed')` (the URL with its
 * credentials redacted, `redactUrl`; no headers), written field by field into one template: its shape is
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

/**
 * Every bearer credential a URL may carry (docs/api.md, "Logs"), in one place. Query
 * parameters: redacted wherever they appear, on any path (a 404 too), by name compared
 * after percent-decoding and case-insensitively, in `?`, `&`, `;` and `#` separated pairs.
 * - `guest_id`: a guest id (X-Guest-Id's alternative on every route a guest may call; a guest
 *   id is all a merge needs to take a guest's items).
 * - `invitation`: a review-invitation token (`/reviews/new`, `/proxy/reviews/new`).
 * - `signature`: the Shopify app proxy's (a signed URL replays for 300 s); `hmac` and
 *   `id_token`: Shopify admin's, opening the dashboard (the session token signs in).
 */
export const CREDENTIAL_QUERY: readonly string[] = ['guest_id', 'invitation', 'signature', 'hmac', 'id_token']
/**
 * Path parameters that are a credential on every route that has one: share tokens and
 * review-invitation tokens. Besides these, a route's owner parameter (`config.owner`) is a
 * credential unless it is `me` or a customer id (digits) that is not the request's own guest id.
 */
export const CREDENTIAL_PARAMS: readonly string[] = ['shareToken', 'token']

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Credential query parameters (CREDENTIAL_QUERY) the route reads from its raw query, beside its schema's. */
    credentialQuery?: readonly string[]
  }
}

const CREDENTIAL_NAMES = new Set(CREDENTIAL_QUERY)
const CREDENTIAL_PARAM_NAMES = new Set(CREDENTIAL_PARAMS)
const DIGITS = /^\d+$/

/** The credentials a route's URL may carry: its credential path parameters and query parameters. */
export interface UrlCredentials {
  path: string[]
  query: string[]
}

interface RouteShape {
  url: string
  config?: { access?: readonly string[]; owner?: string | undefined; credentialQuery?: readonly string[] | undefined } | undefined
  schema?: { querystring?: unknown } | undefined
}

/**
 * What a route takes as a credential in its URL (its config and schema as registered): the
 * route catalog lists it (plugins/auth.ts) and the logging tests walk it. A route declaring a
 * credential query parameter missing from CREDENTIAL_QUERY is refused at start.
 */
export function urlCredentials(route: RouteShape): UrlCredentials {
  const config = route.config ?? {}
  const params = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string)
  const path = params.filter((p) => CREDENTIAL_PARAM_NAMES.has(p) || p === config.owner)
  const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}
  for (const name of config.credentialQuery ?? [])
    if (!CREDENTIAL_NAMES.has(name)) throw new Error(`route ${route.url}: credential query parameter ${name} is not in CREDENTIAL_QUERY`)
  const query = new Set([
    ...Object.keys(properties).filter((q) => CREDENTIAL_NAMES.has(q)),
    ...(config.access?.includes('guest') ? ['guest_id'] : []),
    ...(config.credentialQuery ?? []),
  ])
  return { path, query: [...query] }
}

/**
 * A node of the route tree: path segments by (lower-case) text, and the parameter segment;
 * `leads` when a credential or owner parameter lies below it (the walk stops where none does).
 */
interface Segment {
  statics: Map<string, Segment>
  param?: { next: Segment; kind: 'credential' | 'owner' | 'plain' }
  leads?: true
}
const KIND_RANK = { plain: 0, owner: 1, credential: 2 } as const

/**
 * The path patterns of every route registered in this process (the code's own: the same in
 * every app instance), as a tree walked segment by segment the way the router matches.
 */
const routeTree: Segment = { statics: new Map() }

function addRoute(url: string, owner: string | undefined): void {
  let node = routeTree
  const path: Segment[] = []
  for (const part of url.split('/')) {
    if (part === '') continue
    if (part.includes('*')) return
    path.push(node)
    if (part.startsWith(':')) {
      const name = part.slice(1)
      const kind = CREDENTIAL_PARAM_NAMES.has(name) ? 'credential' : name === owner ? 'owner' : 'plain'
      node.param ??= { next: { statics: new Map() }, kind }
      if (KIND_RANK[kind] > KIND_RANK[node.param.kind]) node.param.kind = kind
      if (kind !== 'plain') for (const above of path) above.leads = true
      node = node.param.next
    } else {
      const key = part.toLowerCase()
      let next = node.statics.get(key)
      if (next === undefined) node.statics.set(key, (next = { statics: new Map() }))
      node = next
    }
  }
}

const decoded = (text: string): string => {
  if (!text.includes('%')) return text
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** A query name as the query parser reads it (`+` is a space, percent-escapes decoded), lower-cased. */
const queryName = (raw: string): string => decoded(raw.includes('+') ? raw.replaceAll('+', ' ') : raw).toLowerCase()

/** Whether a pair separator starts at `i`: `?`, `&`, `;` or `#`. */
const isSeparator = (c: number) => c === 63 || c === 38 || c === 59 || c === 35

/**
 * Share tokens, review-invitation tokens, guest ids and Shopify's signatures are bearer
 * credentials: logged URLs carry a placeholder instead. The path is walked along the routes'
 * patterns (`routeTree`; segments percent-decoded, matched case-insensitively, a `;…` suffix
 * ignored, empty segments skipped), so a credential parameter is redacted wherever a route
 * would take it, also on a 404 or a malformed URL; the owner segment of a wishlist path is
 * kept only when it is `me` or a customer id (digits) that is not the request's own guest id.
 * Then every `name=value` pair after a `?`, `&`, `;` or `#` whose name is in CREDENTIAL_QUERY
 * has its value redacted, repeated names included.
 */
export function redactUrl(url: string, guestId?: string): string {
  // Plain scans rather than regular expressions or splits: this runs for every access line.
  let pathEnd = 0
  let semicolon = false
  for (; pathEnd < url.length; pathEnd++) {
    const c = url.charCodeAt(pathEnd)
    if (c === 63 || c === 35) break
    if (c === 59) semicolon = true
  }
  const out = redactPath(url, pathEnd, guestId)
  // Pairs: after the path's end, or after a `;` in the path.
  return pathEnd === url.length && !semicolon ? out : redactPairs(out, semicolon ? 0 : out.length - (url.length - pathEnd))
}

/** `scheme://authority` of an absolute-form request target (`GET http://host/path`), kept as it is. */
const ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/

/** Whether an owner segment is kept: `me`, or a customer id (digits) that is not the request's own guest id. */
const ownerShown = (raw: string, guestId: string | undefined): boolean => {
  const text = decoded(raw)
  return text === 'me' || (DIGITS.test(text) && text !== guestId)
}

/** Whether a segment has an upper-case letter, a `%` escape or a `;`: only then is it normalised before matching. */
function unusual(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if ((c >= 65 && c <= 90) || c === 37 || c === 59) return true
  }
  return false
}

/** `url` with the credential segments of its path (up to `pathEnd`) redacted; `url` itself when there is none. */
function redactPath(url: string, pathEnd: number, guestId: string | undefined): string {
  let node: Segment | undefined = routeTree
  let from = url.charCodeAt(0) === 47 ? 0 : (ORIGIN.exec(url)?.[0].length ?? 0)
  // Built only when something is redacted: the URL up to `copied` with placeholders.
  let out: string | undefined
  let copied = 0
  while (node?.leads === true && from < pathEnd) {
    let stop = url.indexOf('/', from)
    if (stop === -1 || stop > pathEnd) stop = pathEnd
    if (stop > from) {
      const raw = url.slice(from, stop)
      let next: Segment | undefined = node.statics.get(raw)
      if (next === undefined && unusual(raw)) {
        const key = decoded(raw).toLowerCase()
        const semi = key.indexOf(';')
        next = node.statics.get(key) ?? (semi === -1 ? undefined : node.statics.get(key.slice(0, semi)))
      }
      if (next === undefined) {
        const param: Segment['param'] = node.param
        if (param === undefined) break
        if (param.kind === 'credential' || (param.kind === 'owner' && !ownerShown(raw, guestId))) {
          out = `${out ?? ''}${url.slice(copied, from)}${REDACTED}`
          copied = stop
        }
        next = param.next
      }
      node = next
    }
    from = stop + 1
  }
  return out === undefined ? url : out + url.slice(copied)
}

const SIMPLE_NAME = /^[a-z0-9_]*$/
/** First characters a credential name can start with, in any case or escaped (`%`, `+`): others are skipped unread. */
const FIRST = new Set([...new Set(CREDENTIAL_QUERY.map((n) => n.charCodeAt(0)))].flatMap((c) => [c, c - 32]).concat([37, 43]))

/** `url` with the value of every credential pair after `from` redacted. */
function redactPairs(url: string, from: number): string {
  let out = ''
  let last = 0
  // Pairs start after a separator; the path before the first one is no pair.
  for (let i = from; i < url.length; i++) {
    if (!isSeparator(url.charCodeAt(i))) continue
    let stop = i + 1
    while (stop < url.length && !isSeparator(url.charCodeAt(stop))) stop++
    if (FIRST.has(url.charCodeAt(i + 1))) {
      const eq = url.indexOf('=', i + 1)
      if (eq !== -1 && eq < stop - 1) {
        const name = url.slice(i + 1, eq)
        if (CREDENTIAL_NAMES.has(name) || (!SIMPLE_NAME.test(name) && CREDENTIAL_NAMES.has(queryName(name)))) {
          out += `${url.slice(last, eq + 1)}${REDACTED}`
          last = stop
        }
      }
    }
    i = stop - 1
  }
  return last === 0 ? url : out + url.slice(last)
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
export const serializeRequest = (req: LoggedRequest) => ({
  method: req.method,
  url: redactUrl(req.url, guestIdOf(req)),
  host: req.host,
  remoteAddress: req.ip,
  remotePort: req.socket?.remotePort,
})

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
    // Every route's path pattern, for redactUrl (whatever the logger, as serializeRequest's callers may log).
    app.addHook('onRoute', (route) => {
      urlCredentials(route)
      addRoute(route.url, route.config?.owner)
    })
    const target = pinoOf(app.log)
    if (target === undefined) return
    const { logger, stream, bindings } = target
    app.setChildLoggerFactory(
      (parent, childBindings, options) => new RequestLogger(parent, childBindings, options) as unknown as FastifyBaseLogger,
    )
    app.addHook('onResponse', (request, reply, done) => {
      if (logger.levelVal <= INFO) stream.write(accessLine(request, reply, bindings))
      done()
    })
  },
  { name: 'access-log' },
)
