/**
 * `Cache-Control` and `Vary` of the API's answers, decided in one place from the route's
 * access rule (docs/api.md, "Caching"):
 *
 * - `private, no-store` on every route that takes credentials (a bearer token, the storefront
 *   key with or without a guest id), on what a platform's signed proxy serves (`config.proxy`:
 *   the signed query is the shopper's) but its public reads, and on the public routes whose URL
 *   or body is the credential (`config.cache: 'private'`: the token exchange, review
 *   invitations, the review pages). Their answers carry a customer's or guest's data (or a
 *   credential): no browser or shared cache may keep them. Errors get it too.
 * - A public read (`config.cache: { control, vary }`: shared lists, product reviews) states
 *   its own `Cache-Control` and `Vary`s on every request header its answer depends on, beside
 *   the `Origin` that CORS adds to every answer, directly or through the proxy (its answer is
 *   the same whoever asks, so a product page's reviews come from the shopper's cache). Asked
 *   with an admin token, whose answers may carry more (a review's e-mail), it is private like
 *   the rest. Its errors are `no-store`: a 429, a refused key or a review not yet approved
 *   must not be kept by a shared cache for the read's lifetime.
 * - Any other public route (the widget's and dashboard's files, the favicon, health, the
 *   OpenAPI document) sets its own, or none.
 *
 * Set in `onRequest`, before the credentials are read, so that an answer cut short by a
 * refusal or an outage is covered as well; the handler is not trusted to remember it.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onSendHookHandler,
  preHandlerHookHandler,
} from 'fastify'
import fp from 'fastify-plugin'

/** Answers that carry a customer's or guest's data, or a credential. */
export const PRIVATE_CACHE_CONTROL = 'private, no-store'

/** How a public read may be cached: its `Cache-Control`, and the request headers its answer depends on (besides Origin). */
export interface PublicRead {
  control: string
  vary: readonly string[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `'private'`: a public route whose answers carry a customer's data or a credential.
     * A PublicRead: a public read's own caching, through a proxy too. Unset: private when
     * the route takes credentials or is proxied, the route's own business otherwise.
     */
    cache?: 'private' | PublicRead
  }
}

/** Adds `names` to a Vary header value, each once (case-insensitive). */
export function withVary(current: unknown, names: readonly string[]): string {
  const list = typeof current === 'string' && current !== '' ? current.split(',').map((s) => s.trim()) : []
  const seen = new Set(list.map((s) => s.toLowerCase()))
  for (const name of names) {
    if (!seen.has(name.toLowerCase())) {
      list.push(name)
      seen.add(name.toLowerCase())
    }
  }
  return list.join(', ')
}

/** An admin token may see more than the public (a review's e-mail and status): never cached. */
const privateForAdmins: preHandlerHookHandler = (request, reply, done) => {
  if (request.ctx?.actor.kind === 'admin') reply.header('cache-control', PRIVATE_CACHE_CONTROL)
  done()
}

function setCacheHeaders(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const config = request.routeOptions.config
  const { cache, access } = config
  if (cache === 'private' || (config.proxy !== undefined && cache === undefined)) {
    reply.header('cache-control', PRIVATE_CACHE_CONTROL)
  } else if (cache !== undefined) {
    reply.header('cache-control', cache.control)
    reply.header('vary', withVary(reply.getHeader('vary'), cache.vary))
  } else if (access !== undefined && access.some((a) => a !== 'public')) {
    reply.header('cache-control', PRIVATE_CACHE_CONTROL)
  }
  done()
}

/** A public read's error (status 400 and above) is kept by no cache (on the public reads' routes only). */
const noStoreOnErrors: onSendHookHandler = (_request, reply, payload, done) => {
  if (reply.statusCode >= 400 && reply.getHeader('cache-control') !== PRIVATE_CACHE_CONTROL) reply.header('cache-control', 'no-store')
  done(null, payload)
}

/** Registered after CORS (whose `Vary: Origin` it extends) and before the credentials are read. */
export const cachingPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      if (typeof route.config?.cache !== 'object') return
      const own = route.preHandler
      route.preHandler = own === undefined ? [privateForAdmins] : [privateForAdmins, ...[own].flat()]
      route.onSend = route.onSend === undefined ? [noStoreOnErrors] : [...[route.onSend].flat(), noStoreOnErrors]
    })
    app.addHook('onRequest', setCacheHeaders)
  },
  { name: 'caching', dependencies: ['cors'] },
)
