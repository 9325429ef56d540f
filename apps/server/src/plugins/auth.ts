/**
 * Credentials and access, deny-by-default.
 *
 * 1. `onRequest` (global) resolves whatever credentials the request carries into a
 *    RequestContext, without refusing anything yet, so the rate limiter (route-level
 *    onRequest) can key bearer calls by API key and everything else by IP. A bearer token is
 *    the service's own or one a configured platform vouches for (`bearerAuthenticator`:
 *    Shopify's session tokens, which act as the shop's session key).
 * 2. `preParsing` (global, after every onRequest hook) enforces the route's declared
 *    access: `config.access` lists who may call it; `config.owner` names the path
 *    parameter that must be the caller's own customer or guest id (`me` allowed);
 *    `config.plan` / `config.bearerPlan` gate by plan.
 */
import { Transform, type TransformCallback } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Plan } from '../db/schema.js'
import { AppError, invalid } from '../lib/errors.js'
import { GUEST_ID_PATTERN, GUEST_ID_RULE, isGuestId, platformIdOf } from '../lib/platform-ids.js'
import type { AuthService, BearerContext } from '../modules/auth/auth.service.js'
import type { Access, Owner, RequestContext } from '../modules/auth/auth.types.js'
import { requirePlan } from '../modules/shops/plans.js'
import type { ShopsService } from '../modules/shops/shops.service.js'
import type { Shop } from '../modules/shops/shops.types.js'
import type { Platform } from '../platforms/platform.js'
import { type UrlCredentials, urlCredentials } from './access-log.js'

export interface RouteEntry {
  method: string
  url: string
  access: Access[]
  owner?: string | undefined
  plan?: Plan | undefined
  bearerPlan?: Plan | undefined
  /** The credentials its URL may carry (plugins/access-log.ts, `urlCredentials`), which logs never show; set once the app is ready. */
  credentials?: UrlCredentials
}

export interface ResolvedAuth {
  ctx?: RequestContext
  /** Set for bearer tokens: the rate limiter's admin bucket key. */
  keyId?: string
  /** The shopper's address when a platform's verified proxy (Shopify's app proxy) forwarded the request. */
  clientAddress?: string
  error?: AppError
}

/**
 * Credentials of routes served through a platform's signed proxy (`config.proxy`), from its
 * signed request alone: they replace the request's own headers entirely.
 */
export type ProxyAuth = (request: FastifyRequest, reply: FastifyReply) => Promise<ResolvedAuth>

/** The address per-client limits count: the shopper behind a verified proxy, else the peer (or what TRUST_PROXY allows). */
export const clientAddress = (request: FastifyRequest): string => request.auth?.clientAddress ?? request.ip

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route. Required on every route (deny by default). */
    access?: Access[]
    /** Path parameter naming the wishlist owner (customer id, guest id or `me`). */
    owner?: string
    /** Minimum plan for every caller. */
    plan?: Plan
    /** Minimum plan for bearer-token callers (the headless API). */
    bearerPlan?: Plan
    /**
     * Served through a platform's signed proxy (Shopify's app proxy): the platform's
     * authenticator, set on the routes it serves, from which the credentials come alone.
     */
    proxy?: ProxyAuth
    /**
     * The route bounds its body itself (the Shopify webhook intake, whose HMAC covers it):
     * the smaller limits of callers without a bearer token (`callerBodyLimit`) do not apply.
     */
    ownBodyLimit?: true
  }
  interface FastifyInstance {
    /** Every route with its access rule, for the security matrix and docs. */
    routeCatalog: RouteEntry[]
  }
  interface FastifyRequest {
    auth: ResolvedAuth
    /** Valid after the access guard on every non-public route. */
    ctx: RequestContext
    /** Set on routes that declare `config.owner`. */
    owner: Owner
    /**
     * The route's config (access rule, owner, plans, `url`), set first thing by auth's
     * onRequest hook: Fastify's `request.routeOptions` builds a new object on every read.
     */
    routeConfig: FastifyRequest['routeOptions']['config']
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i

/** A request header's (first) value. */
export function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name]
  return Array.isArray(v) ? v[0] : v
}

