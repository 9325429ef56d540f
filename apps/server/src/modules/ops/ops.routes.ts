import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import ipaddr from 'ipaddr.js'
import { Type } from 'typebox'
import { Gauge } from 'prom-client'
import type { Storage } from '../../db/connect.js'
import type { Reads, ReplicaState } from '../../db/replica.js'
import { AppError } from '../../lib/errors.js'
import { errors, Ok } from '../../lib/http-schemas.js'
import { hashSecret, secretMatches } from '../../lib/secrets.js'
import { bearerToken } from '../../plugins/auth.js'

const isLoopback = (address: string | undefined): boolean =>
  address !== undefined && ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback'

/** Whether the service's public URL is itself a loopback one (a local run, not reached through a tunnel). */
export function isLoopbackUrl(url: string): boolean {
  let host: string
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  } catch {
    return false
  }
  return host === 'localhost' || isLoopback(host)
}

/**
 * Who may scrape /metrics: with METRICS_TOKEN, a caller sending it as a bearer token;
 * without, loopback clients only. Both the socket and the client address (which
 * TRUST_PROXY may take from X-Forwarded-For) must be loopback, so a proxy on the same host
 * does not open the endpoint to everyone behind it. A tunnel (or reverse proxy) on the same
 * host makes every request arrive from loopback: when PUBLIC_BASE_URL is not a loopback URL,
 * loopback proves nothing and /metrics without METRICS_TOKEN answers 404.
 */
function scrapeGuard(metricsToken: string | undefined, publicBaseUrl: string): (request: FastifyRequest) => void {
  const tokenHash = metricsToken === undefined ? undefined : hashSecret(metricsToken)
  const servedLocally = isLoopbackUrl(publicBaseUrl)
  return (request) => {
    if (tokenHash === undefined) {
      if (!servedLocally) throw new AppError('NOT_FOUND', 'Route GET /metrics not found')
      if (isLoopback(request.socket.remoteAddress) && isLoopback(request.ip)) return
      throw new AppError('FORBIDDEN', 'Metrics are served to loopback clients only; set METRICS_TOKEN to scrape from elsewhere')
    }
    const authorization = request.headers.authorization
    if (authorization === undefined) throw new AppError('UNAUTHORIZED', 'Send Authorization: Bearer <METRICS_TOKEN>')
    const presented = bearerToken(authorization)
    if (presented instanceof AppError) throw presented
    if (!secretMatches(presented, tokenHash)) throw new AppError('INVALID_TOKEN', 'The metrics token is wrong')
  }
}

/** The read replica as /readyz names it. */
const replicaWord = (s: ReplicaState): string => (!s.configured ? 'not configured' : s.serving ? 'serving' : s.up ? 'behind' : 'down')

/** The read replica's gauges, and a log line each time it starts or stops serving reads. */
function replicaMetrics(app: FastifyInstance, reads: Reads): void {
  new Gauge({
    name: 'wishlist_replica_up',
    help: 'Whether the last check reached the read replica (DATABASE_REPLICA_URL) as a replica',
    registers: [app.metrics],
    collect() {
      this.set(reads.state().up ? 1 : 0)
    },
  })
  new Gauge({
    name: 'wishlist_replica_lag_seconds',
    help: 'How far the read replica is behind the primary at most (NaN while unknown)',
    registers: [app.metrics],
    collect() {
      const { lagMs } = reads.state()
      this.set(lagMs === null ? Number.NaN : lagMs / 1000)
    },
  })
  new Gauge({
    name: 'wishlist_replica_serving',
    help: 'Whether the reads that may lag go to the read replica now (0: to the primary, the replica being down or behind REPLICA_MAX_LAG_MS)',
    registers: [app.metrics],
    collect() {
      this.set(reads.state().serving ? 1 : 0)
    },
  })
  reads.onChange((s) => {
    if (s.serving) app.log.info({ replica: s }, 'read replica serving reads')
    else app.log.warn({ replica: s }, `read replica not serving reads (${replicaWord(s)}): they go to the primary`)
  })
}

/** Liveness, readiness, Prometheus metrics and the OpenAPI document. Not rate limited. */
export const opsRoutes: FastifyPluginAsyncTypebox<{
  storage: Storage
  redis?: Redis | undefined
  metricsToken?: string | undefined
  publicBaseUrl: string
}> = async (app, { storage, redis, metricsToken, publicBaseUrl }) => {
  const config = { access: ['public' as const], rateLimit: false as const }
  const tags = ['operations']

  app.get('/healthz', { config, schema: { tags, response: { 200: Ok(Type.Object({ status: Type.Literal('ok') })) } } }, async () => ({
    ok: true as const,
    data: { status: 'ok' as const },
  }))

  app.get(
    '/readyz',
    {
      config,
      schema: {
        tags,
        response: {
          200: Ok(Type.Object({ database: Type.String(), redis: Type.String(), replica: Type.String() })),
          ...errors(503),
        },
      },
    },
    async () => {
      try {
        await storage.ping()
      } catch {
        throw new AppError('UNAVAILABLE', 'The database is unavailable')
      }
      if (redis) {
        try {
          await redis.ping()
        } catch {
          throw new AppError('UNAVAILABLE', 'Redis is unavailable')
        }
      }
      // The read replica never fails readiness: without it those reads go to the primary.
      return {
        ok: true as const,
        data: { database: storage.backend, redis: redis ? 'ok' : 'not configured', replica: replicaWord(storage.reads.state()) },
      }
    },
  )

  if (storage.reads.state().configured) replicaMetrics(app, storage.reads)

  const mayScrape = scrapeGuard(metricsToken, publicBaseUrl)
  app.get('/metrics', { config, schema: { tags, hide: true } }, async (request, reply) => {
    mayScrape(request)
    reply.type(app.metrics.contentType)
    return app.metrics.metrics()
  })

  app.get('/v1/openapi.json', { config, schema: { tags, hide: true } }, async () => app.swagger())
}