/** The bearer token of the Authorization header; an error when the header is malformed. */
export function bearerToken(authorization: string): string | AppError {
  const m = BEARER.exec(authorization)
  return m ? (m[1] as string) : new AppError('UNAUTHORIZED', 'Authorization must be "Bearer <token>"')
}

/**
 * A bearer token's context. A customer token of a shop the app is uninstalled from is
 * refused like its storefront key; admin tokens keep working (the merchant can still export).
 */
const bearerAuth = ({ keyId, ...ctx }: BearerContext): ResolvedAuth =>
  ctx.actor.kind === 'customer' && ctx.shop.uninstalledAt !== null
    ? { keyId, error: new AppError('FORBIDDEN', 'The app is uninstalled from this shop') }
    : { ctx, keyId }

/** Body bytes a caller without a bearer token may send: none or the storefront key (the token exchange, public reviews). */
export const PUBLIC_BODY_LIMIT = 64 * 1024
/** Body bytes in guest mode: room for a bulk delete of 2,500 items. */
export const GUEST_BODY_LIMIT = 256 * 1024

/**
 * The body limit of this caller, when smaller than the route's own (1 MiB): bearer tokens
 * (admin, customer, a proxied customer) get the route's, guests 256 KiB on wishlist routes,
 * everyone else (no credentials, the storefront key) 64 KiB.
 */
function callerBodyLimit(request: FastifyRequest): number | undefined {
  if (request.routeConfig.ownBodyLimit !== undefined) return undefined
  const kind = request.auth?.ctx?.actor.kind
  if (kind === 'admin' || kind === 'customer') return undefined
  return kind === 'guest' && request.routeConfig.owner !== undefined ? GUEST_BODY_LIMIT : PUBLIC_BODY_LIMIT
}

const tooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit / 1024} KiB, this caller's limit`)

/** A chunked body (no Content-Length) cut off with 413 once it passes `limit` bytes. */
function capped(limit: number): Transform {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length
      if (seen > limit) return callback(tooLarge(limit))
      callback(null, chunk)
    },
  })
}

/** A refused credential becomes the request's auth error (the access guard answers it); anything else is a fault. */
function refused(err: unknown): ResolvedAuth {
  if (err instanceof AppError) return { error: err }
  throw err
}

/** The guest id of a request (header `X-Guest-Id`, else query `guest_id`): the id, undefined, or the 400 of a malformed one. */
export function guestIdOf(request: FastifyRequest): string | undefined | AppError {
  const query = request.query as Record<string, unknown> | undefined
  const fromHeader = header(request, 'x-guest-id')
  const guestId = fromHeader ?? (typeof query?.guest_id === 'string' ? query.guest_id : undefined)
  if (guestId === undefined || isGuestId(guestId)) return guestId
  const path = fromHeader === undefined ? 'query.guest_id' : 'headers.x-guest-id'
  return invalid([{ path, message: `must match ${GUEST_ID_PATTERN}` }], `The guest id must be ${GUEST_ID_RULE}`)
}

/** The storefront-key context: guest mode when a guest id comes with it. */
function storefrontAuth(request: FastifyRequest, shop: Shop | undefined): ResolvedAuth {
  if (!shop) return { error: new AppError('INVALID_CREDENTIALS', 'Unknown storefront key') }
  if (shop.uninstalledAt !== null) return { error: new AppError('FORBIDDEN', 'The app is uninstalled from this shop') }
  const guestId = guestIdOf(request)
  if (guestId instanceof AppError) return { error: guestId }
  if (guestId === undefined) return { ctx: { shop, actor: { kind: 'storefront' }, requestId: request.id } }
  return { ctx: { shop, actor: { kind: 'guest', guestId }, requestId: request.id } }
}

/**
 * Bearer tokens: the service's own, and those the configured platforms vouch for (Shopify's
 * session tokens), which are asked only about a token that is not one of the service's own.
 */
interface Bearers {
  /** A token verified before, from the caches alone; undefined when it has to be verified. */
  cached(token: string, requestId: string): BearerContext | undefined
  authenticate(token: string, requestId: string): Promise<BearerContext>
}

function bearersOf(auth: AuthService, shops: ShopsService, platforms: readonly Platform[]): Bearers {
  const vouching = platforms.flatMap((p) => (p.bearerAuthenticator ? [p.bearerAuthenticator({ shops, auth })] : []))
  return {
    cached(token, requestId) {
      const own = auth.authenticateCached(token, requestId)
      if (own !== undefined || vouching.length === 0) return own
      for (const platform of vouching) {
        const context = platform.cached(token, requestId)
        if (context !== undefined) return context
      }
      return undefined
    },
    async authenticate(token, requestId) {
      if (!auth.isOwnToken(token))
        for (const platform of vouching) {
          const context = await platform.authenticate(token, requestId)
          if (context !== undefined) return context
        }
      // The service's own, or nobody's: refused as an invalid token of the service.
      return auth.authenticateBearer(token, requestId)
    },
  }
}

/**
 * The request's credentials from the caches alone (a token verified before, a known
 * storefront key), what almost every request carries; undefined when something has to be
 * read from the database first (`resolve`).
 */
function resolveCached(request: FastifyRequest, bearers: Bearers, shops: ShopsService): ResolvedAuth | undefined {
  const authorization = header(request, 'authorization')
  if (authorization !== undefined) {
    const token = bearerToken(authorization)
    if (token instanceof AppError) return { error: token }
    try {
      const context = bearers.cached(token, request.id)
      return context && bearerAuth(context)
    } catch (err) {
      return refused(err)
    }
  }
  const storefrontKey = header(request, 'x-storefront-key')
  if (storefrontKey === undefined) return {}
  const shop = shops.cachedByStorefrontKey(storefrontKey)
  return shop && storefrontAuth(request, shop)
}

async function resolve(request: FastifyRequest, bearers: Bearers, shops: ShopsService): Promise<ResolvedAuth> {
  const authorization = header(request, 'authorization')
  if (authorization !== undefined) {
    const token = bearerToken(authorization)
    if (token instanceof AppError) return { error: token }
    try {
      return bearerAuth(await bearers.authenticate(token, request.id))
    } catch (err) {
      return refused(err)
    }
  }
  const storefrontKey = header(request, 'x-storefront-key')
  if (storefrontKey === undefined) return {}
  return storefrontAuth(request, await shops.byStorefrontKey(storefrontKey))
}

function resolveOwner(ctx: RequestContext, raw: string): Owner {
  const { actor } = ctx
  if (actor.kind === 'customer') {
    if (raw === 'me' || platformIdOf(raw, 'Customer', 'params.customerId') === actor.customerId)
      return { type: 'customer', id: actor.customerId }
    throw new AppError('FORBIDDEN', 'A customer token can only access its own wishlist')
  }
  if (actor.kind === 'guest') {
    if (raw === 'me' || raw === actor.guestId) return { type: 'guest', id: actor.guestId }
    throw new AppError('FORBIDDEN', 'Guest mode can only access the wishlist of its own guest id')
  }
  if (actor.kind === 'admin') {
    return { type: 'customer', id: platformIdOf(raw, 'Customer', 'params.customerId') }
  }
  throw new AppError('FORBIDDEN', 'This credential cannot access wishlists')
}

export function enforceAccess(request: FastifyRequest): void {
  const config = request.routeConfig
  const access = config.access
  if (access === undefined) throw new AppError('FORBIDDEN', 'Route has no access rule')
  if (access.includes('public')) {
    // A public route through a signed proxy still needs the proxy's signature.
    if (config.proxy !== undefined && request.auth.error) throw request.auth.error
    return
  }
  const { ctx, error } = request.auth
  if (error) throw error
  if (!ctx) throw new AppError('UNAUTHORIZED', 'Send Authorization: Bearer <token>, or X-Storefront-Key with a guest id')
  const kind = ctx.actor.kind
  if (!access.includes(kind)) {
    if (kind === 'storefront' && access.includes('guest')) {
      throw new AppError('UNAUTHORIZED', 'Guest mode needs a guest id (X-Guest-Id header or guest_id query) beside the storefront key')
    }
    throw new AppError(
      'FORBIDDEN',
      `This endpoint is not available to ${kind === 'storefront' || kind === 'guest' ? 'storefront' : kind} credentials`,
    )
  }
  request.ctx = ctx
  if (config.owner !== undefined) {
    const raw = (request.params as Record<string, string | undefined>)[config.owner]
    if (raw === undefined) throw new AppError('FORBIDDEN', 'Route owner parameter missing')
    request.owner = resolveOwner(ctx, raw)
  }
  if (config.plan !== undefined) requirePlan(ctx.shop, config.plan)
  // A proxied customer is the storefront widget, not the headless API.
  if (config.bearerPlan !== undefined && (kind === 'admin' || kind === 'customer') && config.proxy === undefined)
    requirePlan(ctx.shop, config.bearerPlan)
}

export const authPlugin = fp(
  async (app: FastifyInstance, opts: { auth: AuthService; shops: ShopsService; platforms: readonly Platform[] }) => {
    const bearers = bearersOf(opts.auth, opts.shops, opts.platforms)
    app.decorateRequest('auth', null as unknown as ResolvedAuth)
    app.decorateRequest('ctx', null as unknown as RequestContext)
    app.decorateRequest('owner', null as unknown as Owner)
    app.decorateRequest('routeConfig', null as unknown as FastifyRequest['routeOptions']['config'])

    const catalog: RouteEntry[] = []
    app.decorate('routeCatalog', catalog)
    // Deny by default: a route without an access rule is a programming error caught at start.
    const registered: [RouteEntry, Parameters<typeof urlCredentials>[0]][] = []
    app.addHook('onRoute', (route) => {
      if (route.url.startsWith('/docs')) return
      const config = route.config
      if (config?.access === undefined) throw new Error(`route ${String(route.method)} ${route.url} declares no config.access`)
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue
        const entry: RouteEntry = {
          method,
          url: route.url,
          access: config.access,
          owner: config.owner,
          plan: config.plan,
          bearerPlan: config.bearerPlan,
        }
        catalog.push(entry)
        registered.push([entry, route])
      }
    })
    // A route's credentials once every onRoute hook has run (a platform's proxy marks its routes after this one).
    app.addHook('onReady', (done) => {
      for (const [entry, route] of registered) entry.credentials = urlCredentials(route)
      done()
    })

    // Synchronous when the credentials are cached (nearly always): an async hook costs every
    // request a promise and microtask turns.
    app.addHook('onRequest', (request, reply, done) => {
      request.routeConfig = request.routeOptions.config
      const proxy = request.routeConfig.proxy
      if (proxy !== undefined) {
        proxy(request, reply).then((auth) => {
          request.auth = auth
          done()
        }, done)
        return
      }
      if (request.routeConfig.access?.includes('public')) {
        request.auth = {}
        return done()
      }
      const cached = resolveCached(request, bearers, opts.shops)
      if (cached !== undefined) {
        request.auth = cached
        return done()
      }
      resolve(request, bearers, opts.shops).then((auth) => {
        request.auth = auth
        done()
      }, done)
    })

    app.addHook('preParsing', (request, reply, payload, done) => {
      // 404s (the not-found handler answers), CORS preflights (anything else falls through
      // to 404) and the API docs pass.
      if (request.routeConfig.url !== undefined && request.method !== 'OPTIONS' && !request.url.startsWith('/docs')) {
        try {
          enforceAccess(request)
        } catch (err) {
          return done(err as Error)
        }
        // Credentials were checked before any byte of the body is read; now its size, by caller.
        const length = request.headers['content-length']
        const chunked = length === undefined && request.headers['transfer-encoding'] !== undefined
        if (length !== undefined || chunked) {
          const limit = callerBodyLimit(request)
          if (limit !== undefined) {
            if (chunked) return done(null, payload.pipe(capped(limit)))
            if (Number(length) > limit) {
              // The body stays unread: the connection closes rather than draining it.
              reply.header('connection', 'close')
              return done(tooLarge(limit))
            }
          }
        }
      }
      done(null, payload)
    })
  },
  { name: 'auth' },
)
